package proc

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unicode/utf8"

	"github.com/paigasus/helikon/internal/procdev"
)

// A literal command is one simple command made only of literal words
// naming a program (ls -la, git status, go test ./...). A backend may
// execute it without bash, exactly as `bash -c` would execute it, which
// saves bash's start-up: the same file found the same way in the command's
// PATH, the same argument vector (argv[0] as written), the environment bash
// exports ([Exported], learnt once per environment by asking bash itself)
// and the limits set at exec ([Spec].Limits, or a backend's own stop at
// exec). [Literal] recognises such a command and resolves its program;
// whenever exactness cannot be promised it says no and the command runs
// through bash: anything that is not a literal simple command; a shell
// builtin, keyword or word that bash would expand; a program that is not
// found, not executable or not a binary bash would exec; a program whose
// path passes through /proc or /dev by any spelling or link (/proc/self/exe
// is bash when bash runs it, the calling program here); a set-ID program
// or one with file capabilities (a traced exec does not grant them); an
// environment that changes how bash starts (BASH_ENV, SHELLOPTS, ...). The
// host backend's and the OS sandbox's differential tests compare the two
// paths on real commands.

// Literal returns the argument vector and the program file of command when
// it is a literal command that bash, started in dir with env, would run by
// executing that file; ok is false otherwise.
func Literal(command string, env []string, dir string) (argv []string, path string, ok bool) {
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if unsafeEnv(name) {
			return nil, "", false
		}
	}
	words, ok := literalWords(command)
	if !ok {
		return nil, "", false
	}
	name, ok := program(words)
	if !ok {
		return nil, "", false
	}
	path, ok = lookPath(name, env, dir)
	if !ok || (noArgBuiltins[name] && !systemProgram(path)) {
		return nil, "", false
	}
	if through, exists := procdev.Through(path, dir); through || !exists {
		return nil, "", false // /proc/self/exe is bash under bash, the caller here
	}
	if _, isBash, err := Shell(); err != nil || !isBash {
		return nil, "", false
	}
	return words, path, true
}

// keywords are bash's reserved words: such a first word is never a program.
var keywords = map[string]bool{
	"if": true, "then": true, "else": true, "elif": true, "fi": true, "case": true, "esac": true,
	"for": true, "select": true, "while": true, "until": true, "do": true, "done": true, "in": true,
	"function": true, "time": true, "{": true, "}": true, "!": true, "[[": true, "]]": true, "coproc": true,
}

// builtins are bash 5's builtins (compgen -b); the running bash's own list
// is added to it (see shellBuiltins).
var builtins = map[string]bool{
	".": true, ":": true, "[": true, "alias": true, "bg": true, "bind": true, "break": true,
	"builtin": true, "caller": true, "cd": true, "command": true, "compgen": true, "complete": true,
	"compopt": true, "continue": true, "declare": true, "dirs": true, "disown": true, "echo": true,
	"enable": true, "eval": true, "exec": true, "exit": true, "export": true, "false": true, "fc": true,
	"fg": true, "getopts": true, "hash": true, "help": true, "history": true, "jobs": true, "kill": true,
	"let": true, "local": true, "logout": true, "mapfile": true, "popd": true, "printf": true,
	"pushd": true, "pwd": true, "read": true, "readarray": true, "readonly": true, "return": true,
	"set": true, "shift": true, "shopt": true, "source": true, "suspend": true, "test": true,
	"times": true, "trap": true, "true": true, "type": true, "typeset": true, "ulimit": true,
	"umask": true, "unalias": true, "unset": true, "wait": true,
}

// noArgBuiltins are builtins that, called without arguments, do exactly
// what the system's program of the same name does: nothing, and exit 0 or
// 1. `true` alone runs /usr/bin/true directly (see systemProgram).
var noArgBuiltins = map[string]bool{"true": true, "false": true}

