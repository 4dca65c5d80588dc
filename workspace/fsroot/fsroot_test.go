package fsroot_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/fsroot"
)

// fixture is a sandbox root next to an "outside" directory holding a secret,
// with links inside the root that try every way out.
type fixture struct {
	sb      *fsroot.FS
	root    string // sandbox root (symlinks evaluated)
	outside string // sibling directory outside the root
	evil    string // sibling whose name has the root as a string prefix
}

const secret = "TOP-SECRET-OUTSIDE"

func newFixture(tb testing.TB) *fixture {
	tb.Helper()
	base, err := filepath.EvalSymlinks(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	fx := &fixture{
		root:    filepath.Join(base, "root"),
		outside: filepath.Join(base, "outside"),
		evil:    filepath.Join(base, "root-evil"),
	}
	for _, d := range []string{fx.root, fx.outside, fx.evil, filepath.Join(fx.root, "sub", "deeper")} {
		must(tb, os.MkdirAll(d, 0o755))
	}
	must(tb, os.WriteFile(filepath.Join(fx.outside, "secret.txt"), []byte(secret), 0o644))
	must(tb, os.WriteFile(filepath.Join(fx.evil, "secret.txt"), []byte(secret), 0o644))
	must(tb, os.WriteFile(filepath.Join(fx.root, "hello.txt"), []byte("hello\n"), 0o644))
	must(tb, os.WriteFile(filepath.Join(fx.root, "sub", "deeper", "inner.txt"), []byte("inner\n"), 0o644))
	links := map[string]string{
		"abs-out":      fx.outside,                              // absolute, outside
		"abs-out-file": filepath.Join(fx.outside, "secret.txt"), // absolute file link
		"rel-out":      "../outside",                            // relative, climbing out
		"rel-out-file": "../outside/secret.txt",
		"proc-root":    "/proc/self/root" + fx.outside, // the /proc way out
		"proc-cwd":     "/proc/self/cwd",
		"abs-in":       filepath.Join(fx.root, "hello.txt"), // absolute, though inside
		"rel-in":       "hello.txt",
		"sub/up-in":    "../hello.txt",
		"sub/deep-out": "../../outside/secret.txt",
		"chain1":       "chain2",
		"chain2":       "sub/deep-out",
		"loop1":        "loop2",
		"loop2":        "loop1",
		"dangling":     "sub/newfile.txt",
		"evil":         "../root-evil",
	}
	for name, target := range links {
		must(tb, os.Symlink(target, filepath.Join(fx.root, name)))
	}
	sb, err := fsroot.Open(fx.root)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sb.Close() })
	fx.sb = sb
	return fx
}

func must(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

// attackPaths are path forms that must never reach outside the root; they
// seed the fuzz targets too.
func attackPaths(fx *fixture) []string {
	return []string{
		"../outside/secret.txt",
		"../../../../../../../../etc/passwd",
		"sub/../../outside/secret.txt",
		"sub/deeper/../../../outside/secret.txt",
		"./../outside/secret.txt",
		"..",
		"../",
		"sub/../..",
		fx.outside + "/secret.txt",
		fx.evil + "/secret.txt",
		fx.root + "/../outside/secret.txt",
		fx.root + "-evil/secret.txt",
		"/etc/passwd",
		"/proc/self/root/etc/passwd",
		"/proc/self/cwd/secret.txt",
		"/proc/self/root" + fx.outside + "/secret.txt",
		"abs-out/secret.txt",
		"abs-out-file",
		"abs-out/",
		"rel-out/secret.txt",
		"rel-out/",
		"rel-out",
		"rel-out-file",
		"rel-out-file/",
		"proc-root/secret.txt",
		"proc-cwd/secret.txt",
		"sub/deep-out",
		"chain1",
		"evil/secret.txt",
		"rel-out/../outside/secret.txt",
		"sub/deeper/../../rel-out/secret.txt",
	}
}

func TestOpenRefusesMissingAndNonDirectory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	must(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct{ dir, want string }{
		{filepath.Join(dir, "missing"), "no such directory"},
		{file, "not a directory"},
		{"", "empty directory name"},
	} {
		_, err := fsroot.Open(tc.dir)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q) = %v, want an error containing %q", tc.dir, err, tc.want)
		}
	}
}

