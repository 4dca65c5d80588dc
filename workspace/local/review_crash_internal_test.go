//go:build unix

package local

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// describeTree describes every entry under dir (type, path, mode, content
// hash or link target), links never followed.
func describeTree(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		line := fmt.Sprintf("%q %v", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			line += " -> " + target
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:8])
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

const crashEnv = "HELIKON_TEST_REVIEW_CRASH" // project|store|after

// TestReviewApplyCrashChild is the process that TestReviewApplyCrash kills
// during an apply: it applies the review and kills itself (SIGKILL, no
// deferred function runs) after the number of paths given.
func TestReviewApplyCrashChild(t *testing.T) {
	spec := os.Getenv(crashEnv)
	if spec == "" {
		t.Skip("run by TestReviewApplyCrash")
	}
	parts := strings.Split(spec, "|")
	var after int
	fmt.Sscan(parts[2], &after)
	r, err := FindReview(parts[0], &ReviewOptions{Dir: parts[1]})
	if err != nil {
		t.Fatal(err)
	}
	applyHook = func(n int) {
		if n == after {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	r.Apply(t.Context())
	t.Fatal("the apply ended without being killed")
}

// A process killed during an apply leaves the project partly applied and
// the journal; the next Apply finishes it, and the project is then what
// the agent saw, with no temporary file left.
func TestReviewApplyCrash(t *testing.T) {
	for _, after := range []int{1, 4, 9} {
		t.Run(fmt.Sprint(after), func(t *testing.T) {
			project, store := t.TempDir(), t.TempDir()
			for i := range 8 {
				os.MkdirAll(filepath.Join(project, "d", fmt.Sprint(i)), 0o755)
				os.WriteFile(filepath.Join(project, "d", fmt.Sprint(i), "f"), []byte(fmt.Sprint("old ", i)), 0o644)
			}
			before := describeTree(t, project)
			r, err := StartReview(t.Context(), project, &ReviewOptions{Dir: store})
			if err != nil {
				t.Fatal(err)
			}
			for i := range 8 {
				os.WriteFile(filepath.Join(r.Tree(), "d", fmt.Sprint(i), "f"), []byte(fmt.Sprint("new ", i)), 0o644)
				os.WriteFile(filepath.Join(r.Tree(), "d", fmt.Sprint(i), "g"), []byte(fmt.Sprint("added ", i)), 0o600)
			}
			os.RemoveAll(filepath.Join(r.Tree(), "d", "7"))
			want := describeTree(t, r.Tree())
			r.Close()

			cmd := exec.Command(os.Args[0], "-test.run=^TestReviewApplyCrashChild$", "-test.v")
			cmd.Env = append(os.Environ(), crashEnv+"="+project+"|"+store+"|"+fmt.Sprint(after))
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("the child was not killed during the apply: %v\n%s", err, out)
			}
			mid := describeTree(t, project)
			if mid == before || mid == want {
				t.Fatalf("the kill did not fall midway (after %d paths)", after)
			}
			r, err = FindReview(project, &ReviewOptions{Dir: store})
			if err != nil {
				t.Fatalf("the review is gone after a crash: %v", err)
			}
			if _, err := os.Stat(filepath.Join(r.Dir(), reviewJournal)); err != nil {
				t.Fatalf("no journal after a crash: %v", err)
			}
			if _, err := r.Apply(t.Context()); err != nil {
				t.Fatalf("the apply after the crash: %v", err)
			}
			if got := describeTree(t, project); got != want {
				t.Fatalf("after the second apply the project is\n%s\nwant\n%s", got, want)
			}
		})
	}
}
