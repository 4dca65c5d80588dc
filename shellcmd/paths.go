package shellcmd

import (
	"fmt"
	"path"
	"strings"
)

// Files named by path whose contents are what runs: a program given by
// path (/proc/self/exe, ./run), a shell's script operand, --rcfile and
// --init-file, BASH_ENV and ENV, a shell's < input, and the directories of
// PATH. Under /proc and /dev such a name reaches a process's own files
// (/proc/self/exe is whatever program opens it: the shell in a sandbox,
// the tool's own process on a direct exec path) and descriptors
// (/dev/stdin, /dev/fd/3, /proc/self/fd/0, /proc/thread-self/root/dev/stdin),
// whose contents the line supplies in forms the analysis does not read as
// commands. Such a name is recognised by where it leads, not by its
// spelling:
//
//   - an absolute name is cleaned lexically and refused under /proc or /dev
//     (a shell's /dev/null is accepted: it is empty; the names of the
//     standard input are analysed as the shell's input, as before);
//   - a name with .. after a directory name is refused, because the kernel
//     resolves a/.. through a symbolic link a (a/../dev/stdin may be
//     /dev/stdin);
//   - a relative name is resolved against the directory the line starts in
//     ([Options.Dir]) and against every absolute directory a cd or pushd in
//     the line names, and refused when the directory is not known: after a
//     cd or pushd to a directory computed at run time, ~, -, /, /proc or
//     /dev, or through .. after a directory name, after CDPATH is set, and
//     after a wrapper that changes directory (env -C, sudo -D, sudo -i,
//     su -, chroot, nsenter -w, unshare --wd, capsh --chroot, find -execdir). A
//     cd .. (or ../..) may reach any ancestor, / included: after one, a
//     relative name that leads into proc or dev from /, and any name after a
//     relative cd into proc or dev, is refused. This holds wherever the name
//     appears in the line: cd /dev; bash stdin and bash stdin; cd /dev run
//     in a loop are both refused.
//
// A symbolic link the line or an earlier command made (ln -s /proc/self/exe
// x) is not followed: like a script the command wrote, it is outside what a
// static analysis can see (see the package documentation).

// pathUse is a relative name whose directory is checked when the whole line
// has been seen (a cd later in the source may run earlier, in a loop).
type pathUse struct {
	name string
	what string // for messages: "the program", "the script of bash"
	// script accepts /dev/null, which a shell reads as an empty script.
	script bool
}

// maxCwdBases bounds the directories relative names are checked against.
const maxCwdBases = 16

// cwdState is what the analysis knows of the working directories the
// line's commands may run in.
type cwdState struct {
	// unknown, when not "", says why a relative name cannot be resolved.
	unknown string
	// bases are the absolute directories a cd names, besides Options.Dir;
	// relative cds descend from one of them or from Options.Dir.
	bases []string
	uses  []pathUse
	// up reports a cd that goes up (cd .., cd ../..): the directory may
	// then be any ancestor of a base, / included; intoSpecial a relative
	// cd whose first element is proc or dev, which from / leads there.
	up, intoSpecial bool
}

// underSpecial reports whether the clean absolute name c is under /proc or
// /dev, where names reach a process's own files and descriptors.
func underSpecial(c string, script bool) bool {
	if script && c == "/dev/null" {
		return false
	}
	for _, d := range []string{"/proc", "/dev"} {
		if c == d || strings.HasPrefix(c, d+"/") {
			return true
		}
	}
	return false
}

// dotDotAfterName reports whether name holds a .. element after an element
// that names a directory, which may be a symbolic link.
func dotDotAfterName(name string) bool {
	named := false
	for _, e := range strings.Split(name, "/") {
		switch e {
		case "", ".":
		case "..":
			if named {
				return true
			}
		default:
			named = true
		}
	}
	return false
}

// pathRisk returns why the static name cannot be known to be outside /proc
// and /dev, or "" when it is known to be outside them (or, for a relative
// name, once checked against the working directories in finishPaths).
func (a *analyzer) pathRisk(name, what string, script bool) string {
	if dotDotAfterName(name) {
		return fmt.Sprintf("%s %s holds .. after a directory name, which the kernel resolves through symbolic links, so where it leads is not known; write the path without ..", what, name)
	}
	if strings.HasPrefix(name, "/") {
		if underSpecial(path.Clean(name), script) {
			return fmt.Sprintf("%s %s is under /proc or /dev, where a name reaches a process's own program or descriptors, whose contents are not known; name a regular file", what, name)
		}
		return ""
	}
	a.cwd.uses = append(a.cwd.uses, pathUse{name: name, what: what, script: script})
	return ""
}

// checkProgramPath refuses a program named by a path that may lead under
// /proc or /dev.
func (a *analyzer) checkProgramPath(name string) {
	if !strings.Contains(name, "/") {
		return // found through PATH, which searchPath checks
	}
	if r := a.pathRisk(name, "the program", false); r != "" {
		a.unresolved("%s", r)
	}
}

// cwdChanged records that a command may run in a directory the analysis
// does not know.
func (a *analyzer) cwdChanged(why string) {
	if a.cwd.unknown == "" {
		a.cwd.unknown = why
	}
}