func TestOpenResolvesSymlinkedRoot(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	real := filepath.Join(base, "real")
	must(t, os.Mkdir(real, 0o755))
	must(t, os.Symlink("real", filepath.Join(base, "link")))
	must(t, os.WriteFile(filepath.Join(real, "a.txt"), []byte("a"), 0o644))
	sb, err := fsroot.Open(filepath.Join(base, "link"))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if sb.Dir() != real {
		t.Errorf("Dir() = %s, want %s", sb.Dir(), real)
	}
	// Both spellings of the root are accepted in absolute paths.
	for _, p := range []string{filepath.Join(real, "a.txt"), filepath.Join(base, "link", "a.txt")} {
		rel, err := sb.Rel(p)
		if err != nil || rel != "a.txt" {
			t.Errorf("Rel(%s) = %q, %v; want a.txt", p, rel, err)
		}
	}
}

func TestRelDeniesPathsOutsideRoot(t *testing.T) {
	fx := newFixture(t)
	for _, p := range []string{
		"..", "../x", "a/../../x", fx.outside, fx.evil + "/secret.txt", fx.root + "-evil", "/", "/etc/passwd",
		fx.root + "/../outside",
	} {
		_, err := fx.sb.Rel(p)
		if !errors.Is(err, workspace.ErrOutside) {
			t.Errorf("Rel(%q) = %v, want denied", p, err)
		}
		if err != nil && !strings.Contains(err.Error(), p) {
			t.Errorf("Rel(%q): error %q does not name the path", p, err)
		}
	}
}

