//go:build linux

package ossandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
)

// useFakeHome builds a fake home (makeFakeHome), makes it this process's
// HOME and PATH for the test, and returns it.
func useFakeHome(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home, path := makeFakeHome(t, dir)
	t.Setenv("HOME", home)
	t.Setenv("PATH", path)
	return home
}

// fakeHomeBackend returns a backend built with opts over a fake home.
func fakeHomeBackend(t *testing.T, opts Options) (*Backend, string) {
	t.Helper()
	home := useFakeHome(t)
	b, _ := newTestBackend(t, opts)
	return b, home
}

// runIn runs a command line in b and returns its output and exit code.
func runIn(t *testing.T, b *Backend, req *backend.Request) (string, int) {
	t.Helper()
	res, err := b.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("%q: %v", req.Command+strings.Join(req.Argv, " "), err)
	}
	code := -1
	if res.ExitCode != nil {
		code = *res.ExitCode
	}
	return string(res.Stdout) + string(res.Stderr), code
}

// TestToolchainsOnPathRun: each tool of the fake home's PATH runs, by
// program vector and by command line, and no credential file is readable
// through the trees the PATH grants (~/.cargo holds one); with the PATH
// rule removed (NoPath) no tool runs, so each check depends on it. CI runs
// it as root and as an unprivileged user.
func TestToolchainsOnPathRun(t *testing.T) {
	b, home := fakeHomeBackend(t, Options{})
	off, _ := newTestBackend(t, Options{NoPath: true})
	for _, c := range fakeCredentials {
		if out, code := runIn(t, b, &backend.Request{Argv: []string{"/bin/cat", filepath.Join(home, c.file)}}); code == 0 || strings.Contains(out, "SECRET") {
			t.Errorf("credential %s is readable: %s", c.file, out)
		}
	}
	for _, tc := range []struct{ prog, want string }{
		{"python3", "python-stdlib"}, // a pyenv shim, the interpreter and its library behind it
		{"node", "node-lib"},         // an nvm version's bin directory and its lib
		{"cargo", "rust-lib"},        // a link to rustup in ~/.cargo/bin, the toolchain in ~/.rustup
		{"tool", "pipx-lib"},         // ~/.local/bin linking into a pipx venv
	} {
		t.Run(tc.prog, func(t *testing.T) {
			for _, req := range []*backend.Request{{Argv: []string{tc.prog}}, {Command: tc.prog + " && true"}} {
				out, code := runIn(t, b, req)
				if code != 0 || strings.TrimSpace(out) != tc.want {
					t.Errorf("%q%q: exit %d: %s; want %s", req.Argv, req.Command, code, out, tc.want)
				}
			}
			if out, code := runIn(t, off, &backend.Request{Command: tc.prog}); code == 0 || strings.Contains(out, tc.want) {
				t.Errorf("without the PATH rule, %s runs: %s", tc.prog, out)
			}
		})
	}
}

// TestCredentialsStayOut grants the whole fake home as a read path (the
// widest grant an operator can make) and checks that each credential file
// is unreadable, while the home's other files are readable; then, for each
// credential, that it becomes readable with its entry of HiddenPaths
// removed, so that every check depends on its rule.
func TestCredentialsStayOut(t *testing.T) {
	home := useFakeHome(t)
	read := func(b *Backend, rel string) (string, int) {
		return runIn(t, b, &backend.Request{Argv: []string{"/bin/cat", filepath.Join(home, rel)}})
	}
	b, _ := newTestBackend(t, Options{ReadPaths: []string{home}})
	if out, code := read(b, ".bashrc"); code != 0 {
		t.Fatalf("the home's other files are not readable: exit %d: %s", code, out)
	}
	for _, c := range fakeCredentials {
		if out, code := read(b, c.file); code == 0 || strings.Contains(out, "SECRET") {
			t.Errorf("credential %s is readable: %s", c.file, out)
		}
	}
	// A link in a granted tree to a credential reaches what Landlock
	// checks: the target.
	if out, code := read(b, ".local/bin/leak"); code == 0 || strings.Contains(out, "SECRET") {
		t.Errorf("a link to a credential is readable: %s", out)
	}
	if testing.Short() {
		return
	}
	saved := HiddenPaths
	t.Cleanup(func() { HiddenPaths = saved })
	for _, c := range fakeCredentials {
		t.Run("without "+c.rule, func(t *testing.T) {
			HiddenPaths = slices.DeleteFunc(slices.Clone(saved), func(h string) bool { return h == c.rule })
			b, _ := newTestBackend(t, Options{ReadPaths: []string{home}})
			if out, code := read(b, c.file); code != 0 || !strings.Contains(out, "SECRET") {
				t.Errorf("with its rule removed, %s is still unreadable (exit %d: %s): the check does not depend on the rule", c.file, code, out)
			}
		})
	}
}

func TestHidePathsAdds(t *testing.T) {
	b, _ := fakeHomeBackend(t, Options{HidePaths: []string{".pyenv/versions"}})
	if out, code := runIn(t, b, &backend.Request{Command: "python3"}); code == 0 {
		t.Errorf("a hidden interpreter ran: %s", out)
	}
	if out, code := runIn(t, b, &backend.Request{Command: "node"}); code != 0 {
		t.Errorf("node: exit %d: %s", code, out)
	}
}

