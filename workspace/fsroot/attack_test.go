package fsroot_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/fsroot"
)

// A path that goes on after a file names a directory that is not there, as
// the kernel has it: RealPath must not resolve "file/.." to the directory
// above, or "file/" to the file, or Write would create what the path does
// not name.
func TestRealPathRefusesPathsThroughAFile(t *testing.T) {
	fx := newFixture(t)
	for _, p := range []string{"hello.txt/x", "hello.txt/", "hello.txt/.", "hello.txt/..", "rel-in/../hello.txt", "rel-in/", "sub/deeper/inner.txt/../inner.txt"} {
		got, err := fx.sb.RealPath(p)
		if !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("RealPath(%q) = %q, %v; want an error wrapping ENOTDIR", p, got, err)
		}
		if f, _, err := fx.sb.OpenRegular(p); err == nil {
			f.Close()
			t.Errorf("OpenRegular(%q) opened a file", p)
		}
		if _, err := fx.sb.WriteFile(context.Background(), p, []byte("x")); err == nil {
			t.Errorf("WriteFile(%q) wrote a file", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(fx.root, "hello.txt")); string(b) != "hello\n" {
		t.Errorf("hello.txt changed to %q", b)
	}
	// ".." after missing directories is still resolved lexically: Write
	// creates the parents it names.
	for p, want := range map[string]string{"m1/m2/../x": "m1/x", "m1/m2/../../hello.txt": "hello.txt", "sub/m/../deeper/inner.txt": "sub/deeper/inner.txt"} {
		if got, err := fx.sb.RealPath(p); err != nil || got != want {
			t.Errorf("RealPath(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
}

// "new/." and "a/b/.." name directories. Writing them must fail, not
// create a file called "new" or "a".
func TestWriteFileRefusesPathsNamingADirectory(t *testing.T) {
	fx := newFixture(t)
	for _, p := range []string{"new/.", "a/b/..", "sub/.", "sub/deeper/..", "./.", "x/./."} {
		_, err := fx.sb.WriteFile(context.Background(), p, []byte("x"))
		if !errors.Is(err, workspace.ErrNotRegular) {
			t.Errorf("WriteFile(%q) = %v, want an error matching workspace.ErrNotRegular", p, err)
		}
	}
	for _, name := range []string{"new", "a", "x"} {
		if _, err := os.Lstat(filepath.Join(fx.root, name)); err == nil {
			t.Errorf("%s was created", name)
		}
	}
	if fi, err := os.Lstat(filepath.Join(fx.root, "sub")); err != nil || !fi.IsDir() {
		t.Errorf("sub is no longer a directory: %v", err)
	}
}

// Paths longer than PATH_MAX are refused before anything is looked up.
func TestPathsOverPathMaxAreInvalid(t *testing.T) {
	fx := newFixture(t)
	long := strings.Repeat("a/", 2100) + "f" // 4201 bytes
	for name, op := range map[string]func() error{
		"Rel":      func() error { _, err := fx.sb.Rel(long); return err },
		"RealPath": func() error { _, err := fx.sb.RealPath(long); return err },
		"WriteFile": func() error {
			_, err := fx.sb.WriteFile(context.Background(), long, []byte("x"))
			return err
		},
	} {
		if err := op(); !errors.Is(err, fs.ErrInvalid) || !strings.Contains(err.Error(), "4096") {
			t.Errorf("%s of a %d-byte path = %.100v; want fs.ErrInvalid naming the limit", name, len(long), err)
		}
	}
	if _, err := os.Lstat(filepath.Join(fx.root, "a")); err == nil {
		t.Error("a directory was created for a refused path")
	}
}

// UpdateFile must read a file to its end, not to the size a stat reported
// before the read: a file that grew, or one of a /proc-like file system
// (size 0), would otherwise be written back without its tail.
func TestUpdateFileReadsPastTheStatSize(t *testing.T) {
	sb, err := fsroot.Open("/proc/self")
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	defer sb.Close()
	fi, err := sb.Root().Stat("status")
	if err != nil || fi.Size() != 0 {
		t.Skipf("/proc/self/status does not report a size of 0 here (%v, %v)", fi, err)
	}
	var seen []byte
	sb.UpdateFile(context.Background(), "status", 0, func(old []byte) ([][]byte, error) {
		seen = append(seen, old...)
		return nil, errors.New("done: nothing to write")
	})
	if !bytes.HasPrefix(seen, []byte("Name:")) || !bytes.Contains(seen, []byte("\nPid:")) {
		t.Errorf("the update saw %q; want the whole file", seen)
	}
}

// A change another process makes between UpdateFile's read and its rename
// must not be overwritten with content computed from the old file (a lost
// update): UpdateFile fails with ErrChanged and leaves the other writer's
// content.
func TestUpdateFileDoesNotOverwriteAConcurrentChange(t *testing.T) {
	fx := newFixture(t)
	p := filepath.Join(fx.root, "doc.txt")
	for name, change := range map[string]func(){
		"written in place": func() { must(t, os.WriteFile(p, []byte("theirs, longer\n"), 0o644)) },
		"appended to": func() {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
			must(t, err)
			f.WriteString("their line\n")
			f.Close()
		},
		"replaced by a rename": func() {
			must(t, os.WriteFile(p+".new", []byte("mine\n"), 0o644)) // same size as before
			must(t, os.Rename(p+".new", p))
		},
		"removed": func() { must(t, os.Remove(p)) },
	} {
		t.Run(name, func(t *testing.T) {
			must(t, os.WriteFile(p, []byte("mine\n"), 0o644))
			_, err := fx.sb.UpdateFile(context.Background(), "doc.txt", 1<<20, func(old []byte) ([][]byte, error) {
				change() // another process writes while the update is computed
				return [][]byte{bytes.ToUpper(old)}, nil
			})
			if !errors.Is(err, workspace.ErrChanged) {
				t.Errorf("UpdateFile = %v; want an error wrapping workspace.ErrChanged", err)
			}
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("MINE")) {
				t.Errorf("the concurrent change was overwritten: %q", b)
			}
			assertNoTemps(t, fx.root)
		})
	}
}
