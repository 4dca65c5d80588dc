package helikon

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

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
// names Path or a directory between Dir and Path (for a file outside Dir,
// the file only), absolute or relative to the directories the command runs
// in ([Command].Dirs, else Dir), literally or as a glob (sed -i …
// .claude/settings*.json, mv .claude x), alone or after an = (--out=…, dd
// of=…). Names compare without case, as on a case-insensitive file system.
//
// Names compare by where they lead, not by how they are spelt: Path and Dir
// are also compared with their symbolic links resolved (resolved once per
// spelling and remembered, so a link made or moved above them later is not
// seen), and a target or argument whose last element could name the file or
// one of its directories has the links of its existing directories resolved
// when the call is checked (a pattern in one element of its directory is
// expanded for that; patterns in several elements are refused, as following
// them could take a walk of the whole file system). A root reached through
// a link (Dir or Path spelt through it, or a target spelt through it while
// the other is resolved) is therefore the same root.
//
// Fails closed: a relative argument of a command that may run in a
// directory the tool does not know ([Command].DirUnknown: after cd "$d",
// cd -, env -C), and the part after the last expansion of an argument or
// computed write target (~/…, $HOME/…, "$d"/settings.json), are refused when
// they could name the file from some directory, that is when the path they
// spell is a tail of Path's (or of a directory between Dir and Path).
//
// What is not: a command that reaches the file under a name whose last
// element is computed at run time ($f, $(…), x$y.json), through a link it
// or an earlier command made with a computed name, through a program's own
// change of directory other than cd, pushd and the wrappers the tool knows
// (tar -C, make -C), or from a program that finds it itself (a script,
// find -exec, git checkout of a whole tree, cp -r of a directory holding
// it). This guard stops an agent from editing its policy in the ordinary
// ways; it is not containment (an OS sandbox that mounts the files
// read-only would be).
type ProtectedFile struct {
	// Path is the file's absolute, clean path.
	Path string
	// Dir is the directory shell commands run in (the sandbox root), against
	// which their relative arguments are resolved when a command does not
	// name its own directories; "" means absolute arguments only.
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

// policyFileAdvice ends every refusal of the policy-file guard.
const policyFileAdvice = "; an agent may not change its own policy (edit the file yourself)"

// protectedHit returns the reason t writes a protected file, or "".
func protectedHit(files []ProtectedFile, t *Targets) string {
	for _, f := range files {
		forms := protectedForms(f)
		for _, p := range t.Paths {
			if p.Access != AccessWrite {
				continue
			}
			if namesAbs(path.Clean("/"+p.Path), forms, true) {
				return "guard policy-file: the call writes to " + f.Path + ", a permission policy file" + policyFileAdvice
			}
			if p.Computed && namesTail(computedTail(p.Path), forms) {
				return "guard policy-file: the call writes to " + p.Path + ", a name computed at run time that may lead to the permission policy file " + f.Path + policyFileAdvice
			}
		}
		for _, c := range t.Commands {
			if len(c.Args) == 0 || readOnlyPrograms[c.Program()] {
				continue
			}
			for _, a := range c.Args[1:] {
				if why := namesProtected(a, c, f, forms); why != "" {
					return "guard policy-file: " + c.Program() + " is given " + a + ", which " + why + " the permission policy file " + f.Path + policyFileAdvice
				}
			}
		}
	}
	return ""
}

// namesProtected returns how the command argument arg of c names f ("names",
// "may name"), or "" when it does not.
func namesProtected(arg string, c Command, f ProtectedFile, forms []protectedForm) string {
	// --file=.claude/settings.json, dd of=.claude/settings.json
	if k, v, ok := strings.Cut(arg, "="); ok {
		if why := namesProtected(k, c, f, forms); why != "" {
			return why
		}
		if why := namesProtected(v, c, f, forms); why != "" {
			return why
		}
	}
	if strings.ContainsAny(arg, "$`") || strings.HasPrefix(arg, "~") {
		if namesTail(computedTail(arg), forms) {
			return "after a part computed at run time, may name"
		}
	}
	if path.IsAbs(arg) {
		if namesAbs(path.Clean(arg), forms, false) {
			return "names"
		}
		return ""
	}
	dirs := c.Dirs
	if dirs == nil && f.Dir != "" {
		dirs = []string{f.Dir}
	}
	for _, d := range dirs {
		if namesAbs(path.Clean(d+"/"+arg), forms, false) {
			return "names"
		}
	}
	if c.DirUnknown != "" && namesTail(arg, forms) {
		return "is relative to a directory that is not known (" + c.DirUnknown + "; use an absolute path), so it may name"
	}
	return ""
}

// protectedForm is one spelling of a protected file: its path and the
// directory its enclosing directories are protected up to, lower-cased.
type protectedForm struct {
	target string
	dir    string // "" when the file is outside its Dir
}

// chain calls yield with the target, then each directory between it and
// dir, nearest first, until yield returns true; it reports whether one did.
func (pf protectedForm) chain(yield func(p string) bool) bool {
	for p := pf.target; p != "/" && p != "."; p = path.Dir(p) {
		if p != pf.target && (pf.dir == "" || !strictlyUnder(p, pf.dir)) {
			return false
		}
		if yield(p) {
			return true
		}
	}
	return false
}

// protectedForms returns the spellings f is compared under: as given and
// with the symbolic links of Path and Dir resolved.
func protectedForms(f ProtectedFile) []protectedForm {
	forms := make([]protectedForm, 0, 2)
	add := func(target, dir string) {
		pf := protectedForm{target: strings.ToLower(path.Clean(target))}
		if dir != "" {
			if d := strings.ToLower(path.Clean(dir)); strictlyUnder(pf.target, d) {
				pf.dir = d
			}
		}
		if !slices.Contains(forms, pf) {
			forms = append(forms, pf)
		}
	}
	add(f.Path, f.Dir)
	dir := f.Dir
	if dir != "" {
		dir = realDirs.get(dir)
	}
	add(realDirs.get(f.Path), dir)
	return forms
}

// namesAbs reports whether the clean absolute name p (a glob pattern unless
// exact) names one of forms' targets or protected directories, as spelt or,
// when its last element could name one, with the links of its existing
// directories resolved. With exact, p is a path, not a pattern, and only
// the targets count.
func namesAbs(name string, forms []protectedForm, exact bool) bool {
	p := strings.ToLower(name)
	match := func(p string) bool {
		for _, pf := range forms {
			if exact && p == pf.target {
				return true
			}
			if !exact && pf.chain(func(q string) bool { ok, err := path.Match(p, q); return ok || err != nil && p == q }) {
				return true
			}
		}
		return false
	}
	if match(p) {
		return true
	}
	base := path.Base(p)
	could := false
	for _, pf := range forms {
		could = could || pf.chain(func(q string) bool {
			if exact {
				return q == pf.target && base == path.Base(q)
			}
			ok, err := path.Match(base, path.Base(q))
			return ok || err != nil && base == path.Base(q)
		})
	}
	if !could || p == "/" {
		return false
	}
	// The file system is asked only now, for a name that could be the
	// file's under another spelling of its directory.
	parent := path.Dir(name) // as spelt: the file system may tell case
	parents := []string{parent}
	if !exact && hasGlob(parent) {
		// One pattern element costs one directory listing; more could
		// walk a whole file system on every call, so they fail closed.
		globs := 0
		for _, e := range strings.Split(parent, "/") {
			if hasGlob(e) {
				globs++
			}
		}
		if globs > 1 {
			return true
		}
		m, err := filepath.Glob(filepath.FromSlash(parent))
		if err != nil {
			return false
		}
		parents = m[:min(len(m), maxGlobParents)]
	}
	for _, d := range parents {
		d = filepath.ToSlash(d)
		if r := realPath(d); r != d && match(strings.ToLower(path.Join(r, base))) {
			return true
		}
	}
	return false
}

// maxGlobParents bounds the directories a pattern element in an argument's
// directory part is expanded to when the argument is checked through links
// (one listing of one directory): a line does not mean more of them.
const maxGlobParents = 64

// hasGlob reports whether p holds a pattern character of [path.Match].
func hasGlob(p string) bool { return strings.ContainsAny(p, "*?[\\") }

// computedTail returns the part of a name after its last run-time expansion
// and the / that follows it ("$HOME/.config/x" gives ".config/x", "~/a"
// gives "a"), or "" when nothing static follows one.
func computedTail(name string) string {
	i := strings.LastIndexAny(name, "$`)}")
	if i < 0 {
		if !strings.HasPrefix(name, "~") {
			return ""
		}
		i = 0
	}
	_, tail, ok := strings.Cut(name[i:], "/")
	if !ok {
		return ""
	}
	return tail
}

// namesTail reports whether the relative name rel, taken against a
// directory that is not known, may name one of forms' targets or protected
// directories: whether, its leading .. elements dropped (a directory deep
// enough absorbs them), its elements match the last ones of such a path.
func namesTail(rel string, forms []protectedForm) bool {
	rel = path.Clean(strings.ToLower(strings.TrimLeft(rel, "/")))
	for rel == ".." || strings.HasPrefix(rel, "../") {
		rel = strings.TrimPrefix(strings.TrimPrefix(rel, ".."), "/")
	}
	if rel == "" || rel == "." {
		return false
	}
	want := strings.Split(rel, "/")
	for _, pf := range forms {
		if pf.chain(func(q string) bool {
			have := strings.Split(strings.TrimPrefix(q, "/"), "/")
			if len(have) < len(want) {
				return false
			}
			have = have[len(have)-len(want):]
			for i := range want {
				if ok, err := path.Match(want[i], have[i]); !ok && (err == nil || want[i] != have[i]) {
					return false
				}
			}
			return true
		}) {
			return true
		}
	}
	return false
}

// realPath returns the clean absolute path p with the symbolic links of its
// longest existing leading part resolved; the rest is kept as written (a
// file that does not exist yet still has one name).
func realPath(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for d := p; ; d = filepath.Dir(d) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.ToSlash(filepath.Join(append([]string{real}, rest...)...))
		}
		if filepath.Dir(d) == d {
			return filepath.ToSlash(p)
		}
		rest = append([]string{filepath.Base(d)}, rest...)
	}
}

// realDirs remembers the resolved spelling of protected files and their
// directories: a pipeline checks the same few on every call, and resolving
// them costs a system call per path element.
var realDirs = &realCache{m: map[string]string{}}

// maxRealCache bounds realDirs. A process that checks calls for more
// protected paths than that (many roots) resolves the others on each call.
const maxRealCache = 1024

type realCache struct {
	mu sync.Mutex
	m  map[string]string
}

// get returns realPath(p), remembered.
func (c *realCache) get(p string) string {
	c.mu.Lock()
	r, ok := c.m[p]
	c.mu.Unlock()
	if ok {
		return r
	}
	r = realPath(p)
	c.mu.Lock()
	if len(c.m) < maxRealCache {
		c.m[p] = r
	}
	c.mu.Unlock()
	return r
}

// strictlyUnder reports whether clean path p lies beneath directory dir.
func strictlyUnder(p, dir string) bool {
	return p != dir && strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
