//go:build linux

package fsroot_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/workspace/fsroot"
)

// fsizeChildEnv, when set to a directory, makes TestWriteOverFileSizeLimitFailsCleanly
// act as the child: it lowers its RLIMIT_FSIZE, writes and updates
// files in that directory, and prints each outcome.
const fsizeChildEnv = "HELIKON_SANDBOX_FSIZE_CHILD"

const fsizeLimit = 64 << 10

// A write that runs into the file size limit (EFBIG; disk-full behaves the
// same) fails with an error that says so, leaves the old content whole, and
// leaves no temporary file behind.
func TestWriteOverFileSizeLimitFailsCleanly(t *testing.T) {
	if dir := os.Getenv(fsizeChildEnv); dir != "" {
		fsizeChild(dir)
		return
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	old := bytes.Repeat([]byte("old\n"), 1024)
	for _, name := range []string{"w.txt", "u.txt"} {
		must(t, os.WriteFile(filepath.Join(dir, name), old, 0o644))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteOverFileSizeLimitFailsCleanly$", "-test.count=1")
	cmd.Env = append(os.Environ(), fsizeChildEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v (a write over RLIMIT_FSIZE must fail with EFBIG, not kill the process)\n%s", err, out)
	}
	for _, op := range []string{"write", "update"} {
		if !strings.Contains(string(out), op+": file too large") {
			t.Errorf("child output lacks %q:\n%s", op+": file too large", out)
		}
		if !strings.Contains(string(out), "temps: 0\n") || strings.Contains(string(out), "temps: 1") {
			t.Errorf("a failed write left its temporary file behind:\n%s", out)
		}
	}
	if !strings.Contains(string(out), "small: ok") {
		t.Errorf("a write under the limit failed:\n%s", out)
	}
	for _, name := range []string{"w.txt", "u.txt"} {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); !bytes.Equal(b, old) {
			t.Errorf("%s: %d bytes after a failed write; want the old %d bytes", name, len(b), len(old))
		}
	}
	assertNoTemps(t, dir)
}

func fsizeChild(dir string) {
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: fsizeLimit, Max: fsizeLimit}); err != nil {
		fmt.Println("setrlimit:", err)
		os.Exit(2)
	}
	sb, err := fsroot.Open(dir)
	if err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	ctx := context.Background()
	big := bytes.Repeat([]byte("new\n"), 2*fsizeLimit/4)
	_, err = sb.WriteFile(ctx, "w.txt", big)
	fmt.Println("write:", errText(err), "temps:", countTemps(dir))
	_, err = sb.UpdateFile(ctx, "u.txt", 0, func(old []byte) ([][]byte, error) { return [][]byte{old, big}, nil })
	fmt.Println("update:", errText(err), "temps:", countTemps(dir))
	_, err = sb.WriteFile(ctx, "small.txt", []byte("fits"))
	fmt.Println("small:", errText(err))
}

// countTemps counts temporary files in dir, before any later write could
// clean them up.
func countTemps(dir string) int {
	n := 0
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".helikon-") {
			n++
		}
	}
	return n
}

func errText(err error) string {
	switch {
	case err == nil:
		return "ok"
	case strings.Contains(err.Error(), "file too large"):
		return "file too large (" + err.Error() + ")"
	}
	return err.Error()
}
