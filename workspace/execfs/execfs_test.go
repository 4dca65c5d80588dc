package execfs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/execfs"
)

// each runs fn once per shell world, in a subtest named after it.
func each(t *testing.T, fn func(t *testing.T, sh shell)) {
	t.Helper()
	for _, sh := range shells(t) {
		t.Run(sh.name, func(t *testing.T) { fn(t, sh) })
	}
}

func mustWrite(t *testing.T, name string, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, f *execfs.FS, name string) ([]byte, workspace.File) {
	t.Helper()
	fl, err := f.Open(context.Background(), name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	defer fl.Close()
	b, err := io.ReadAll(fl)
	if err != nil {
		t.Fatalf("reading %q: %v", name, err)
	}
	return b, fl
}

// allBytes is every byte value, twice, and a few sequences printf and the
// shells treat specially.
func allBytes() []byte {
	var b []byte
	for range 2 {
		for i := range 256 {
			b = append(b, byte(i))
		}
	}
	return append(b, []byte("\\0101 \\c %s %n %% \\\\ $(x) `x` é \xff\xfe\n\n")...)
}

func TestWriteThenReadKeepsEveryByte(t *testing.T) {
	big := bytes.Repeat(allBytes(), 700) // ~370 KiB: several execs without stdin
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, func(o *execfs.Options) { o.ChunkSize = 64 << 10 })
		for name, data := range map[string][]byte{
			"empty": {}, "text": []byte("hello\nworld\n"), "bytes": allBytes(), "big": big,
			"nl-end": []byte("x\n\n\n"), "chunk": bytes.Repeat([]byte("a"), 64<<10),
		} {
			res, err := f.WriteFile(context.Background(), "d/"+name, data)
			if err != nil {
				t.Fatalf("WriteFile(%s): %v", name, err)
			}
			if res.Path != "d/"+name || !res.Created || res.BytesWritten != int64(len(data)) {
				t.Errorf("WriteFile(%s) = %+v", name, res)
			}
			if got, _ := os.ReadFile(filepath.Join(root, "d", name)); !bytes.Equal(got, data) {
				t.Errorf("%s on disk: %d bytes, want %d equal ones", name, len(got), len(data))
			}
			if got, _ := readAll(t, f, "d/"+name); !bytes.Equal(got, data) {
				t.Errorf("%s read back: %d bytes, want %d equal ones", name, len(got), len(data))
			}
		}
		leftovers(t, filepath.Join(root, "d"))
	})
}

// leftovers fails when dir holds a temporary file of a write.
func leftovers(t *testing.T, dir string) {
	t.Helper()
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if strings.Contains(e.Name(), ".helikon-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestWriteKeepsModeAndStickyButNotSetID(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, nil)
		for _, c := range []struct{ set, want fs.FileMode }{
			{0o751, 0o751}, {0o600, 0o600},
			{0o755 | fs.ModeSetuid | fs.ModeSetgid, 0o755}, {0o644 | fs.ModeSticky, 0o644 | fs.ModeSticky},
		} {
			p := filepath.Join(root, "f")
			mustWrite(t, p, "old")
			if err := os.Chmod(p, c.set); err != nil {
				t.Fatal(err)
			}
			res, err := f.WriteFile(context.Background(), "f", []byte("new"))
			if err != nil || res.Created {
				t.Fatalf("WriteFile = %+v, %v", res, err)
			}
			fi, _ := os.Stat(p)
			if fi.Mode() != c.want {
				t.Errorf("mode %v rewritten: %v, want %v", c.set, fi.Mode(), c.want)
			}
		}
	})
}

