package ossandbox

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/proc"
)

// readableHere reports whether commands of b can read and execute p
// (clean, absolute, resolved): it lies beneath the root, a granted tree
// or a system directory, and not in a hidden location.
func (b *Backend) readableHere(p string) bool {
	if hiddenAt(p, b.hidden) != "" {
		return false
	}
	return beneath(p, b.root) || systemPath(p) || covered(p, b.readPaths)
}

// unreadable returns the error explaining why prog, started with env
// (its PATH) in dir, could not run: it, as resolved, or the interpreter
// of its #! line (one level, and env's program), is a file this process
// can see but commands cannot read. Nil when that is not why.
// Hand-written: the kernel's answer is a bare EACCES, and only the
// sandbox's own rules say which directory caused it.
func (b *Backend) unreadable(prog string, env []string, dir string) *NotReadableError {
	path := lookPath(prog, env, dir)
	for range 3 { // the program, its interpreter, env's program
		if path == "" {
			return nil
		}
		real, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil
		}
		fi, err := os.Stat(real)
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		if !b.readableHere(real) {
			d := filepath.Dir(real)
			return &NotReadableError{Program: prog, Path: real, Dir: d, Hidden: hiddenAt(real, b.hidden)}
		}
		path = interpreter(real, env, dir)
	}
	return nil
}

// interpreter returns the program that runs the script at p, from its #!
// line: the interpreter, or, for /usr/bin/env, the program env finds on
// PATH; "" for a file without one.
func interpreter(p string, env []string, dir string) string {
	f, err := os.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return ""
	}
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return ""
	}
	words := strings.Fields(rest)
	if len(words) == 0 {
		return ""
	}
	if filepath.Base(words[0]) == "env" && len(words) > 1 {
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
				return lookPath(w, env, dir)
			}
		}
		return ""
	}
	return words[0]
}

// lookPath finds prog as execve's caller would with env's PATH: a name
// with a slash is taken as it is (relative to dir); otherwise the first
// PATH directory holding a regular file of that name. "" when none does.
func lookPath(prog string, env []string, dir string) string {
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(dir, prog)
		}
		return filepath.Clean(prog)
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// deniedRe finds the paths a shell names when execution is refused: bash's
// "line 1: /p: Permission denied", dash's "1: exec: /p: Permission
// denied", and a script's "/p: /interp: bad interpreter: Permission
// denied".
var deniedRe = regexp.MustCompile(`(/[^:\n]*)(?:: bad interpreter)?: Permission denied`)

// explainDenied is what Run makes of a command's outcome: for a program
// vector that did not start (a start error, or exit 126 from the shell
// that sets its limits) because of where the program or its interpreter
// lies, a [NotReadableError]; for a command (a command line, or a program
// such as a shim that executes another) that exits 126 with a shell
// naming such a file on a captured standard error, a line naming
// the directory and the flag that grants it, added to the output (the
// command ran, so it is a result, not an error).
func (b *Backend) explainDenied(req *backend.Request, res *backend.Result, err error) (*backend.Result, error) {
	exit126 := res != nil && res.ExitCode != nil && *res.ExitCode == 126
	var se *proc.StartError
	if !exit126 && !errors.As(err, &se) {
		return res, err // the common case: nothing to explain
	}
	env := b.env(req, "") // its PATH, as the command had it
	if len(req.Argv) > 0 && (se != nil || (err == nil && exit126)) {
		if e := b.unreadable(req.Argv[0], env, b.root); e != nil {
			e.Err = err
			return nil, e
		}
	}
	if err != nil || !exit126 || req.Stderr != nil {
		return res, err
	}
	seen := map[string]bool{}
	for _, m := range deniedRe.FindAllSubmatch(res.Stderr, 8) {
		p := string(m[1])
		if seen[p] {
			continue
		}
		seen[p] = true
		if e := b.unreadable(p, env, b.root); e != nil {
			b.log.Debug("ossandbox: program in a directory commands cannot read", "path", e.Path, "dir", e.Dir)
			res.Stderr = append(res.Stderr, "helikon: "+e.Error()+"\n"...)
		}
	}
	return res, err
}
