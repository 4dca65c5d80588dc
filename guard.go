package helikon

import (
	"path"
	"strings"
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

// deviceSinks are the /dev entries ordinary commands write to.
var deviceSinks = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/stdout": true,
	"/dev/stderr": true, "/dev/tty": true,
}

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
		if !deviceSinks[abs] && !strings.HasPrefix(abs, "/dev/fd/") {
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