func TestWriteFollowsLinkInsideAndCreatesParents(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, nil)
		mustWrite(t, filepath.Join(root, "sub/target"), "old")
		os.Symlink("sub/target", filepath.Join(root, "lnk"))
		os.Symlink("sub", filepath.Join(root, "dirlnk"))
		res, err := f.WriteFile(context.Background(), "lnk", []byte("new"))
		if err != nil || res.Path != "sub/target" || res.Created {
			t.Fatalf("WriteFile(lnk) = %+v, %v", res, err)
		}
		if fi, _ := os.Lstat(filepath.Join(root, "lnk")); fi.Mode()&fs.ModeSymlink == 0 {
			t.Error("the link was replaced by a file")
		}
		res, err = f.WriteFile(context.Background(), "dirlnk/a/b/c.txt", []byte("x"))
		if err != nil || res.Path != "sub/a/b/c.txt" || !res.Created {
			t.Fatalf("WriteFile(dirlnk/a/b/c.txt) = %+v, %v", res, err)
		}
		res, err = f.WriteFile(context.Background(), filepath.Join(root, "abs.txt"), []byte("x"))
		if err != nil || res.Path != "abs.txt" {
			t.Fatalf("WriteFile(absolute inside) = %+v, %v", res, err)
		}
	})
}

// The errors every operation returns for the ways a path can be wrong, on
// a tree with links that lead out.
func TestOperationsMapErrors(t *testing.T) {
	outside := t.TempDir()
	mustWrite(t, filepath.Join(outside, "secret"), "secret")
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, nil)
		mustWrite(t, filepath.Join(root, "file"), "x")
		os.Mkdir(filepath.Join(root, "dir"), 0o755)
		rel, _ := filepath.Rel(root, outside)
		for name, target := range map[string]string{
			"abs": "/", "absin": filepath.Join(root, "file"), "up": "..", "dir/up2": "../..",
			"out": rel, "loop1": "loop2", "loop2": "loop1", "dangling": "nowhere/x",
		} {
			if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
				t.Fatal(err)
			}
		}
		chain := "file"
		for i := range 9 {
			name := "c" + string(rune('0'+i))
			os.Symlink(chain, filepath.Join(root, name))
			chain = name
		}
		ctx := context.Background()
		cases := []struct {
			path string
			want error
		}{
			{"../x", workspace.ErrOutside},
			{"dir/../../x", workspace.ErrOutside},
			{"/etc/passwd", workspace.ErrOutside},
			{"abs/etc/passwd", workspace.ErrOutside},
			{"absin", workspace.ErrOutside},
			{"up/x", workspace.ErrOutside},
			{"dir/up2/x", workspace.ErrOutside},
			{"out/secret", workspace.ErrOutside},
			{"loop1", syscall.ELOOP},
			{"c8", syscall.ELOOP},
			{"missing", fs.ErrNotExist},
			{"dir/missing", fs.ErrNotExist},
			{"file/x", syscall.ENOTDIR},
			{"file/", syscall.ENOTDIR},
			{"file/..", syscall.ENOTDIR},
			{strings.Repeat("a/", 2049), fs.ErrInvalid},
			{"", fs.ErrInvalid},
			{"a\x00b", fs.ErrInvalid},
		}
		for _, c := range cases {
			if _, err := f.Stat(ctx, c.path); !errors.Is(err, c.want) {
				t.Errorf("Stat(%q) = %v, want %v", c.path, err, c.want)
			}
			if _, err := f.Open(ctx, c.path); !errors.Is(err, c.want) {
				t.Errorf("Open(%q) = %v, want %v", c.path, err, c.want)
			}
			if c.want == fs.ErrNotExist {
				continue // writes create it
			}
			if _, err := f.WriteFile(ctx, c.path, []byte("pwned")); err == nil {
				t.Errorf("WriteFile(%q) succeeded", c.path)
			}
		}
		// Eight links are followed, as os.Root follows them.
		if b, _ := readAll(t, f, "c7"); string(b) != "x" {
			t.Errorf("c7 read %q", b)
		}
		// A dangling link is followed to create its target.
		if res, err := f.WriteFile(ctx, "dangling", []byte("d")); err != nil || res.Path != "nowhere/x" {
			t.Errorf("WriteFile(dangling) = %+v, %v", res, err)
		}
		if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "secret" {
			t.Errorf("the outside file changed: %q", b)
		}
		if es, _ := os.ReadDir(outside); len(es) != 1 {
			t.Errorf("files appeared outside: %v", es)
		}
	})
}

