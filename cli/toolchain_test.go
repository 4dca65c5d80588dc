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
// as usable or not, with what it grants, and the credential locations it
// hides.
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
	t.Setenv("HOME", home)
	t.Setenv("PATH", filepath.Join(home, ".pyenv/shims")+":"+filepath.Join(home, "missing")+":/usr/bin")
	_, out, _ := clitest.Run(t, "", "doctor", "--root", t.TempDir())
	for _, want := range []string{
		"usable     " + filepath.Join(home, ".pyenv/shims") + ": readable and executable",
		"grants " + filepath.Join(home, ".pyenv"),
		"NOT usable " + filepath.Join(home, "missing"),
		"usable     /usr/bin: a system directory",
		"never read (those present here):\n  " + filepath.Join(home, ".ssh"),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor's report lacks %q:\n%s", want, out)
		}
	}
}
