package shellcmd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/internal/locale"
	"github.com/paigasus/helikon/internal/procdev"
)

// pathElems are the elements FuzzSpecialFileSpelling builds names from:
// the ways into /proc and /dev, and names in the test's directory.
var pathElems = []string{"", ".", "..", "dev", "proc", "self", "thread-self", "root", "fd", "stdin", "0", "3", "exe", "cwd", "sub", "file", "null"}

// FuzzSpecialFileSpelling builds names from pathElems and checks, against
// the kernel's own resolution, that a name leading through /proc or /dev is
// refused as a program, a script, a start-up file and a shell's input
// (except /dev/null as a script), and that a name that stays in the
// directory, spelt without .., is not.
func FuzzSpecialFileSpelling(f *testing.F) {
	for _, s := range []string{"\x01\x03\x09", "\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02\x03\x09", "\x05\x06\x07\x03\x09", "\x0f", "\x0e\x02\x0f"} {
		f.Add(s, true, "")
	}
	f.Add("\x05\x0c", false, "\x02\x02\x02\x02\x02\x02\x02\x02\x02\x02")
	f.Add("\x0c", false, "\x04\x05")
	dir := f.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "file"), nil, 0o755); err != nil {
		f.Fatal(err)
	}
	o := Options{Dir: dir}
	f.Fuzz(func(t *testing.T, spec string, absolute bool, cdSpec string) {
		if len(spec) > 24 || len(cdSpec) > 16 {
			return
		}
		name := elemPath(spec)
		if cdSpec != "" {
			checkAfterCd(t, o, dir, name, elemPath(cdSpec), absolute)
			return
		}
		if absolute {
			name = "/" + name
		}
		if name == "" || strings.ContainsAny(name, " ") {
			return
		}
		through, exists := procdev.Through(name, dir)
		if !exists {
			return // nothing runs
		}
		prog := name
		if !strings.Contains(prog, "/") {
			prog = "./" + prog
		}
		clean := filepath.Clean(name)
		full := name
		if !absolute {
			full = dir + "/" + name // not cleaned: sub/file/. is no file
		}
		st, err := os.Stat(full)
		regular := err == nil && st.Mode().IsRegular() // a program or script the precision check applies to
		for _, cmd := range []string{prog + " x", "bash " + name, "BASH_ENV=" + name + " bash -c :", "bash --rcfile " + name + " -ic :", "bash < " + name} {
			a := o.Analyze(cmd)
			script := !strings.HasSuffix(cmd, " x")
			special := through && !(script && (clean == "/dev/null" || !absolute && filepath.Join(dir, name) == "/dev/null"))
			if special && a.Unresolved == "" {
				t.Fatalf("Analyze(%q) is resolved (%q), but %s leads through /proc or /dev", cmd, a.Programs(), name)
			}
			if !through && regular && !strings.Contains("/"+name+"/", "/../") && a.Unresolved != "" && !strings.Contains(cmd, "-ic") {
				t.Fatalf("Analyze(%q) refused %s, which stays in the directory: %s", cmd, name, a.Unresolved)
			}
		}
	})
}

// elemPath joins the pathElems that spec picks.
func elemPath(spec string) string {
	elems := make([]string, len(spec))
	for i := range len(spec) {
		elems[i] = pathElems[int(spec[i])%len(pathElems)]
	}
	return strings.Join(elems, "/")
}

// checkAfterCd checks a relative program name run after cd D: when the
// kernel resolves it, from the directory cd reaches, through /proc or /dev,
// the line must be refused.
func checkAfterCd(t *testing.T, o Options, dir, name, d string, absolute bool) {
	t.Helper()
	if absolute {
		d = "/" + d
	}
	if d == "" || name == "" || strings.HasPrefix(name, "/") || strings.Contains(d+name, " ") {
		return
	}
	full := d
	if !absolute {
		full = dir + "/" + d
	}
	cdThrough, cdExists := procdev.Through(full, "/")
	cwd, err := filepath.EvalSymlinks(full)
	if !cdExists || err != nil {
		return // cd fails, and with && nothing more runs
	}
	if st, err := os.Stat(cwd); err != nil || !st.IsDir() {
		return
	}
	through, exists := procdev.Through(name, cwd)
	if !exists {
		return
	}
	prog := name
	if !strings.Contains(prog, "/") {
		prog = "./" + prog
	}
	cmd := "cd " + d + " && " + prog + " x"
	if a := o.Analyze(cmd); (through || cdThrough) && a.Unresolved == "" {
		t.Fatalf("Analyze(%q) is resolved (%q), but after the cd, %s leads through /proc or /dev", cmd, a.Programs(), name)
	}
}