// literalWords returns the words of command when it is a single simple
// command made only of literal words: unquoted words of characters that no
// bash expansion touches, single-quoted strings, and double-quoted strings
// without $, `, \ or !, separated by blanks. Anything else (operators,
// redirections, expansions, globs, tildes, braces, comments, escapes,
// newlines, control characters, a first word that may be an assignment,
// invalid UTF-8) returns ok false.
func literalWords(command string) (words []string, ok bool) {
	if !utf8.ValidString(command) {
		return nil, false // bash takes any bytes; keep to what a parser can check
	}
	i := 0
	for {
		for i < len(command) && (command[i] == ' ' || command[i] == '\t') {
			i++
		}
		if i == len(command) {
			// A first word with = may be an assignment, not a program.
			return words, len(words) > 0 && !strings.Contains(words[0], "=")
		}
		var w []byte
		for i < len(command) && command[i] != ' ' && command[i] != '\t' {
			c := command[i]
			switch {
			case c == '\'' || c == '"':
				end := strings.IndexByte(command[i+1:], c)
				if end < 0 {
					return nil, false
				}
				s := command[i+1 : i+1+end]
				for j := 0; j < len(s); j++ {
					if s[j] < 0x20 || s[j] == 0x7f || (c == '"' && strings.IndexByte("$`\\!", s[j]) >= 0) {
						return nil, false
					}
				}
				w = append(w, s...)
				i += end + 2
			case plainByte(c):
				w = append(w, c)
				i++
			default:
				return nil, false
			}
		}
		words = append(words, string(w))
	}
}

// plainByte reports whether c stands for itself in an unquoted bash word
// wherever it appears in it.
func plainByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("-_./,:@%+^=", c) >= 0
}

// program returns the name a literal command's first word runs, or ok false
// when it is not one bash would run as a program from a file.
func program(words []string) (string, bool) {
	name := words[0]
	if name == "" || keywords[name] || strings.HasPrefix(name, "-") {
		return "", false
	}
	shell, ok := shellBuiltins()
	if !ok {
		return "", false
	}
	if builtins[name] || shell[name] {
		return name, noArgBuiltins[name] && len(words) == 1
	}
	return name, true
}

// unsafeEnv reports whether a variable named name changes how bash starts
// or finds a program, so that the direct path cannot promise bash's
// behaviour: startup files, options, functions, the command search.
func unsafeEnv(name string) bool {
	if strings.HasPrefix(name, "BASH") {
		return true // BASH_ENV, BASHOPTS, BASH_FUNC_*, BASH_COMPAT, BASH_XTRACEFD, ...
	}
	switch name {
	case "ENV", "SHELLOPTS", "POSIXLY_CORRECT", "PS4", "EXECIGNORE", "IFS", "GLOBIGNORE", "CDPATH":
		return true
	}
	return false
}

// lookPath finds name as bash finds a command in the PATH of env, or
// returns ok false when bash might find something else or nothing: every
// PATH element up to the match must be absolute and plain, and the first
// file of that name found must be a regular, executable file.
func lookPath(name string, env []string, dir string) (string, bool) {
	if strings.Contains(name, "/") {
		// Executed as written, relative to the working directory.
		full := name
		if !strings.HasPrefix(full, "/") {
			full = dir + "/" + name
		}
		var st syscall.Stat_t
		if syscall.Stat(full, &st) != nil || !plainExecutable(full, &st) {
			return "", false
		}
		return name, true
	}
	var path string
	found := false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path, found = v, true
		}
	}
	if !found {
		return "", false // bash would search its own default PATH
	}
	for dir := range strings.SplitSeq(path, ":") {
		if !strings.HasPrefix(dir, "/") {
			return "", false // "", ".", relative and ~ elements depend on the shell
		}
		full := dir + "/" + name // as bash joins them, even after a trailing slash
		var st syscall.Stat_t
		if err := syscall.Stat(full, &st); err != nil {
			if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) {
				continue
			}
			return "", false
		}
		if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			continue // bash skips directories
		}
		if !plainExecutable(full, &st) {
			return "", false // bash may keep searching, or gains privileges; let it
		}
		return full, true
	}
	return "", false
}

// plainExecutable reports whether the file at path, whose status is st, is
// a regular file this process may execute and that gains no privileges when
// executed: no set-user-ID or set-group-ID bit, no file capabilities. The
// kernel does not grant those to a traced program (and the direct path
// traces the program until its exec), so such a program would not behave as
// under bash.
func plainExecutable(path string, st *syscall.Stat_t) bool {
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Mode&0o111 == 0 || st.Mode&(syscall.S_ISUID|syscall.S_ISGID) != 0 {
		return false
	}
	if syscall.Access(path, 1 /* X_OK */) != nil {
		return false
	}
	_, err := syscall.Getxattr(path, "security.capability", nil)
	return errors.Is(err, syscall.ENODATA) || errors.Is(err, syscall.ENOTSUP)
}

// systemProgram reports whether path is the system's own copy of a program
// (a root-owned file in /usr/bin or /bin that only root can change), which
// is what noArgBuiltins stand in for.
func systemProgram(path string) bool {
	if v, ok := systemPrograms.Load(path); ok {
		return v.(bool)
	}
	ok := isSystemProgram(path)
	systemPrograms.Store(path, ok)
	return ok
}

