package bashtool

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/shellcmd"
)

// commandPolicy is the tool's allow and deny lists, checked with the same
// analysis that reports the tool's targets.
type commandPolicy struct {
	p shellcmd.Policy
}

func newCommandPolicy(allow, deny []string) (*commandPolicy, error) {
	cp := &commandPolicy{p: shellcmd.Policy{Allow: allow, Deny: deny}}
	if err := cp.p.Validate(); err != nil {
		return nil, err
	}
	return cp, nil
}

// check returns nil when the lists let command run, and a
// *helikon.DeniedError that says why when they do not.
func (cp *commandPolicy) check(command string) error {
	return cp.p.Check(command)
}

// Targets reports what a call would run and write, for the permission
// pipeline: every simple command (wrappers and nested shells looked
// through), the targets of write redirections resolved against the sandbox
// root, and, in Unresolved, why some program cannot be known before the
// command runs. Write targets computed at run time (> "$f") are reported as
// written; they do not make the targets unresolved, so a Bash(program) rule
// still matches such a command by its programs. Invalid arguments are an
// error.
func (t *Tool[C]) Targets(args json.RawMessage) (helikon.Targets, error) {
	in, err := t.Decode(args)
	if err != nil {
		return helikon.Targets{}, err
	}
	a := shellcmd.Analyze(in.Command)
	tg := a.Targets()
	for _, w := range a.Writes {
		// A target computed at run time ($f, ~/x) is kept as written and
		// reported anyway: resolved as if literal it still shows the guards
		// a protected prefix or a .git/.ssh/.env element it contains.
		p := w
		if p == "~" || strings.HasPrefix(p, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(home, strings.TrimPrefix(p[1:], "/"))
			}
		}
		if !filepath.IsAbs(p) {
			if t.root == "" {
				if tg.Unresolved == "" {
					tg.Unresolved = fmt.Sprintf("the command writes to %q and the directory it is relative to is unknown", w)
				}
				continue
			}
			p = filepath.Join(t.root, p)
		}
		tg.Paths = append(tg.Paths, helikon.PathTarget{Path: filepath.Clean(p), Root: t.root, Access: helikon.AccessWrite})
	}
	return tg, nil
}
