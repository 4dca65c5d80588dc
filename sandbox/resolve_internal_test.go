package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/workspace"
)

// Resolving a path of n components must cost O(n) lookups. Looking every
// prefix up from the root costs O(n²): at a depth of 2000 (a 4000-byte
// path) that is two million openat calls, seconds of CPU that no context
// can cancel, for every Read, Write, Edit and permission check of the path.
func TestResolveCostIsLinearInPathLength(t *testing.T) {
	dir := t.TempDir()
	const depth = 1000
	deep := strings.Repeat("d/", depth)
	if err := os.MkdirAll(filepath.Join(dir, deep), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, deep, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(strings.Repeat("d/", depth/2)+"f", filepath.Join(dir, deep[:len(deep)/2], "link")); err != nil {
		t.Fatal(err)
	}
	sb, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	for _, tc := range []struct {
		path, want string
	}{
		{deep + "f", deep + "f"},
		{deep + "missing/more/f", deep + "missing/more/f"},
		{deep[:len(deep)/2] + "link", deep + "f"},
		// ".." restarts from the root, as os.Root does; a few are fine.
		{deep + "../../d/d/f", deep + "f"},
		{deep + strings.Repeat("../", 4) + strings.Repeat("d/", 4) + "f", deep + "f"},
	} {
		got, cost, err := sb.resolve("test", tc.path)
		if err != nil || got != strings.TrimSuffix(tc.want, "/") {
			t.Errorf("resolve(%.40q…) = %.40q…, %.200v", tc.path, got, err)
			continue
		}
		n := strings.Count(tc.path, "/") + 1
		if limit := 3*n + 4*depth; cost > limit {
			t.Errorf("resolve(%.40q…) of %d components walked %d components (limit %d): not linear", tc.path, n, cost, limit)
		}
	}
	// Many restarts at depth: os.Root's budget refuses the path, and so
	// does RealPath, before doing quadratic work.
	p := deep + strings.Repeat("../../d/d/", 200) + "f"
	if _, cost, err := sb.resolve("test", p); err == nil || cost > 20*depth {
		t.Errorf("resolve of %d restarts at depth %d: cost %d, err %v; want a bounded refusal", 200, depth, cost, err)
	}
	if _, err := sb.Root().Open(p); err == nil {
		t.Error("os.Root opened the path RealPath refused; the budgets disagree")
	}
}

// RealPath is a snapshot: a concurrent process can swap a checked path for a
// link to the outside before the open. The open must then still stay inside
// (os.Root refuses the link), which this test checks without a race by
// handing the open a path that has already been swapped.
func TestOpenAfterASwapStaysConfined(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"f": "../outside/secret.txt", "d": "../outside", "a": outside + "/secret.txt"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	sb, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	for _, rel := range []string{"f", "d/secret.txt", "a"} {
		f, _, err := sb.openRegular("test", rel, rel)
		if !errors.Is(err, workspace.ErrOutside) {
			t.Errorf("openRegular(%q) after a swap: %v, want an error matching workspace.ErrOutside", rel, err)
		}
		if err == nil {
			b := make([]byte, 64)
			n, _ := f.Read(b)
			f.Close()
			t.Errorf("openRegular(%q) after a swap opened a file outside and read %q", rel, b[:n])
		}
		// The same for the write that follows a resolution.
		if _, err := sb.replace(context.Background(), "test", rel, rel, [][]byte{[]byte("PWNED")}, nil); err == nil {
			t.Errorf("replace(%q) after a swap succeeded", rel)
		}
		if _, err := sb.replace(context.Background(), "test", rel+"/new", rel+"/new", [][]byte{[]byte("PWNED")}, nil); err == nil {
			t.Errorf("replace(%q) after a swap succeeded", rel+"/new")
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "SECRET" {
		t.Errorf("the outside file was changed: %q", b)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("files were created outside: %v", ents)
	}
}

// A FIFO that a concurrent process swaps in for a directory between the
// walker's look at it and its open must be refused at once: os.Root's
// OpenRoot of a FIFO blocks until a writer comes, which would hang the tool
// call for good. The swap is simulated by opening the FIFO directly (with
// the guard removed, this test hangs until the test binary times out).
func TestOpenDirRefusesAFIFOWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	if err := syscallMkfifo(filepath.Join(dir, "fifo")); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	sb, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if r, err := openDir(sb.root, "fifo"); err == nil {
		r.Close()
		t.Fatal("openDir opened a FIFO as a directory")
	}
	if _, err := Open(filepath.Join(dir, "fifo")); err == nil {
		t.Fatal("Open accepted a FIFO as a root")
	}
}