// TestUnreadableProgramIsNamed: a command whose program, whose #!
// interpreter or whose shim's target lies in a directory commands cannot
// read fails with an error (a program vector) or a line on its standard
// error (a command line, a shim) naming that directory and the flag that
// grants it, not a bare "permission denied". Without the explanation
// (explainDenied) each case fails.
func TestUnreadableProgramIsNamed(t *testing.T) {
	b, home := fakeHomeBackend(t, Options{NoPath: true})
	shims := filepath.Join(home, ".pyenv/shims")
	versions := filepath.Join(home, ".pyenv/versions/3.0/bin")
	interp := filepath.Join(versions, "python3")
	for name, content := range map[string]string{
		"script":    "#!" + interp + "\n",
		"envscript": "#!/usr/bin/env -S tool\n",
		"shim":      "#!/bin/sh\nexec " + interp + " \"$@\"\n",
	} {
		if err := os.WriteFile(filepath.Join(b.Dir(), name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		argv []string
		dir  string
	}{
		{"a program on PATH", []string{"python3", "-c", "print(1)"}, shims},
		{"an absolute program", []string{interp}, versions},
		{"a #! interpreter", []string{"./script"}, versions},
		{"a #!/usr/bin/env interpreter", []string{"./envscript"}, filepath.Join(home, ".local/share/pipx/venvs/tool/bin")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := b.Run(context.Background(), &backend.Request{Argv: tc.argv})
			var ne *NotReadableError
			if !errors.Is(err, ErrNotReadable) || !errors.As(err, &ne) {
				t.Fatalf("result %v, error %v; want ErrNotReadable", res != nil, err)
			}
			if ne.Dir != tc.dir || !strings.Contains(err.Error(), "--read-path "+tc.dir) {
				t.Errorf("error %q (dir %s); want it to name %s and --read-path", err, ne.Dir, tc.dir)
			}
		})
	}
	for _, tc := range []struct {
		name string
		req  *backend.Request
		dir  string
	}{
		{"a command line", &backend.Request{Command: "python3 -c 'print(1)'"}, shims},
		{"a command line's #! interpreter", &backend.Request{Command: "./script && true"}, versions},
		{"a shim's target", &backend.Request{Argv: []string{"./shim"}}, versions},
		{"a shim's target in a command line", &backend.Request{Command: "./shim; exit $?"}, versions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := runIn(t, b, tc.req)
			if code != 126 || !strings.Contains(out, "helikon: "+ErrNotReadable.Error()) || !strings.Contains(out, "--read-path "+tc.dir+" ") {
				t.Errorf("exit %d: %s; want 126 and a line naming %s and --read-path", code, out, tc.dir)
			}
		})
	}
	// Granted, the same programs run: the explanation is not a refusal.
	g, _ := newTestBackend(t, Options{NoPath: true, ReadPaths: []string{filepath.Join(home, ".pyenv")}})
	if out, code := runIn(t, g, &backend.Request{Argv: []string{interp}}); code != 0 || strings.TrimSpace(out) != "python-stdlib" {
		t.Errorf("granted: exit %d: %s", code, out)
	}
}

// TestHardLinkToCredentialIsReported: a hard link, in a granted tree, to a
// hidden credential file is another path to the same file, and Landlock
// checks the path a file is opened by: commands read the credential by
// that name. ExplainPath (helikon doctor) reports it as exposed, and hiding
// the name too keeps it out.
func TestHardLinkToCredentialIsReported(t *testing.T) {
	home := useFakeHome(t)
	key := filepath.Join(home, ".ssh/id_ed25519")
	name := filepath.Join(home, ".pyenv/versions/3.0/lib/key")
	if err := os.Link(key, name); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	r, err := ExplainPath(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(r.Linked, key) || !slices.Contains(r.Exposed, HardLink{Hidden: key, Name: name}) {
		t.Errorf("linked %q, exposed %+v; want %s exposed as %s", r.Linked, r.Exposed, key, name)
	}
	b, _ := newTestBackend(t, Options{})
	if out, code := runIn(t, b, &backend.Request{Argv: []string{"/bin/cat", name}}); code != 0 || !strings.Contains(out, "SECRET") {
		t.Errorf("what Landlock does with a hard link changed: its name in a granted tree is not readable (exit %d: %s); update ExplainPath's doc", code, out)
	}
	h, _ := newTestBackend(t, Options{HidePaths: []string{name}})
	if out, code := runIn(t, h, &backend.Request{Argv: []string{"/bin/cat", name}}); code == 0 || strings.Contains(out, "SECRET") {
		t.Errorf("a hidden hard link is readable: %s", out)
	}
	if r, _ := ExplainPath(&Options{HidePaths: []string{name}}); len(r.Exposed) != 0 {
		t.Errorf("a hidden hard link is reported exposed: %+v", r.Exposed)
	}
}
