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
			return nil, nil, computedOptErr(prog, f)
		}
		t := f.text
		switch {
		case t == "--":
			return opts, append(operands, args[i+1:]...), nil
		case len(t) < 2 || t[0] != '-':
			if !s.permute {
				return opts, args[i:], nil
			}
			operands = append(operands, f)
		case strings.HasPrefix(t, "--"):
			var o opt
			if o, i, err = s.longOpt(prog, args, i); err != nil {
				return nil, nil, err
			}
			opts = append(opts, o)
		default:
			if opts, i, err = s.shortOpts(prog, args, i, opts); err != nil {
				return nil, nil, err
			}
		}
	}
	return opts, operands, nil
}

// longOpt reads the long option args[i]: --name, --name=value, or a name
// getopt_long takes for an unambiguous prefix of one; an option that
// requires a value and has none attached takes the next word. It returns
// the option and the index of the last word it read.
func (s optSpec) longOpt(prog string, args []field, i int) (opt, int, error) {
	t := args[i].text
	name, val, has := strings.Cut(t[2:], "=")
	kind, ok := s.long[name]
	if !ok {
		name, kind, ok = s.longPrefix(name)
	}
	if !ok {
		return opt{}, i, fmt.Errorf("%s has no option --%s that helikon knows", prog, strings.SplitN(t[2:], "=", 2)[0])
	}
	switch {
	case kind == argNone && has:
		return opt{}, i, fmt.Errorf("%s: option --%s takes no value", prog, name)
	case kind == argRequired && !has:
		return nextArg(prog, name, args, i)
	}
	return opt{name: name, val: val, has: has}, i, nil
}

// shortOpts reads the cluster of short options args[i] (-ab, -ovalue,
// -o value) onto opts. A letter that takes an argument ends the cluster:
// the rest of the word is its value or, when it requires one and the word
// ends, the next word. It returns the options and the index of the last
// word it read.
func (s optSpec) shortOpts(prog string, args []field, i int, opts []opt) ([]opt, int, error) {
	t := args[i].text
	for j := 1; j < len(t); j++ {
		c := t[j]
		k := strings.IndexByte(s.short, c)
		if k < 0 || c == ':' {
			return nil, i, fmt.Errorf("%s has no option -%c that helikon knows", prog, c)
		}
		optional := strings.HasPrefix(s.short[k+1:], "::")
		required := !optional && strings.HasPrefix(s.short[k+1:], ":")
		switch {
		case optional:
			o := opt{name: string(c)}
			if j+1 < len(t) {
				o.val, o.has = t[j+1:], true
			}
			return append(opts, o), i, nil
		case required && j+1 < len(t):
			return append(opts, opt{name: string(c), val: t[j+1:], has: true}), i, nil
		case required:
			o, i, err := nextArg(prog, string(c), args, i)
			if err != nil {
				return nil, i, err
			}
			return append(opts, o), i, nil
		default:
			opts = append(opts, opt{name: string(c)})
		}
	}
	return opts, i, nil
}

// nextArg takes the word after args[i] for the value of the option name. It
// fails with errMissing when there is none, and when the word is computed
// at run time and may split into several.
func nextArg(prog, name string, args []field, i int) (opt, int, error) {
	if i+1 >= len(args) {
		return opt{}, i, errMissing
	}
	i++
	if args[i].splits {
		return opt{}, i, computedOptErr(prog, args[i])
	}
	return opt{name: name, val: args[i].text, has: true, dynamic: args[i].dynamic}, i, nil
}

// computedOptErr is the error for an option word of prog computed at run
// time: it may expand to any options, or to none.
func computedOptErr(prog string, f field) error {
	return fmt.Errorf("cannot tell the options of %s: %s is computed at run time", prog, f.text)
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