func TestOpenRefusesDirectoriesAndFIFOsWithoutBlocking(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, nil)
		os.Mkdir(filepath.Join(root, "dir"), 0o755)
		if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Symlink("fifo", filepath.Join(root, "tofifo"))
		// A blocked open would hold the call until this deadline and fail
		// with it instead of ErrNotRegular.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, p := range []string{".", "dir", "dir/", "fifo", "tofifo"} {
			if _, err := f.Open(ctx, p); !errors.Is(err, workspace.ErrNotRegular) {
				t.Errorf("Open(%q) = %v, want ErrNotRegular", p, err)
			}
			if _, err := f.UpdateFile(ctx, p, 0, func(b []byte) ([][]byte, error) { return nil, nil }); !errors.Is(err, workspace.ErrNotRegular) {
				t.Errorf("UpdateFile(%q) = %v, want ErrNotRegular", p, err)
			}
		}
		for _, p := range []string{"fifo", "tofifo", "dir", "dir/", "."} {
			if _, err := f.WriteFile(ctx, p, []byte("x")); !errors.Is(err, workspace.ErrNotRegular) {
				t.Errorf("WriteFile(%q) = %v, want ErrNotRegular", p, err)
			}
		}
		if fi, err := f.Stat(ctx, "tofifo"); err != nil || fi.Mode().Type() != fs.ModeNamedPipe || fi.Name() != "tofifo" {
			t.Errorf("Stat(tofifo) = %v, %v", fi, err)
		}
	})
}

func TestUpdateFileAppliesAndDetectsAChange(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, nil)
		p := filepath.Join(root, "f")
		mustWrite(t, p, "one")
		ctx := context.Background()
		res, err := f.UpdateFile(ctx, "f", 100, func(b []byte) ([][]byte, error) {
			return [][]byte{b, []byte(" two")}, nil
		})
		if b, _ := os.ReadFile(p); err != nil || string(b) != "one two" || res.BytesWritten != 7 || res.Created {
			t.Fatalf("UpdateFile = %+v, %v; file %q", res, err, b)
		}
		// Another writer between the read and the write: its change stays.
		_, err = f.UpdateFile(ctx, "f", 100, func(b []byte) ([][]byte, error) {
			mustWrite(t, p, "theirs, longer")
			return [][]byte{[]byte("mine")}, nil
		})
		if b, _ := os.ReadFile(p); !errors.Is(err, workspace.ErrChanged) || string(b) != "theirs, longer" {
			t.Errorf("UpdateFile over a change = %v; file %q", err, b)
		}
		// The file removed between the read and the write.
		_, err = f.UpdateFile(ctx, "f", 100, func(b []byte) ([][]byte, error) {
			os.Remove(p)
			return [][]byte{[]byte("mine")}, nil
		})
		if _, serr := os.Stat(p); !errors.Is(err, workspace.ErrChanged) || serr == nil {
			t.Errorf("UpdateFile over a removal = %v; stat %v", err, serr)
		}
		mustWrite(t, p, "0123456789")
		if _, err := f.UpdateFile(ctx, "f", 9, func(b []byte) ([][]byte, error) { return nil, nil }); !errors.Is(err, workspace.ErrTooLarge) {
			t.Errorf("UpdateFile over maxSize = %v", err)
		}
		wantErr := errors.New("refused")
		if _, err := f.UpdateFile(ctx, "f", 0, func(b []byte) ([][]byte, error) { return nil, wantErr }); err != wantErr {
			t.Errorf("UpdateFile whose update fails = %v", err)
		}
		if _, err := f.UpdateFile(ctx, "missing", 0, func(b []byte) ([][]byte, error) { return nil, nil }); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("UpdateFile(missing) = %v", err)
		}
		leftovers(t, root)
	})
}

func TestChunkedReadFailsWhenTheFileIsReplaced(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, func(o *execfs.Options) { o.ChunkSize = 64 << 10 })
		p := filepath.Join(root, "big")
		mustWrite(t, p, strings.Repeat("a", 200<<10))
		fl, err := f.Open(context.Background(), "big")
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64<<10)
		if _, err := io.ReadFull(fl, buf); err != nil {
			t.Fatal(err)
		}
		os.Rename(p, p+".old")
		mustWrite(t, p, strings.Repeat("b", 200<<10))
		if _, err := io.ReadAll(fl); !errors.Is(err, workspace.ErrChanged) {
			t.Errorf("reading on after the file was replaced = %v, want ErrChanged", err)
		}
		if fi, _ := fl.Stat(); fi.Size() != 200<<10 || fl.Path() != "big" {
			t.Errorf("File.Stat = %v, Path %q", fi, fl.Path())
		}
	})
}