// systemPrograms caches systemProgram: the answer for a root-owned file in
// a root-owned system directory does not change under a running program
// but through root.
var systemPrograms sync.Map

func isSystemProgram(path string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil || (filepath.Dir(real) != "/usr/bin" && filepath.Dir(real) != "/bin") {
		return false
	}
	var st syscall.Stat_t
	return syscall.Stat(real, &st) == nil && st.Uid == 0 && st.Mode&0o022 == 0
}

var (
	shellInfoOnce sync.Once
	shellBuiltin  map[string]bool
)

// shellBuiltins returns the builtins and keywords of the installed bash,
// asked once; ok is false when it cannot be asked (every command then takes
// the bash path).
func shellBuiltins() (names map[string]bool, ok bool) {
	shellInfoOnce.Do(func() {
		sh, isBash, err := Shell()
		if err != nil || !isBash {
			return
		}
		cmd := exec.Command(sh, "-c", "compgen -b; compgen -k; enable -a")
		cmd.Env = []string{}
		out, err := cmd.Output()
		if err != nil {
			return
		}
		m := map[string]bool{}
		for _, f := range strings.Fields(string(out)) {
			m[f] = true
		}
		shellBuiltin = m
	})
	return shellBuiltin, shellBuiltin != nil
}

// Exported is the environment bash exports to a program it executes, given
// the environment it was started with.
type Exported struct {
	env []string // as bash exports it
	us  int      // index of _ in env, which bash sets to the program's path
}

// For returns the environment bash would give the program at path.
func (e *Exported) For(path string) []string {
	env := append([]string(nil), e.env...)
	env[e.us] = "_=" + path
	return env
}

// ExportProbe returns the command whose output [ParseExported] reads: bash
// runs cat (an absolute path, returned too) on /proc/self/environ and
// /proc/self/stat, which shows the environment bash gave it, byte for byte
// and in order, and its parent. ok is false when no usable cat is found.
func ExportProbe() (command, cat string, ok bool) {
	cat, err := exec.LookPath("cat")
	if err != nil || !filepath.IsAbs(cat) || strings.ContainsAny(cat, " \t\n'\"$`\\*?[]{}~#;&|<>()!") {
		return "", "", false
	}
	return cat + " /proc/self/environ /proc/self/stat", cat, true
}

// ParseExported reads the output of [ExportProbe]'s command. ppid is the
// parent the probe's cat must have had: the parent of bash, which holds
// only when bash executed the command in place, as a direct start does
// (otherwise its exit reporting differs). ok is false for anything else.
func ParseExported(out []byte, cat string, ppid int) (*Exported, bool) {
	nul := bytes.LastIndexByte(out, 0)
	if nul < 0 {
		return nil, false
	}
	f, ok := StatFields(out[nul+1:])
	if !ok || len(f) < 2 || f[1] != strconv.Itoa(ppid) {
		return nil, false
	}
	e := &Exported{us: -1}
	for i, kv := range strings.Split(string(out[:nul]), "\x00") {
		if kv == "_="+cat {
			e.us = i
		}
		e.env = append(e.env, kv)
	}
	if e.us < 0 {
		return nil, false
	}
	return e, true
}

// maxExportCache bounds an [ExportCache]: it is emptied when full.
const maxExportCache = 64

// ExportCache remembers [Exported] per key (the directory and environment
// bash starts with, and whatever else changes what it exports). The zero
// value is ready to use; it is safe for concurrent use.
type ExportCache struct {
	mu sync.Mutex
	m  map[string]*exportEntry
}

type exportEntry struct {
	once sync.Once
	e    *Exported
}

// Get returns what is known for key, calling probe the first time (once,
// however many callers ask concurrently); nil means bash's behaviour could
// not be learnt and the direct path is not to be taken.
func (c *ExportCache) Get(key string, probe func() *Exported) *Exported {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxExportCache {
		c.m = map[string]*exportEntry{}
	}
	e := c.m[key]
	if e == nil {
		e = &exportEntry{}
		c.m[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() { e.e = probe() })
	return e.e
}

// ExportKey is the [ExportCache] key of bash started in dir with env and,
// when prologue, a ulimit prologue.
func ExportKey(dir string, env []string, prologue bool) string {
	var key strings.Builder
	key.WriteString(dir)
	key.WriteByte(0)
	if prologue {
		key.WriteByte('p')
	}
	for _, kv := range env {
		key.WriteByte(0)
		key.WriteString(kv)
	}
	return key.String()
}
