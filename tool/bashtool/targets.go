package bashtool

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/internal/procdev"
	"github.com/paigasus/helikon/shellcmd"
)

// checkLists applies the tool's allow and deny lists to a call of in. It
// matches the targets the permission pipeline already computed for the call
// (tc.Targets) when there are any, so a command is parsed once per call; a
// call that did not come through the pipeline is analysed here.
func (t *Tool[C]) checkLists(tc *helikon.ToolContext[C], in Args) error {
	if len(t.lists.Allow) == 0 && len(t.lists.Deny) == 0 {
		return nil
	}
	tg := tc.Targets()
	if tg == nil {
		own := t.targetsOf(in)
		tg = &own
	}
	return t.lists.CheckTargets(tg)
}

// Targets reports what a call would run and write, for the permission
// pipeline: every simple command (wrappers and nested shells looked
// through), the targets of write redirections, and, in Unresolved, why some
// program cannot be known before the command runs. Relative names of
// programs and scripts are resolved against the sandbox root to find those
// under /proc and /dev (see package shellcmd).
//
// A write redirection is a write the shell makes itself, so it is reported
// twice: as a path target, for the guards and path rules, and as a command
// of its own whose program is ">" and whose argument is the target (> PATH,
// the argument computed at run time for > "$f"). A Bash(...) allow rule
// naming programs therefore does not cover writing a file through a
// redirection: under --allow 'Bash(git status)' in dont-ask mode, git
// status > canary is refused; Bash(>) allows redirections, Bash(> /abs/path)
// one target, and a deny rule Bash(>) refuses them all. Writes to
// /dev/null, /dev/zero, /dev/full, /dev/stdout, /dev/stderr, /dev/tty and
// /dev/fd/N, which create no file, are not reported as commands.
//
// A relative redirection target is reported resolved against the sandbox
// root and also against every directory the line changes into with a
// literal cd or pushd (a bare cd, ~ and $HOME being the home directory), so
// that "cd /etc && echo x > passwd" shows /etc/passwd to the guards. A
// leading ~ or $HOME in a target is the home directory.
//
// Every command is reported with the directories it may run in
// ([helikon.Command].Dirs: the sandbox root and the directories above) and,
// in DirUnknown, why it may run in another one (a cd the line cannot
// follow, env -C…; see [shellcmd.Analysis].DirUnknown), so that the
// policy-file guard judges "cd prep && cp x ../.claude/settings.json"
// relative to prep, and refuses a relative name that may lead to a policy
// file from a directory it cannot know.
//
// A write target computed at run time (> "$f") is reported as written, and
// its > command with the argument computed at run time, so an allow rule
// with a target does not cover it and a deny rule with one does; it does
// NOT make the targets unresolved, and neither does a cd to a computed
// directory. This is a decision, not an oversight: Unresolved makes every
// Bash(...) deny pattern match and no allow pattern match, so failing closed
// there would refuse "make > "$out"" under any deny rule of a program,
// while the guards it would serve are accident catchers that programs
// writing files themselves (cp, tee, sed -i, dd) get past anyway. Keeping a
// command inside its directory is the job of a containing backend. Invalid
// arguments are an error.
//
// The targets carry the decoded arguments, so that a checked call runs
// without decoding them again (see [functiontool.Tool.DecodeTargets]).
func (t *Tool[C]) Targets(args json.RawMessage) (helikon.Targets, error) {
	return t.DecodeTargets(args, t.targetsOf)
}

// targetsOf is Targets for decoded arguments.
func (t *Tool[C]) targetsOf(in Args) helikon.Targets {
	a := shellcmd.Options{Dir: t.root}.Analyze(in.Command)
	tg := a.Targets()
	home, _ := os.UserHomeDir()
	var bases []string
	if t.root != "" {
		bases = workDirs(a.Commands, t.root, home)
	}
	// Every command may run in any of them (a loop or a function runs a
	// command after a cd written later): the policy-file guard resolves
	// relative arguments against each, and fails closed on those that may
	// name a policy file when a cd cannot be followed.
	for i := range tg.Commands {
		tg.Commands[i].Dirs, tg.Commands[i].DirUnknown = bases, a.DirUnknown
	}
	write := func(p string, computed bool) {
		tg.Paths = append(tg.Paths, helikon.PathTarget{Path: p, Root: t.root, Access: helikon.AccessWrite, Computed: computed})
		if !procdev.Sink(p) {
			tg.Commands = append(tg.Commands, helikon.Command{Args: []string{">", p}, Dynamic: []bool{false, computed}})
		}
	}
	for i, w := range a.Writes {
		// A target computed at run time ($f) is kept as written and
		// reported anyway: resolved as if literal it still shows the guards
		// a protected prefix or a .git/.ssh/.env element it contains.
		p := expandHome(w, home)
		if filepath.IsAbs(p) {
			write(filepath.Clean(p), a.WriteComputed(i))
			continue
		}
		if t.root == "" {
			if tg.Unresolved == "" {
				tg.Unresolved = fmt.Sprintf("the command writes to %q and the directory it is relative to is unknown", w)
			}
			continue
		}
		for _, b := range bases {
			write(filepath.Join(b, p), a.WriteComputed(i))
		}
	}
	return tg
}

// expandHome replaces a leading ~, $HOME or ${HOME} of p by home.
func expandHome(p, home string) string {
	if home == "" {
		return p
	}
	for _, pre := range []string{"~", "$HOME", "${HOME}"} {
		if rest, ok := strings.CutPrefix(p, pre); ok && (rest == "" || rest[0] == '/') {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// maxWorkDirs bounds the directories relative writes are resolved against;
// a line with more cds than that is not one a person writes.
const maxWorkDirs = 16

// workDirs returns root and every directory a literal cd or pushd in cmds
// may change into, each cd resolved against the directories before it.
// Directories computed at run time and cd - are left out (see Targets).
func workDirs(cmds []helikon.Command, root, home string) []string {
	dirs := []string{root}
	add := func(d string) {
		d = filepath.Clean(d)
		if len(dirs) < maxWorkDirs && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	for _, c := range cmds {
		if p := c.Program(); p != "cd" && p != "pushd" {
			continue
		}
		i := 1
		for i < len(c.Args) && strings.HasPrefix(c.Args[i], "-") && c.Args[i] != "-" {
			if c.Args[i] == "--" {
				i++
				break
			}
			i++
		}
		if i >= len(c.Args) {
			if c.Program() == "cd" && home != "" {
				add(home)
			}
			continue
		}
		if i < len(c.Dynamic) && c.Dynamic[i] && expandHome(c.Args[i], home) == c.Args[i] {
			continue
		}
		d := expandHome(c.Args[i], home)
		if d == "-" || strings.HasPrefix(d, "+") {
			continue // the previous directory, or a pushd stack entry
		}
		if filepath.IsAbs(d) {
			add(d)
			continue
		}
		for _, b := range slices.Clone(dirs) {
			add(filepath.Join(b, d))
		}
	}
	return dirs
}
