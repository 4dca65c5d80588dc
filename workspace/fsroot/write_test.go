package fsroot_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/paigasus/helikon/workspace"
)

func TestWriteFileCreatesParentsAndReportsCreated(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	res, err := fx.sb.WriteFile(ctx, "a/b/c/new.txt", []byte("one"))
	if err != nil || !res.Created || res.Path != "a/b/c/new.txt" || res.BytesWritten != 3 {
		t.Fatalf("first write = %+v, %v", res, err)
	}
	res, err = fx.sb.WriteFile(ctx, fx.root+"/a/b/c/new.txt", []byte("two!"))
	if err != nil || res.Created || res.BytesWritten != 4 {
		t.Fatalf("second write = %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(fx.root, "a/b/c/new.txt")); string(b) != "two!" {
		t.Errorf("content %q", b)
	}
}

func TestWriteFileKeepsModeAndFollowsLinkInside(t *testing.T) {
	fx := newFixture(t)
	p := filepath.Join(fx.root, "hello.txt")
	must(t, os.Chmod(p, 0o751))
	res, err := fx.sb.WriteFile(context.Background(), "rel-in", []byte("new"))
	if err != nil || res.Path != "hello.txt" {
		t.Fatalf("WriteFile through link = %+v, %v", res, err)
	}
	fi, err := os.Stat(p)
	must(t, err)
	if fi.Mode().Perm() != 0o751 {
		t.Errorf("mode %v, want 0751", fi.Mode().Perm())
	}
	if fi, _ := os.Lstat(filepath.Join(fx.root, "rel-in")); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("the link was replaced by a file; it should still be a link")
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("target content %q", b)
	}
}

func TestWriteFileKeepsOwnerWhenRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("keeping another user's ownership needs root; not running as root")
	}
	fx := newFixture(t)
	p := filepath.Join(fx.root, "hello.txt")
	must(t, os.Chown(p, 12345, 23456))
	_, err := fx.sb.WriteFile(context.Background(), "hello.txt", []byte("x"))
	must(t, err)
	fi, _ := os.Stat(p)
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 12345 || st.Gid != 23456 {
		t.Errorf("owner %d:%d, want 12345:23456", st.Uid, st.Gid)
	}
}

