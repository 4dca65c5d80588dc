package helikon

import (
	"path"
	"strings"

	"github.com/paigasus/helikon/internal/procdev"
)

// The built-in guards stop a few operations that are almost never intended
// and hard to undo. They are on unless [Permissions].NoGuards is set. A guard
// does not deny outright: it asks (so a human can still approve), which
// means it denies whenever there is no approval handler or the mode is
// DontAsk. It asks even under Bypass and even when an allow rule matches.
//
// The guards:
//
//   - remove-root-or-home: a recursive rm (forced or not) whose operand is /,
//     /*, ~, $HOME or the home directory.
//   - protected-system-path: a write to /, or beneath /etc, /usr, /bin, /sbin,
//     /lib, /lib64, /boot, /sys, /proc or /dev (except the device sinks
//     /dev/null, /dev/zero, /dev/full, /dev/stdout, /dev/stderr, /dev/tty and
//     /dev/fd/*).
//   - sensitive-path: a write into a .git or .ssh directory or to a .env*
//     file, anywhere.

// protectedPrefixes are the system trees a tool call must not write to without
// asking.
var protectedPrefixes = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/boot", "/sys", "/proc", "/dev"}

// guardHit returns the reason a guard asks about t, or "".
func guardHit(t *Targets, home string) string {
	for _, c := range t.Commands {
		if reason := rmGuard(c, home); reason != "" {
			return reason
		}
	}
	for _, p := range t.Paths {
		if p.Access != AccessWrite {
			continue
		}
		abs := path.Clean("/" + p.Path)
		if abs == "/" {
			return "guard protected-system-path: the call writes to / itself"
		}
		if !procdev.Sink(abs) {
			for _, pre := range protectedPrefixes {
				if abs == pre || strings.HasPrefix(abs, pre+"/") {
					return "guard protected-system-path: the call writes to " + abs + ", beneath the protected system path " + pre
				}
			}
		}
		for _, seg := range splitPath(abs) {
			ls := strings.ToLower(seg)
			if ls == ".git" || ls == ".ssh" || strings.HasPrefix(ls, ".env") {
				return "guard sensitive-path: the call writes to " + abs + ", inside a " + seg + " path"
			}
		}
	}
	return ""
}

// rmGuard reports a recursive rm of / or the home directory.
func rmGuard(c Command, home string) string {
	if c.Program() != "rm" {
		return ""
	}
	recursive, noPreserve := false, false
	var operands []string
	flags := true
	for _, a := range c.Args[1:] {
		switch {
		case flags && a == "--":
			flags = false
		case flags && (a == "--recursive"):
			recursive = true
		case flags && a == "--no-preserve-root":
			noPreserve = true
		case flags && strings.HasPrefix(a, "--"):
		case flags && strings.HasPrefix(a, "-") && len(a) > 1:
			if strings.ContainsAny(a[1:], "rR") {
				recursive = true
			}
		default:
			operands = append(operands, a)
		}
	}
	if !recursive {
		return ""
	}
	if noPreserve {
		return "guard remove-root-or-home: rm -r --no-preserve-root"
	}
	for _, op := range operands {
		if isRootOrHome(op, home) {
			return "guard remove-root-or-home: recursive rm of " + op
		}
	}
	return ""
}

func isRootOrHome(op, home string) bool {
	op = strings.TrimSuffix(op, "*")
	switch op {
	case "~", "~/", "$HOME", "$HOME/", "${HOME}", "${HOME}/", "/":
		return true
	}
	if strings.HasPrefix(op, "/") {
		c := path.Clean(op)
		return c == "/" || (home != "" && c == path.Clean(home))
	}
	return false
}

// ProtectedFile is a file no tool call may write (see [Permissions].Protected).
//
// What is seen: a write target equal to Path (a Write or Edit of it, a shell
// redirection to it, literal cd's followed), and any argument of a shell
// command, other than a command known to only read (cat, grep, ls…), that
// names Path or a directory between Dir and Path, absolute or relative to
// Dir, literally or as a glob (sed -i … .claude/settings*.json, mv .claude x),
// alone or after an = (--out=…, dd of=…).
// Names compare without case, as on a case-insensitive file system.
//
// What is not: a command that reaches the file under a name it computes at
// run time ($f, $(…)), after a cd the line cannot follow, through a link, or
// from a program that finds it itself (a script, find -exec, git checkout of
// a whole tree). This guard stops an agent from editing its policy in the
// ordinary ways; it is not containment (an OS sandbox that mounts the files
// read-only would be).
type ProtectedFile struct {
	// Path is the file's absolute, clean path.
	Path string
	// Dir is the directory shell commands run in (the sandbox root), against
	// which their relative arguments are resolved; "" means absolute
	// arguments only.
	Dir string
}

// readOnlyPrograms are commands that read the files they are given and write
// none of them (they may write elsewhere: to stdout, or a named output this
// list does not include, so sort -o and tee are absent).
var readOnlyPrograms = map[string]bool{
	"cat": true, "less": true, "more": true, "head": true, "tail": true, "grep": true, "egrep": true, "fgrep": true,
	"rg": true, "ls": true, "stat": true, "file": true, "wc": true, "diff": true, "cmp": true, "md5sum": true,
	"sha1sum": true, "sha256sum": true, "jq": true, "test": true, "[": true,
}

// protectedHit returns the reason t writes a protected file, or "".
func protectedHit(files []ProtectedFile, t *Targets) string {
	for _, f := range files {
		abs := strings.ToLower(path.Clean(f.Path))
		for _, p := range t.Paths {
			if p.Access == AccessWrite && strings.ToLower(path.Clean("/"+p.Path)) == abs {
				return "guard policy-file: the call writes to " + f.Path + ", a permission policy file; an agent may not change its own policy (edit the file yourself)"
			}
		}
		for _, c := range t.Commands {
			if len(c.Args) == 0 || readOnlyPrograms[c.Program()] {
				continue
			}
			for _, a := range c.Args[1:] {
				if namesProtected(a, f) {
					return "guard policy-file: " + c.Program() + " is given " + a + ", which names the permission policy file " + f.Path + "; an agent may not change its own policy (edit the file yourself)"
				}
			}
		}
	}
	return ""
}

// namesProtected reports whether the command argument arg names f.Path or a
// directory between f.Dir and it, literally or as a glob.
func namesProtected(arg string, f ProtectedFile) bool {
	// --file=.claude/settings.json, dd of=.claude/settings.json
	if k, v, ok := strings.Cut(arg, "="); ok && (namesProtected(k, f) || namesProtected(v, f)) {
		return true
	}
	return namesPath(strings.ToLower(arg), f)
}

// namesPath reports whether the lower-cased argument arg names f.Path or a
// directory between f.Dir and it.
func namesPath(arg string, f ProtectedFile) bool {
	target := strings.ToLower(path.Clean(f.Path))
	dir := strings.ToLower(path.Clean(f.Dir))
	if !path.IsAbs(arg) {
		if f.Dir == "" {
			return false
		}
		arg = dir + "/" + arg
	}
	arg = path.Clean(arg)
	inside := f.Dir != "" && strictlyUnder(target, dir)
	for p := target; p != "/" && p != "."; p = path.Dir(p) {
		if p != target && !strictlyUnder(p, dir) {
			return false // directories between Dir and the file only
		}
		if ok, err := path.Match(arg, p); ok || err != nil && arg == p {
			return true
		}
		if !inside {
			return false // the file itself only
		}
	}
	return false
}

// strictlyUnder reports whether clean path p lies beneath directory dir.
func strictlyUnder(p, dir string) bool {
	return p != dir && strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
