package cli_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
	"github.com/paigasus/helikon/version"
)

func TestVersionPrintsTheBuild(t *testing.T) {
	want := version.Get().String()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errs := clitest.Run(t, "", args...)
		if code != 0 || out != version.Module+" "+want+"\n" {
			t.Errorf("helikon %s: status %d, stdout %q (stderr %q); want %q", args, code, out, errs, want)
		}
	}
	code, out, _ := clitest.Run(t, "", "version", "--json")
	var got struct {
		Build    version.Info   `json:"build"`
		Machine  map[string]any `json:"machine"`
		Backends []string       `json:"backends"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("version --json: status %d, %v\n%s", code, err, out)
	}
	if got.Build != version.Get() || got.Machine["os"] == nil || len(got.Backends) == 0 {
		t.Errorf("version --json = %+v; want the build, the machine's probe and the backends", got)
	}
	if code, _, _ := clitest.Run(t, "", "version", "extra"); code != 125 {
		t.Errorf("version extra: status %d, want 125", code)
	}
}

// TestVersionOfABuiltBinaryNamesItsRevision builds the helikon binary in a
// clone of this checkout's HEAD (Go stamps VCS information only where .git
// is a directory, not in a git worktree) and checks that it reports that
// commit, unmodified, then modified once the tree has an untracked file.
func TestVersionOfABuiltBinaryNamesItsRevision(t *testing.T) {
	if testing.Short() {
		t.Skip("clones the repository and builds the helikon binary twice; skipped with -short")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatal(err)
	}
	clone := filepath.Join(t.TempDir(), "helikon")
	if out, err := exec.Command("git", "clone", "-q", "--shared", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	for _, modified := range []bool{false, true} {
		if modified {
			if err := os.WriteFile(filepath.Join(clone, "untracked"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		bin := filepath.Join(t.TempDir(), "helikon")
		build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/helikon")
		build.Dir = clone
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		out, err := exec.Command(bin, "version", "--json").Output()
		if err != nil {
			t.Fatalf("helikon version --json: %v", err)
		}
		var got struct {
			Build version.Info `json:"build"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if got.Build.Revision != strings.TrimSpace(string(head)) || got.Build.Modified != modified || got.Build.Path != version.Module || got.Build.Time == "" {
			t.Errorf("built binary reports %+v; want revision %s, modified %v", got.Build, head, modified)
		}
	}
}
