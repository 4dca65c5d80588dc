//go:build linux

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
)

// TestDoctorReportsPathAndHidden checks that doctor lists each PATH entry
// as usable or not, with what it grants, the credential locations it
// hides, and a hidden file's hard link in a granted tree.
func TestDoctorReportsPathAndHidden(t *testing.T) {
	home := t.TempDir()
	for _, f := range []string{".pyenv/shims/python3", ".ssh/id_ed25519"} {
		p := filepath.Join(home, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A hard link to a key inside a granted tree: another name commands read it by.
	if err := os.Link(filepath.Join(home, ".ssh/id_ed25519"), filepath.Join(home, ".pyenv/k")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("PATH", filepath.Join(home, ".pyenv/shims")+":"+filepath.Join(home, "missing")+":/usr/bin")
	_, out, _ := clitest.Run(t, "", "doctor", "--root", t.TempDir())
	for _, want := range []string{
		"usable     " + filepath.Join(home, ".pyenv/shims") + ": readable and executable",
		"grants " + filepath.Join(home, ".pyenv"),
		"NOT usable " + filepath.Join(home, "missing"),
		"usable     /usr/bin: a system directory",
		"never read (those present here):\n  " + filepath.Join(home, ".ssh"),
		"EXPOSED: " + filepath.Join(home, ".ssh/id_ed25519") + " is readable by commands as " + filepath.Join(home, ".pyenv/k"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor's report lacks %q:\n%s", want, out)
		}
	}
}

// fakeFile writes content to home/rel, creating its directory, with mode.
func fakeFile(t *testing.T, home, rel, content string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(home, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestExecRunsPyenvShim: on a machine whose PATH starts with a pyenv shim
// directory (a shim that executes the interpreter of a version in the
// pyenv root, as pyenv's do), helikon exec -- python3 runs it in the OS
// sandbox; with --no-path it fails naming the shim directory and the flag
// that grants it.
func TestExecRunsPyenvShim(t *testing.T) {
	real, err := filepath.EvalSymlinks("/usr/bin/python3")
	if err != nil {
		t.Skipf("no python3 here: %v", err)
	}
	bin, err := os.ReadFile(real)
	if err != nil {
		t.Fatal(err)
	}
	home, _ := filepath.EvalSymlinks(t.TempDir())
	fakeFile(t, home, ".pyenv/versions/3.x/bin/python3", string(bin), 0o755)
	fakeFile(t, home, ".pyenv/shims/python3", "#!/usr/bin/env bash\nset -e\nexec \"$PYENV_ROOT/versions/3.x/bin/python3\" \"$@\"\n", 0o755)
	fakeFile(t, home, ".ssh/id_ed25519", "SECRET\n", 0o600)
	t.Setenv("HOME", home)
	shims := filepath.Join(home, ".pyenv/shims")
	t.Setenv("PATH", shims+":/usr/local/bin:/usr/bin:/bin")
	root := t.TempDir()
	code, out, errOut := clitest.Run(t, "", "exec", "--backend", "os", "--root", root, "--", "python3", "-c", "import sys; print(1, sys.executable)")
	if code == 125 && strings.Contains(errOut, "unavailable") {
		t.Skipf("the OS sandbox is unavailable here: %s", errOut)
	}
	if want := "1 " + filepath.Join(home, ".pyenv/versions/3.x/bin/python3") + "\n"; code != 0 || out != want {
		t.Fatalf("exit %d, stdout %q, stderr %s; want %q", code, out, errOut, want)
	}
	// The interpreter runs, the keys beside it stay out.
	code, out, errOut = clitest.Run(t, "", "exec", "--backend", "os", "--root", root, "--", "python3", "-c", "print(open('"+filepath.Join(home, ".ssh/id_ed25519")+"').read())")
	if code == 0 || strings.Contains(out, "SECRET") {
		t.Errorf("a credential was read: exit %d: %s %s", code, out, errOut)
	}
	code, _, errOut = clitest.Run(t, "", "exec", "--backend", "os", "--no-path", "--root", root, "--", "python3", "-c", "print(1)")
	if code == 0 || !strings.Contains(errOut, "--read-path "+shims) {
		t.Errorf("--no-path: exit %d: %s; want an error naming %s and --read-path", code, errOut, shims)
	}
}

// TestPolicyFileHidesPaths: sandbox.hidePaths in a policy file (here the
// project's, untrusted: hiding only tightens) hides more from commands, as
// --hide-path does; the built-in list stays.
func TestPolicyFileHidesPaths(t *testing.T) {
	home, _ := filepath.EvalSymlinks(t.TempDir())
	secret := fakeFile(t, home, "work/.vault/token", "SECRET\n", 0o644)
	fakeFile(t, home, ".ssh/id_ed25519", "SECRET\n", 0o600)
	t.Setenv("HOME", home)
	t.Setenv("PATH", "/usr/bin:/bin")
	root := t.TempDir()
	run := func() (int, string, string) {
		return clitest.Run(t, "", "exec", "--backend", "os", "--user-settings", "none", "--root", root, "--read-path", home, "--", "cat", secret, filepath.Join(home, ".ssh/id_ed25519"))
	}
	code, out, errOut := run()
	if code == 125 && strings.Contains(errOut, "unavailable") {
		t.Skipf("the OS sandbox is unavailable here: %s", errOut)
	}
	if code == 0 || strings.Count(out, "SECRET") != 1 {
		t.Fatalf("without the file: exit %d, stdout %q: want the token read and the key not", code, out)
	}
	fakeFile(t, root, ".helikon/settings.json", `{"sandbox": {"hidePaths": ["~/work/.vault"]}}`, 0o644)
	if code, out, errOut = run(); code == 0 || strings.Contains(out, "SECRET") {
		t.Errorf("with sandbox.hidePaths: exit %d, stdout %q, stderr %s: want neither read", code, out, errOut)
	}
	_, out, _ = clitest.Run(t, "", "doctor", "--user-settings", "none", "--root", root)
	for _, want := range []string{"  " + filepath.Join(home, "work/.vault") + "\n", "  " + filepath.Join(home, ".ssh") + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor does not list %q as hidden:\n%s", want, out)
		}
	}
}
