package fsroot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
// link before the open. The open must then neither leave the root (os.Root
// refuses a link out) nor follow a link inside to a file the walk did not
// name (the descriptors it opens are checked against what its look-ups
// found). This test checks both without a race by handing the open a walk
// whose look-ups saw the path before the swap: a directory at every
// directory's name, a regular file at the last one.
func TestOpenAfterASwapStaysConfined(t *testing.T) {
	base := t.TempDir()
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "private"), filepath.Join(root, ".seen", "dir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(outside, "secret.txt"), filepath.Join(root, "private", "secret.txt"), filepath.Join(root, ".seen", "file")} {
		if err := os.WriteFile(f, []byte("SECRET"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{
		"f": "../outside/secret.txt", "d": "../outside", "a": outside + "/secret.txt", // out of the root
		"g": "private/secret.txt", "e": "private", // inside it
	} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	sb, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	dirInfo, _ := os.Lstat(filepath.Join(root, ".seen", "dir"))
	fileInfo, _ := os.Lstat(filepath.Join(root, ".seen", "file"))
	// seen is a walk of rel whose look-ups found what was there before
	// the swap; when missing, the last directory was not there yet.
	seen := func(rel string, missing bool) *walker {
		w := &walker{s: sb, op: "test", p: rel, cur: sb.root, exists: true}
		for _, c := range strings.Split(rel, "/") {
			w.push(c, dirInfo)
		}
		w.infos[len(w.infos)-1] = fileInfo
		if missing && len(w.infos) > 1 {
			w.infos[len(w.infos)-2] = nil
		}
		return w
	}
	for _, tc := range []struct {
		rel  string
		want error
	}{
		{"f", workspace.ErrOutside},
		{"d/secret.txt", workspace.ErrOutside},
		{"a", workspace.ErrOutside},
		{"g", syscall.EAGAIN},
		{"e/secret.txt", syscall.EAGAIN},
	} {
		w := seen(tc.rel, false)
		f, _, err := w.openRegular(tc.rel)
		w.close()
		if !errors.Is(err, tc.want) {
			t.Errorf("openRegular(%q) after a swap: %v, want an error matching %v", tc.rel, err, tc.want)
		}
		if err == nil {
			b := make([]byte, 64)
			n, _ := f.Read(b)
			f.Close()
			t.Errorf("openRegular(%q) after a swap opened another file and read %q", tc.rel, b[:n])
		}
		// The same for the write that follows a resolution.
		for _, rel := range []string{tc.rel, tc.rel + "/new"} {
			for _, missing := range []bool{false, true} {
				w := seen(rel, missing)
				parent, base, _, err := w.makeParent()
				if err == nil {
					_, err = sb.replace(context.Background(), "test", rel, rel, parent, base, [][]byte{[]byte("PWNED")}, nil)
				}
				w.close()
				if err == nil {
					t.Errorf("a write of %q (missing %v) after a swap succeeded", rel, missing)
				}
			}
		}
	}
	for _, f := range []string{filepath.Join(outside, "secret.txt"), filepath.Join(root, "private", "secret.txt")} {
		if b, _ := os.ReadFile(f); string(b) != "SECRET" {
			t.Errorf("%s was changed: %q", f, b)
		}
	}
	for _, d := range []string{outside, filepath.Join(root, "private")} {
		if ents, _ := os.ReadDir(d); len(ents) != 1 {
			t.Errorf("files were created in %s: %v", d, ents)
		}
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