// gitOptions are git's global options, with a value where they take one;
// the forms are those git itself accepts.
var gitOptions = []string{
	"-C .", "-C sub", "-c x.y=z", "-c alias.p=push", "--config-env=a.b=HOME", "--config-env a.b=HOME", "--exec-path=/usr/lib/git-core",
	"-p", "--paginate", "-P", "--no-pager", "--no-replace-objects", "--bare", "--git-dir=.git", "--git-dir .git",
	"--work-tree=.", "--work-tree .", "--namespace=n", "--namespace n", "--super-prefix=x/", "--literal-pathspecs",
	"--no-literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks",
	"--shallow-file f", "--attr-source=HEAD", "--no-lazy-fetch", "--no-advice",
}

// gitSubs are subcommands: git's own and names that may be aliases.
var gitSubs = []string{"push", "status", "log", "p", "st", "PUSH", "--help", "-v"}

// FuzzGitGlobalOptions builds git commands from global options and a
// subcommand and checks that a deny list naming the subcommand refuses
// every one, that one naming another git command refuses an alias or a
// command under -c, and that an allow list of the subcommand allows only a
// command of git's own with no configuration given.
func FuzzGitGlobalOptions(f *testing.F) {
	f.Add("\x00\x01\x05", byte(0))
	f.Add("\x03", byte(3))
	f.Fuzz(func(t *testing.T, spec string, subIdx byte) {
		if len(spec) > 12 {
			return
		}
		words := []string{"git"}
		config := false
		for i := range len(spec) {
			o := gitOptions[int(spec[i])%len(gitOptions)]
			config = config || strings.HasPrefix(o, "-c") || strings.HasPrefix(o, "--config-env") || strings.HasPrefix(o, "--exec-path")
			words = append(words, o)
		}
		sub := gitSubs[int(subIdx)%len(gitSubs)]
		cmd := strings.Join(append(words, sub, "origin"), " ")
		runs := map[string]string{"--help": "help", "-v": "version"}[sub]
		if runs == "" {
			runs = sub
		}
		if err := (&Filter{Deny: []string{"git " + runs}}).Check(cmd); !errors.Is(err, helikon.ErrDenied) {
			t.Fatalf("deny git %s allowed %q: %v", runs, cmd, err)
		}
		own := gitCommands[runs]
		err := (&Filter{Deny: []string{"git no-such-command"}}).Check(cmd)
		if denied := errors.Is(err, helikon.ErrDenied); denied != (config || !own) {
			t.Fatalf("deny of another git command on %q: %v, want denied %v", cmd, err, config || !own)
		}
		err = (&Filter{Allow: []string{"git " + runs}}).Check(cmd)
		if allowed := err == nil; allowed != (own && !config) {
			t.Fatalf("allow git %s on %q: %v, want allowed %v", runs, cmd, err, own && !config)
		}
	})
}

// localeForms are the ways a line gives a variable a value; V is replaced
// by the value.
var localeForms = []string{
	"NAME=V ls", "NAME=V\nls", "export NAME=V", "declare -x NAME=V", "local NAME=V", "readonly NAME=V",
	"typeset NAME=V", "env NAME=V ls", "env -i NAME=V ls", "sudo NAME=V ls", "strace -E NAME=V ls",
	"bash -c \"NAME=V ls\"", "for NAME in V; do :; done", "read NAME <<< V", "printf -v NAME V",
	"NAME=V; ls", "f() { NAME=V; }; f", "ls | NAME=V cat", "(NAME=V)",
}

// FuzzLocaleAssignments gives LC_ALL, LC_CTYPE and LANG fuzzed values in
// every form of assignment and checks that the analysis is resolved only
// for a locale whose character set is UTF-8 or bytes.
func FuzzLocaleAssignments(f *testing.F) {
	for _, v := range []string{"C", "zh_CN.GBK", "C.UTF-8", "zh_TW", "en_US.utf8@euro", "$x"} {
		f.Add(v, byte(0), byte(0))
	}
	names := []string{"LC_ALL", "LC_CTYPE", "LANG"}
	f.Fuzz(func(t *testing.T, v string, form, name byte) {
		if strings.ContainsAny(v, "'\\\n\x00") || len(v) > 40 {
			return
		}
		n := names[int(name)%len(names)]
		f := localeForms[int(form)%len(localeForms)]
		if strings.Contains(f, `"`) && strings.ContainsAny(v, "\"$`") {
			return // the outer double quotes would expand or end at v
		}
		cmd := strings.NewReplacer("NAME", n, "V", "'"+v+"'").Replace(f)
		a := Analyze(cmd)
		if a.Unresolved == "" && !locale.Safe(v) {
			t.Fatalf("Analyze(%q) is resolved, but %s=%q is not a UTF-8 or C locale", cmd, n, v)
		}
	})
}
