package local_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/workspace"
)

// swapper exchanges two entries of dir as fast as it can, atomically
// (renameat2 RENAME_EXCHANGE), until stop is called: a command of the
// workspace doing so while a checkpoint or a restore walks the tree.
func swapper(t *testing.T, dir, a, b string) (stop func()) {
	t.Helper()
	pa, pb := filepath.Join(dir, a), filepath.Join(dir, b)
	if err := unix.Renameat2(unix.AT_FDCWD, pa, unix.AT_FDCWD, pb, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE is not available here (%v)", err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
				unix.Renameat2(unix.AT_FDCWD, pa, unix.AT_FDCWD, pb, unix.RENAME_EXCHANGE)
			}
		}
	})
	return func() { close(done); wg.Wait() }
}

// outsideDir is a directory outside the workspace holding a secret file.
func outsideDir(t *testing.T) (dir string, secret []byte) {
	dir = t.TempDir()
	secret = []byte("outside-secret-5b1f0c")
	if err := os.WriteFile(filepath.Join(dir, "secret"), secret, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, secret
}

// A command swapping a directory of the tree for a link to a directory
// outside while checkpoints are taken never gets the outside's content
// into the store: every access is through os.Root, and an entry opened is
// compared with the entry listed.
func TestCheckpointNeverRecordsOutsideThroughSwappedLinks(t *testing.T) {
	ws, store := newCkWorkspace(t, "host", nil)
	root := ws.Dir()
	out, secret := outsideDir(t)
	if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "d", "secret"), []byte("inside"), 0o644)
	for name, target := range map[string]string{"abs": out, "rel": "../../" + filepath.Base(filepath.Dir(out)) + "/" + filepath.Base(out)} {
		t.Run(name, func(t *testing.T) {
			link := "link-" + name
			if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
				t.Fatal(err)
			}
			stop := swapper(t, root, "d", link)
			for range 200 {
				if _, err := ws.Checkpoint(t.Context(), ""); err != nil && !errors.Is(err, workspace.ErrTreeChanged) {
					t.Errorf("Checkpoint: %v", err)
				}
			}
			stop()
		})
	}
	filepath.WalkDir(store, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, secret) {
				t.Errorf("the store holds the outside file's content in %s", p)
			}
		}
		return nil
	})
}

// A command swapping a directory for a link to outside while a restore
// writes into it never leads the restore to create, change or remove
// anything outside.
func TestRestoreNeverWritesOutsideThroughSwappedLinks(t *testing.T) {
	ws, _ := newCkWorkspace(t, "host", nil)
	root := ws.Dir()
	out, secret := outsideDir(t)
	d := filepath.Join(root, "d")
	os.MkdirAll(d, 0o755)
	for _, n := range strings.Split("a b c d e f g h i j secret", " ") {
		os.WriteFile(filepath.Join(d, n), []byte("restored "+n), 0o644)
	}
	c, err := ws.Checkpoint(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for range 100 {
		os.RemoveAll(d)
		os.MkdirAll(d, 0o755)
		stop := swapper(t, root, "d", "link")
		err := ws.Restore(t.Context(), c.ID)
		stop()
		_ = err // failing is fine; writing outside is not
		ents, _ := os.ReadDir(out)
		if len(ents) != 1 {
			t.Fatalf("the restore changed the outside directory: %v", ents)
		}
		if b, _ := os.ReadFile(filepath.Join(out, "secret")); !bytes.Equal(b, secret) {
			t.Fatalf("the restore overwrote the outside file: %q", b)
		}
		if _, err := os.Lstat(d); err != nil {
			os.Remove(filepath.Join(root, "link"))
			os.Rename(d, filepath.Join(root, "link"))
		}
		// put d back as the directory and link as the link
		if fi, err := os.Lstat(d); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, filepath.Join(root, "link"), unix.RENAME_EXCHANGE)
		}
	}
}
