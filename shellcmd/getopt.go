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
	// permute makes parse read options after operands too, as GNU getopt
	// does by default (su, runuser); operands are then all the
	// non-option words, and those after --.
	permute bool
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
	// dynamic reports that val is a separate word computed at run time
	// (a value attached to its option word is always static, or the
	// parse fails).
	dynamic bool
}

// parse splits args into options and the operands after them. It fails,
// with a reason, when an option is unknown or an option word is computed at
// run time (it may expand to any options, or to none).
func (s optSpec) parse(prog string, args []field) (opts []opt, rest []field, err error) {
	var operands []field
	for i := 0; i < len(args); i++ {
		f := args[i]
		if f.dynamic {
			return nil, nil, fmt.Errorf("cannot tell the options of %s: %s is computed at run time", prog, f.text)
		}
		t := f.text
		if t == "--" {
			return opts, append(operands, args[i+1:]...), nil
		}
		if len(t) < 2 || t[0] != '-' {
			if s.permute {
				operands = append(operands, f)
				continue
			}
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
				opts = append(opts, opt{name: name, val: args[i].text, has: true, dynamic: args[i].dynamic})
				continue
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
					o.val, o.dynamic = args[i].text, args[i].dynamic
				}
				opts = append(opts, o)
				j = len(t)
			default:
				opts = append(opts, opt{name: string(c)})
			}
		}
	}
	return opts, operands, nil
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

// valueField returns the last value given to one of the options names, as
// a field.
func valueField(opts []opt, names ...string) (field, bool) {
	f, ok := field{}, false
	for _, o := range opts {
		for _, n := range names {
			if o.name == n {
				f, ok = field{text: o.val, dynamic: o.dynamic}, o.has
			}
		}
	}
	return f, ok
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
