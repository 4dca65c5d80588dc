package shellcmd

import (
	"errors"
	"fmt"
	"strings"
)

// optSpec describes the options of a wrapper program the way getopt_long
// sees them. Every wrapper handled here stops at its first operand (getopt's
// "+" mode), which is what makes the program it runs findable.
//
// This is hand-written because no Go library models other programs' option
// grammars; each spec follows the program's manual (GNU coreutils, sudo,
// findutils, util-linux).
type optSpec struct {
	// short lists the short options; a letter followed by ':' takes an
	// argument, by '::' an optional argument that must be attached.
	short string
	// long maps long option names to argNone, argRequired or argOptional.
	long map[string]int
}

const (
	argNone = iota
	argRequired
	argOptional
)

type opt struct {
	name string // the short letter or the long name
	val  string
	has  bool // val was given
}

// parse splits args into options and the operands after them. It fails,
// with a reason, when an option is unknown or an option word is computed at
// run time (it may expand to any options, or to none).
func (s optSpec) parse(prog string, args []field) (opts []opt, rest []field, err error) {
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dynamic {
			return nil, nil, fmt.Errorf("cannot tell the options of %s: %s is computed at run time", prog, f.text)
		}
		t := f.text
		if t == "--" {
			return opts, args[i+1:], nil
		}
		if len(t) < 2 || t[0] != '-' {
			return opts, args[i:], nil
		}
		if strings.HasPrefix(t, "--") {
			name, val, has := strings.Cut(t[2:], "=")
			kind, ok := s.long[name]
			if !ok {
				// getopt_long accepts unambiguous prefixes.
				name, kind, ok = s.longPrefix(name)
			}
			if !ok {
				return nil, nil, fmt.Errorf("%s has no option --%s that this policy knows", prog, strings.SplitN(t[2:], "=", 2)[0])
			}
			switch {
			case kind == argNone && has:
				return nil, nil, fmt.Errorf("%s: option --%s takes no value", prog, name)
			case kind == argRequired && !has:
				if i+1 >= len(args) {
					return nil, nil, errMissing
				}
				i++
				if args[i].splits {
					return nil, nil, fmt.Errorf("cannot tell the options of %s: %s is computed at run time", prog, args[i].text)
				}
				val, has = args[i].text, true
			}
			opts = append(opts, opt{name: name, val: val, has: has})
			continue
		}
		for j := 1; j < len(t); j++ {
			c := t[j]
			k := strings.IndexByte(s.short, c)
			if k < 0 || c == ':' {
				return nil, nil, fmt.Errorf("%s has no option -%c that this policy knows", prog, c)
			}
			optional := strings.HasPrefix(s.short[k+1:], "::")
			required := !optional && strings.HasPrefix(s.short[k+1:], ":")
			switch {
			case optional:
				o := opt{name: string(c)}
				if j+1 < len(t) {
					o.val, o.has = t[j+1:], true
				}
				opts = append(opts, o)
				j = len(t)
			case required:
				o := opt{name: string(c), has: true}
				if j+1 < len(t) {
					o.val = t[j+1:]
				} else {
					if i+1 >= len(args) {
						return nil, nil, errMissing
					}
					i++
					if args[i].splits {
						return nil, nil, fmt.Errorf("cannot tell the options of %s: %s is computed at run time", prog, args[i].text)
					}
					o.val = args[i].text
				}
				opts = append(opts, o)
				j = len(t)
			default:
				opts = append(opts, opt{name: string(c)})
			}
		}
	}
	return opts, nil, nil
}

func (s optSpec) longPrefix(p string) (string, int, bool) {
	found, kind, n := "", 0, 0
	for name, k := range s.long {
		if strings.HasPrefix(name, p) {
			found, kind, n = name, k, n+1
		}
	}
	return found, kind, n == 1 && p != ""
}

// errMissing reports an option whose argument is missing: the program exits
// with a usage error and runs nothing, unless more arguments come at run
// time (xargs).
var errMissing = errors.New("an option argument is missing")

func has(opts []opt, names ...string) bool {
	for _, o := range opts {
		for _, n := range names {
			if o.name == n {
				return true
			}
		}
	}
	return false
}

func value(opts []opt, names ...string) (string, bool) {
	v, ok := "", false
	for _, o := range opts {
		for _, n := range names {
			if o.name == n {
				v, ok = o.val, o.has
			}
		}
	}
	return v, ok
}

func longs(spec string) map[string]int {
	m := map[string]int{}
	for _, w := range strings.Fields(spec) {
		switch {
		case strings.HasSuffix(w, "::"):
			m[strings.TrimSuffix(w, "::")] = argOptional
		case strings.HasSuffix(w, ":"):
			m[strings.TrimSuffix(w, ":")] = argRequired
		default:
			m[w] = argNone
		}
	}
	return m
}