// cd records the directory a cd or pushd changes into; args are its
// arguments. popd, and pushd without a directory or with +N or -N, return
// to a directory the stack holds, which was the directory before or one a
// pushd named, so they add none. A cd without a static directory (cd, cd
// ~, cd -, which is OLDPWD, cd "$d") makes the directory unknown.
func (a *analyzer) cd(prog string, args []field) {
	i := 0
	for i < len(args) && !args[i].dynamic && strings.HasPrefix(args[i].text, "-") && len(args[i].text) > 1 {
		if args[i].text == "--" {
			i++
			break
		}
		i++
	}
	stack := i >= len(args) || !args[i].dynamic && len(args[i].text) > 1 && strings.IndexByte("+-", args[i].text[0]) >= 0 && isFD(args[i].text[1:])
	if prog == "popd" || prog == "pushd" && stack {
		return
	}
	if i >= len(args) {
		a.cwdChanged(prog + " changes to the home directory")
		return
	}
	d := args[i]
	switch {
	case d.dynamic || d.text == "-" || strings.HasPrefix(d.text, "+") || strings.HasPrefix(d.text, "~"):
		a.cwdChanged(fmt.Sprintf("%s %s changes to a directory that is not known statically", prog, d.text))
	case onlyUp(d.text):
		a.cwd.up = true
	case strings.Contains("/"+d.text+"/", "/../"):
		a.cwdChanged(fmt.Sprintf("%s %s goes up through .. after a directory name, which the kernel resolves through symbolic links", prog, d.text))
	case strings.HasPrefix(d.text, "/"):
		c := path.Clean(d.text)
		if c == "/" || underSpecial(c, false) {
			a.cwdChanged(fmt.Sprintf("%s %s changes to /, or under /proc or /dev", prog, d.text))
			return
		}
		if len(a.cwd.bases) >= maxCwdBases {
			a.cwdChanged(fmt.Sprintf("the line changes directory more than %d times", maxCwdBases))
			return
		}
		a.cwd.bases = append(a.cwd.bases, c)
	case a.dir == "/":
		a.cwdChanged(fmt.Sprintf("%s %s descends from /, the directory the line starts in", prog, d.text))
	default:
		// A relative directory without .. descends from a known one.
		first, _, _ := strings.Cut(path.Clean(d.text), "/")
		a.cwd.intoSpecial = a.cwd.intoSpecial || first == "proc" || first == "dev"
	}
}

// onlyUp reports whether the relative name d holds .. elements and nothing
// else but . and empty ones (.., ../.., ./../).
func onlyUp(d string) bool {
	up := false
	for _, e := range strings.Split(d, "/") {
		switch e {
		case "..":
			up = true
		case "", ".":
		default:
			return false
		}
	}
	return up && !strings.HasPrefix(d, "/")
}

// upRisk returns why the relative name may lead under /proc or /dev from
// an ancestor of the directories known, /, or "".
func (a *analyzer) upRisk(u pathUse) string {
	if a.cwd.intoSpecial {
		return "the line goes up with cd .. and down into a directory named proc or dev"
	}
	r := path.Clean(u.name)
	for strings.HasPrefix(r, "../") {
		r = r[3:]
	}
	if first, _, _ := strings.Cut(r, "/"); r == ".." || first == "proc" || first == "dev" {
		return "the line goes up with cd .., maybe to /, where " + u.name + " is under /proc or /dev"
	}
	return ""
}

// finishPaths checks the relative names against the working directories.
func (a *analyzer) finishPaths() {
	for _, u := range a.cwd.uses {
		if a.cwd.unknown != "" {
			a.unresolved("%s %s is relative to a directory that is not known (%s); use an absolute path", u.what, u.name, a.cwd.unknown)
			return
		}
		if why := a.upRisk(u); a.cwd.up && why != "" {
			a.unresolved("%s %s is relative to a directory that is not known (%s); use an absolute path", u.what, u.name, why)
			return
		}
		bases := a.cwd.bases
		if a.dir != "" {
			bases = append([]string{a.dir}, bases...)
		} else if strings.HasPrefix(u.name, "..") {
			a.unresolved("%s %s goes up from the directory the line starts in, which is not known; use an absolute path", u.what, u.name)
			return
		}
		for _, b := range bases {
			if c := path.Clean(b + "/" + u.name); underSpecial(c, u.script) {
				a.unresolved("%s %s leads to %s, under /proc or /dev, where a name reaches a process's own program or descriptors; name a regular file", u.what, u.name, c)
				return
			}
		}
	}
}

// searchPath checks a value assigned to PATH: each directory must be known
// to be outside /proc and /dev (PATH=/proc/self exe runs the shell itself).
// The old value ($PATH) is accepted, a ~ or $HOME element when the line does
// not set HOME (see Analyze), and relative elements are checked like
// relative names.
func (a *analyzer) searchPath(value string, dynamic bool) {
	for _, e := range strings.Split(value, ":") {
		home := strings.TrimPrefix(strings.TrimPrefix(e, "${HOME}"), "$HOME")
		switch {
		case e == "$PATH" || e == "${PATH}":
		case home != e && (home == "" || home[0] == '/') && !strings.ContainsAny(home, "$`"):
			a.pathTilde = true // $HOME/bin, like ~/bin
		case strings.ContainsAny(e, "$`") || dynamic && strings.ContainsAny(e, "*?[]"):
			a.unresolved("PATH=%s holds a directory computed at run time, which decides the program a name runs; write the directories literally", value)
			return
		case e == "" || e == ".":
			a.pathRisk(".", "the PATH directory", false)
		case e == "~" || strings.HasPrefix(e, "~/"):
			a.pathTilde = true
		case strings.HasPrefix(e, "~"):
			a.unresolved("PATH=%s holds %s, another user's home directory; write the directories literally", value, e)
			return
		default:
			if r := a.pathRisk(e, "the PATH directory", false); r != "" {
				a.unresolved("%s", r)
				return
			}
		}
	}
}