// An open reads in chunks: one exec per chunk, never the whole file at
// once.
func TestOpenReadsOneChunkPerExec(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, func(o *execfs.Options) { o.ChunkSize = 64 << 10 })
		mustWrite(t, filepath.Join(root, "big"), strings.Repeat("z", 300<<10))
		before := sh.r.execs.Load()
		b, _ := readAll(t, f, "big")
		if len(b) != 300<<10 {
			t.Fatalf("read %d bytes", len(b))
		}
		if n := sh.r.execs.Load() - before; n != 5 {
			t.Errorf("reading 300 KiB in 64 KiB chunks took %d execs, want 5", n)
		}
		before = sh.r.execs.Load()
		readAll(t, f, "big") // nothing: only the first chunk is read by Open
		f.Stat(context.Background(), "big")
		if n := sh.r.execs.Load() - before; n != 6 {
			t.Errorf("another read and a stat took %d execs, want 6", n)
		}
	})
}

func TestReadDirListsEntriesNotFollowed(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, nil)
		mustWrite(t, filepath.Join(root, "d/b.txt"), "bb")
		mustWrite(t, filepath.Join(root, "d/.hidden"), "")
		mustWrite(t, filepath.Join(root, "d/..dots"), "")
		os.Mkdir(filepath.Join(root, "d/sub"), 0o755)
		os.Symlink("/", filepath.Join(root, "d/a-link"))
		os.Symlink("d", filepath.Join(root, "tod"))
		es, err := f.ReadDir(context.Background(), "tod")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range es {
			got = append(got, e.Name()+":"+e.Type().String())
		}
		want := "..dots:----------,.hidden:----------,a-link:L---------,b.txt:----------,sub:d---------"
		if strings.Join(got, ",") != want {
			t.Errorf("ReadDir = %s\nwant %s", strings.Join(got, ","), want)
		}
		if fi, _ := es[3].Info(); fi.Size() != 2 {
			t.Errorf("b.txt size %d", fi.Size())
		}
		if es, err := f.ReadDir(context.Background(), "d/sub"); err != nil || len(es) != 0 {
			t.Errorf("empty directory: %v, %v", es, err)
		}
		if _, err := f.ReadDir(context.Background(), "d/b.txt"); !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("ReadDir of a file = %v", err)
		}
		if _, err := f.ReadDir(context.Background(), "d/a-link"); !errors.Is(err, workspace.ErrOutside) {
			t.Errorf("ReadDir through an absolute link = %v", err)
		}
	})
}

// More entries than one stat call takes.
func TestReadDirOfALargeDirectory(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, nil)
		for i := range 600 {
			mustWrite(t, filepath.Join(root, "many", "f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+strconv.Itoa(i)), "")
		}
		es, err := f.ReadDir(context.Background(), "many")
		if err != nil || len(es) != 600 {
			t.Fatalf("ReadDir = %d entries, %v", len(es), err)
		}
	})
}