func TestWriteFileRefusesDirectoriesAndRoot(t *testing.T) {
	fx := newFixture(t)
	for p, want := range map[string]string{
		"sub":        "directory",
		".":          "sandbox root",
		fx.root:      "sandbox root",
		"newdir/":    "trailing slash",
		"hello.txt/": "ends in a slash",
	} {
		_, err := fx.sb.WriteFile(context.Background(), p, []byte("x"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("WriteFile(%q) = %v, want an error containing %q", p, err, want)
		}
	}
}

// A hard link inside the root to a file outside must not let a write change
// the outside file: the rename replaces the directory entry.
func TestWriteFileDoesNotWriteThroughHardLink(t *testing.T) {
	fx := newFixture(t)
	outsideFile := filepath.Join(fx.outside, "secret.txt")
	link := filepath.Join(fx.root, "hardlink.txt")
	must(t, os.Link(outsideFile, link))
	ctx := context.Background()
	if _, err := fx.sb.WriteFile(ctx, "hardlink.txt", []byte("PWNED")); err != nil {
		t.Fatal(err)
	}
	must(t, os.Link(outsideFile, filepath.Join(fx.root, "hardlink2.txt")))
	if _, err := fx.sb.UpdateFile(ctx, "hardlink2.txt", 0, func(old []byte) ([][]byte, error) {
		return [][]byte{bytes.ReplaceAll(old, []byte("SECRET"), []byte("PWNED"))}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(outsideFile); string(b) != secret {
		t.Fatalf("outside file changed to %q", b)
	}
	for _, name := range []string{"hardlink.txt", "hardlink2.txt"} {
		fi, _ := os.Stat(filepath.Join(fx.root, name))
		if n := fi.Sys().(*syscall.Stat_t).Nlink; n != 1 {
			t.Errorf("%s has %d links, want 1: it should be a new inode", name, n)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(fx.root, "hardlink2.txt")); string(b) != "TOP-PWNED-OUTSIDE" {
		t.Errorf("updated content %q", b)
	}
}

func TestUpdateFileLimitsAndErrors(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	_, err := fx.sb.UpdateFile(ctx, "hello.txt", 3, func(b []byte) ([][]byte, error) { return [][]byte{b}, nil })
	if !errors.Is(err, workspace.ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
	_, err = fx.sb.UpdateFile(ctx, "nope.txt", 0, func(b []byte) ([][]byte, error) { return [][]byte{b}, nil })
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(fmt.Sprint(err), "nope.txt") {
		t.Errorf("missing file: %v", err)
	}
	boom := errors.New("boom")
	_, err = fx.sb.UpdateFile(ctx, "hello.txt", 0, func(b []byte) ([][]byte, error) { return nil, boom })
	if !errors.Is(err, boom) {
		t.Errorf("update error: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(fx.root, "hello.txt")); string(b) != "hello\n" {
		t.Errorf("a failed update changed the file to %q", b)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := fx.sb.WriteFile(cctx, "hello.txt", []byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled write: %v", err)
	}
	assertNoTemps(t, fx.root)
}

// Concurrent updates of one file through one FS all apply, and
// concurrent whole writes leave exactly one writer's content.
func TestConcurrentWritesAndUpdatesNeverInterleave(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	const n = 24
	var doc strings.Builder
	for i := range n {
		fmt.Fprintf(&doc, "slot-%02d: todo\n", i)
	}
	_, err := fx.sb.WriteFile(ctx, "doc.txt", []byte(doc.String()))
	must(t, err)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, err := fx.sb.UpdateFile(ctx, "doc.txt", 0, func(old []byte) ([][]byte, error) {
				return [][]byte{bytes.Replace(old, fmt.Appendf(nil, "slot-%02d: todo", i), fmt.Appendf(nil, "slot-%02d: done", i), 1)}, nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got, _ := os.ReadFile(filepath.Join(fx.root, "doc.txt"))
	if c := bytes.Count(got, []byte(": done")); c != n {
		t.Errorf("%d of %d updates applied; concurrent updates were lost:\n%s", c, n, got)
	}

	// Whole writes of large, distinct contents, with a reader watching.
	contents := make([][]byte, 8)
	for i := range contents {
		contents[i] = bytes.Repeat([]byte{byte('A' + i)}, 256<<10)
	}
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			b, err := os.ReadFile(filepath.Join(fx.root, "big.txt"))
			if err == nil && !whole(b, contents) {
				t.Errorf("a reader saw a mixed file of %d bytes", len(b))
				return
			}
		}
	}()
	for _, c := range contents {
		wg.Go(func() {
			for range 4 {
				if _, err := fx.sb.WriteFile(ctx, "big.txt", c); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-readerDone
	got, _ = os.ReadFile(filepath.Join(fx.root, "big.txt"))
	if !whole(got, contents) {
		t.Errorf("final content of %d bytes is not one writer's whole content", len(got))
	}
	assertNoTemps(t, fx.root)
}

func whole(b []byte, contents [][]byte) bool {
	for _, c := range contents {
		if bytes.Equal(b, c) {
			return true
		}
	}
	return false
}

// A dead writer's temporary file is removed by the next write; a live
// writer's (locked) temporary file is left alone.
func TestWriteRemovesStaleTempsOnly(t *testing.T) {
	fx := newFixture(t)
	dead := filepath.Join(fx.root, "sub", ".x.txt.helikon-0123456789abcdef.tmp")
	must(t, os.WriteFile(dead, []byte("half"), 0o600))
	live := filepath.Join(fx.root, "sub", ".y.txt.helikon-fedcba9876543210.tmp")
	must(t, os.WriteFile(live, []byte("busy"), 0o600))
	lf, err := os.Open(live)
	must(t, err)
	defer lf.Close()
	must(t, syscall.Flock(int(lf.Fd()), syscall.LOCK_EX))
	unrelated := filepath.Join(fx.root, "sub", ".notes.tmp")
	must(t, os.WriteFile(unrelated, nil, 0o600))

	_, err = fx.sb.WriteFile(context.Background(), "sub/x.txt", []byte("x"))
	must(t, err)
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("dead writer's temporary file still there (%v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("live writer's temporary file was removed: %v", err)
	}
	if _, err := os.Stat(unrelated); err != nil {
		t.Errorf("a file that is not ours was removed: %v", err)
	}
}

// assertNoTemps fails when a temporary file of ours is left under dir.
func assertNoTemps(tb testing.TB, dir string) {
	tb.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".helikon-") && strings.HasSuffix(d.Name(), ".tmp") {
			tb.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func readAll(f *os.File) ([]byte, error) {
	defer f.Close()
	var b bytes.Buffer
	_, err := b.ReadFrom(f)
	return b.Bytes(), err
}