func TestRelAcceptsPathsInsideRoot(t *testing.T) {
	fx := newFixture(t)
	for p, want := range map[string]string{
		"a.txt":                       "a.txt",
		"sub/../a.txt":                "sub/../a.txt", // the root resolves it, links first
		fx.root:                       ".",
		fx.root + "/":                 ".",
		fx.root + "/a.txt":            "a.txt",
		fx.root + "//sub/./x/../y":    "sub/y",
		fx.root + "/sub/":             "sub/",
		fx.root + "/sub/../../root/a": "a",
	} {
		got, err := fx.sb.Rel(p)
		if err != nil || got != want {
			t.Errorf("Rel(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
}

func TestRelRejectsEmptyAndNUL(t *testing.T) {
	fx := newFixture(t)
	for _, p := range []string{"", "a\x00b"} {
		if _, err := fx.sb.Rel(p); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Rel(%q) = %v, want invalid args", p, err)
		}
	}
}

func TestOpenRegularDeniesEveryWayOut(t *testing.T) {
	fx := newFixture(t)
	for _, p := range attackPaths(fx) {
		f, _, err := fx.sb.OpenRegular(p)
		if err == nil {
			b, _ := io.ReadAll(f)
			f.Close()
			t.Errorf("OpenRegular(%q) succeeded and read %q; want denied", p, b)
			continue
		}
		if !errors.Is(err, workspace.ErrOutside) && !errors.Is(err, syscall.ELOOP) {
			t.Errorf("OpenRegular(%q) = %v, want denied", p, err)
		}
	}
}

func TestOpenRegularFollowsLinksInside(t *testing.T) {
	fx := newFixture(t)
	for _, p := range []string{"hello.txt", "rel-in", "sub/up-in", fx.root + "/hello.txt", "sub/deeper/../../hello.txt"} {
		f, _, err := fx.sb.OpenRegular(p)
		if err != nil {
			t.Errorf("OpenRegular(%q) = %v", p, err)
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		if string(b) != "hello\n" {
			t.Errorf("OpenRegular(%q) read %q", p, b)
		}
	}
}

func TestOpenRegularMissingFileIsNotExist(t *testing.T) {
	fx := newFixture(t)
	for _, p := range []string{"nope.txt", "sub/nope.txt", "dangling"} {
		_, _, err := fx.sb.OpenRegular(p)
		var pe *fs.PathError
		if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != p || pe.Op != "open" {
			t.Errorf("OpenRegular(%q) = %v, want an *fs.PathError of open naming %s, wrapping fs.ErrNotExist", p, err, p)
		}
	}
}

func TestOpenRegularRefusesSpecialFilesWithoutBlocking(t *testing.T) {
	fx := newFixture(t)
	must(t, syscall.Mkfifo(filepath.Join(fx.root, "fifo"), 0o644))
	tests := map[string]string{"fifo": "named pipe", "sub": "directory", ".": "directory"}
	if os.Geteuid() == 0 {
		// A device node: root can make one; /dev/null's numbers are 1,3.
		if err := syscall.Mknod(filepath.Join(fx.root, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
			tests["null"] = "device"
		}
	}
	ln, err := listenUnix(filepath.Join(fx.root, "sock"))
	if err == nil {
		defer ln.Close()
		tests["sock"] = "socket"
	}
	for p, want := range tests {
		_, _, err := fx.sb.OpenRegular(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("OpenRegular(%q) = %v, want an error saying %q", p, err, want)
		}
	}
	if _, ok := tests["null"]; !ok {
		t.Log("device-node case not exercised: mknod is not permitted here")
	}
}

func TestRealPathResolvesLinksInside(t *testing.T) {
	fx := newFixture(t)
	for p, want := range map[string]string{
		"rel-in":             "hello.txt",
		"sub/up-in":          "hello.txt",
		"dangling":           "sub/newfile.txt",
		"sub/deeper/../x":    "sub/x",
		"new/dir/file":       "new/dir/file",
		".":                  ".",
		fx.root + "/rel-in":  "hello.txt",
		"sub/deeper/":        "sub/deeper",
		"missing/../a":       "a",
		"missing/../rel-in":  "hello.txt",
		"sub/deeper/../../a": "a",
	} {
		got, err := fx.sb.RealPath(p)
		if err != nil || got != want {
			t.Errorf("RealPath(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
}

func TestRealPathDeniesLinksOutside(t *testing.T) {
	fx := newFixture(t)
	for _, p := range attackPaths(fx) {
		got, err := fx.sb.RealPath(p)
		if !errors.Is(err, workspace.ErrOutside) {
			t.Errorf("RealPath(%q) = %q, %v; want denied", p, got, err)
		}
	}
	if _, err := fx.sb.RealPath("abs-in"); !errors.Is(err, workspace.ErrOutside) {
		t.Errorf("RealPath(abs-in) = %v; want ErrOutside: absolute links are refused like os.Root does", err)
	}
	if _, err := fx.sb.RealPath("loop1"); !errors.Is(err, syscall.ELOOP) {
		t.Errorf("RealPath(loop1) = %v; want an ELOOP error", err)
	}
}

func TestWriteFileDeniesEveryWayOut(t *testing.T) {
	fx := newFixture(t)
	before := snapshot(t, filepath.Dir(fx.root), fx.root)
	for _, p := range append(attackPaths(fx), "rel-out/new.txt", "abs-out/new.txt", "proc-root/new.txt", "evil/new.txt") {
		_, err := fx.sb.WriteFile(context.Background(), p, []byte("PWNED"))
		if !errors.Is(err, workspace.ErrOutside) && !errors.Is(err, syscall.ELOOP) {
			t.Errorf("WriteFile(%q) = %v, want denied", p, err)
		}
		_, err = fx.sb.UpdateFile(context.Background(), p, 0, func([]byte) ([][]byte, error) { return [][]byte{[]byte("PWNED")}, nil })
		if !errors.Is(err, workspace.ErrOutside) && !errors.Is(err, syscall.ELOOP) {
			t.Errorf("UpdateFile(%q) = %v, want denied", p, err)
		}
	}
	if after := snapshot(t, filepath.Dir(fx.root), fx.root); after != before {
		t.Errorf("files outside the root changed:\nbefore %s\nafter  %s", before, after)
	}
}

// snapshot lists every file under dir except those under skip, with content.
func snapshot(tb testing.TB, dir, skip string) string {
	tb.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if p == skip {
			return filepath.SkipDir
		}
		b.WriteString(p)
		if d.Type().IsRegular() {
			c, _ := os.ReadFile(p)
			b.WriteString("=" + string(c))
		}
		b.WriteString(";")
		return nil
	})
	return b.String()
}

func listenUnix(p string) (net.Listener, error) { return net.Listen("unix", p) }