func TestRemoveAndRename(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, nil)
		ctx := context.Background()
		mustWrite(t, filepath.Join(root, "a"), "a")
		mustWrite(t, filepath.Join(root, "b"), "b")
		mustWrite(t, filepath.Join(root, "full/x"), "x")
		os.Mkdir(filepath.Join(root, "empty"), 0o755)
		os.Symlink("a", filepath.Join(root, "toa"))
		os.Symlink("/", filepath.Join(root, "abs"))
		if err := f.Rename(ctx, "a", "b"); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "b")); string(b) != "a" {
			t.Errorf("b after rename: %q", b)
		}
		if err := f.Rename(ctx, "toa", "full/link"); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Lstat(filepath.Join(root, "full/link")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("the link was not renamed as a link: %v", err)
		}
		for _, c := range []struct {
			op   func() error
			want error
		}{
			{func() error { return f.Rename(ctx, "b", "missing/b") }, fs.ErrNotExist},
			{func() error { return f.Rename(ctx, "nothing", "c") }, fs.ErrNotExist},
			{func() error { return f.Rename(ctx, "b", "../b") }, workspace.ErrOutside},
			{func() error { return f.Rename(ctx, "b", "abs/tmp/b") }, workspace.ErrOutside},
			{func() error { return f.Remove(ctx, "full") }, syscall.ENOTEMPTY},
			{func() error { return f.Remove(ctx, "nothing") }, fs.ErrNotExist},
			{func() error { return f.Remove(ctx, "abs/etc/passwd") }, workspace.ErrOutside},
			{func() error { return f.Remove(ctx, ".") }, syscall.EINVAL},
			{func() error { return f.Remove(ctx, "full/..") }, syscall.EINVAL},
		} {
			if err := c.op(); !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
		}
		for _, p := range []string{"b", "empty", "abs", "full/link"} {
			if err := f.Remove(ctx, p); err != nil {
				t.Errorf("Remove(%s): %v", p, err)
			}
			if _, err := os.Lstat(filepath.Join(root, p)); err == nil {
				t.Errorf("%s still there", p)
			}
		}
		if _, err := os.Stat("/etc/passwd"); err != nil {
			t.Errorf("/etc/passwd: %v", err)
		}
	})
}

// A write in several execs that fails in the middle leaves the old file
// and no temporary file.
func TestFailedChunkedWriteLeavesTheOldFile(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		if !sh.opts.NoStdin {
			t.Skip("one exec per write with stdin")
		}
		root := t.TempDir()
		mustWrite(t, filepath.Join(root, "f"), "old")
		fr := &failingRunner{Runner: sh.r, failAt: 3}
		o := sh.opts
		o.MaxArgvBytes = 64 << 10
		f, err := execfs.New(context.Background(), fr, root, &o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteFile(context.Background(), "f", bytes.Repeat([]byte("n"), 300<<10))
		if err == nil {
			t.Fatal("the write succeeded")
		}
		if b, _ := os.ReadFile(filepath.Join(root, "f")); string(b) != "old" {
			t.Errorf("f is %d bytes", len(b))
		}
		leftovers(t, root)
	})
}

// failingRunner fails its failAt-th exec (counting from 1).
type failingRunner struct {
	execfs.Runner
	failAt, n int
}

func (r *failingRunner) Exec(ctx context.Context, argv []string, stdin []byte, maxStdout int64) ([]byte, []byte, int, error) {
	r.n++
	if r.n == r.failAt {
		return nil, nil, 0, errors.New("connection reset")
	}
	return r.Runner.Exec(ctx, argv, stdin, maxStdout)
}

func TestRootGoneIsErrGone(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, nil)
		os.RemoveAll(root)
		if _, err := f.Stat(context.Background(), "x"); !errors.Is(err, workspace.ErrGone) {
			t.Errorf("Stat in a removed root = %v", err)
		}
		if _, err := execfs.New(context.Background(), sh.r, root, &sh.opts); !errors.Is(err, workspace.ErrGone) {
			t.Errorf("New on a missing root = %v", err)
		}
	})
}

// The runner's failure reaches the caller wrapped, and a cancelled context
// is reported as such.
func TestRunnerErrorsAreWrapped(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, _ := newFS(t, sh, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := f.Stat(ctx, "x"); !errors.Is(err, context.Canceled) {
			t.Errorf("Stat with a cancelled context = %v", err)
		}
	})
}

// A name of 255 bytes (NAME_MAX), in one-, two- and three-byte
// characters, gets a temporary file name that fits too: the base is cut
// to 200 bytes, not characters.
func TestWritesOfLongNamesFitTheirTemporaryFile(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, _ := newFS(t, sh, nil)
		for _, name := range []string{strings.Repeat("é", 127), strings.Repeat("x", 255), strings.Repeat("日", 85)} {
			if _, err := f.WriteFile(context.Background(), name, []byte("x")); err != nil {
				t.Errorf("%d bytes: %v", len(name), err)
			}
		}
	})
}
