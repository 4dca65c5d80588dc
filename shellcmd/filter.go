package shellcmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/paigasus/helikon"
)

// Filter is an allow list and a deny list of programs for shell commands.
//
// A pattern is a program name, optionally followed by leading arguments:
// "rm" matches every command whose program is rm (/bin/rm, ./rm, \rm and
// "r"'m' included), "git push" matches git commands whose first argument is
// push, after git's own global options (git -C . push; see the package
// documentation for git's aliases). This is the matching of the core's
// Bash(...) permission rules.
//
// Check refuses a command when any command it runs matches a Deny pattern,
// or, when Allow is not empty, when some command it runs matches no Allow
// pattern. When the analysis is unresolved, a non-empty Allow or Deny list
// refuses the command: the filter fails closed. A word computed at run time
// (git $sub) counts as matching a deny pattern's argument and as not
// matching an allow pattern's.
//
// The zero Filter allows everything.
type Filter struct {
	// Allow, when not empty, lists the only commands that may run.
	Allow []string
	// Deny lists commands that may not run. It wins over Allow.
	Deny []string
	// Options configures the analysis.
	Options Options
}

// ErrInvalidPattern is returned (wrapped) by Validate and Check for an empty
// pattern.
var ErrInvalidPattern = errors.New("invalid command pattern")

// Validate reports the first invalid pattern.
func (p *Filter) Validate() error {
	for _, list := range []struct {
		name string
		pats []string
	}{{"allow", p.Allow}, {"deny", p.Deny}} {
		for _, pat := range list.pats {
			if len(strings.Fields(pat)) == 0 {
				return fmt.Errorf("%w: empty %s pattern; give a program name such as rm or git push", ErrInvalidPattern, list.name)
			}
		}
	}
	return nil
}

// Check analyses command and reports whether the filter lets it run. It
// returns nil, a *helikon.DeniedError whose reason names the program and the
// rule, or an error wrapping ErrInvalidPattern.
func (p *Filter) Check(command string) error {
	if len(p.Allow) == 0 && len(p.Deny) == 0 {
		return nil
	}
	return p.CheckAnalysis(p.Options.Analyze(command))
}

// CheckAnalysis is Check for a command already analysed. Commands added to
// an Analysis by hand are matched as written.
func (p *Filter) CheckAnalysis(a *Analysis) error {
	return p.CheckTargets(&helikon.Targets{Commands: a.Commands, Unresolved: a.Unresolved})
}

// CheckTargets is Check for the targets a tool reported for a command (see
// [Analysis.Targets]): it matches t.Commands and fails closed when
// t.Unresolved is set, whatever made it so.
func (p *Filter) CheckTargets(t *helikon.Targets) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if len(p.Allow) == 0 && len(p.Deny) == 0 {
		return nil
	}
	if t.Unresolved != "" {
		list := "deny"
		if len(p.Allow) > 0 {
			list = "allow"
		}
		return helikon.Denied("a command %s list is in force and %s", list, t.Unresolved)
	}
	for _, c := range t.Commands {
		for _, pat := range p.Deny {
			if c.DeniedBy(strings.Fields(pat)) {
				return helikon.Denied("the command runs %q, which the deny list forbids (pattern %q); do not run %s", strings.Join(c.Args, " "), pat, c.Program())
			}
		}
	}
	if len(p.Allow) == 0 {
		return nil
	}
	for _, c := range t.Commands {
		ok := false
		for _, pat := range p.Allow {
			if c.AllowedBy(strings.Fields(pat)) {
				ok = true
				break
			}
		}
		if !ok {
			return helikon.Denied("the command runs %q, which is not on the allow list (%s); use only allowed programs", strings.Join(c.Args, " "), strings.Join(p.Allow, ", "))
		}
	}
	return nil
}
