package execfs_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/execfs"
)

// hostile are file names that would be code, options or several words if
// a script took them as anything but a positional argument.
var hostile = []string{
	`a'b`, `a"b`, "$(touch PWNED)", "`touch PWNED`", "a;touch PWNED", "a|touch PWNED", "a&&touch PWNED",
	"-rf", "--", "-n", "-e", "-", "a\nb", "\n", "\nPWNED", "trailing\n", "a b", " lead", "*", "?", "[a-z]", "{a,b}",
	"$HOME", "${IFS}", "$1", "$@", `\`, `a\nb`, `\0101`, "%s%n%d", "%", ".hidden", "...", "..a", "\t",
	"é", "日本", "\x01ctl", "\x7f", "\xff\xfe", "~", "!x", "#x", "<x", ">x", "=x", "0", "x=$(id)",
}

// Every operation takes names with shell syntax in them as names: nothing
// runs, nothing else is touched, and ReadDir lists exactly them.
func TestNamesWithShellSyntaxAreOnlyNames(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, nil)
		ctx := context.Background()
		var want []string
		for _, name := range hostile {
			if sh.opts.TextOnly && !utf8.ValidString(name) {
				if _, err := f.WriteFile(ctx, "d/"+name, []byte(name)); !errors.Is(err, fs.ErrInvalid) {
					t.Errorf("WriteFile(%q) through a text-only runner = %v, want ErrInvalid", name, err)
				}
				continue
			}
			p := "d/" + name
			if _, err := f.WriteFile(ctx, p, []byte(name)); err != nil {
				t.Errorf("WriteFile(%q): %v", name, err)
				continue
			}
			if b, err := os.ReadFile(filepath.Join(root, "d", name)); err != nil || string(b) != name {
				t.Errorf("%q on disk: %q, %v", name, b, err)
			}
			if b, _ := readAll(t, f, p); string(b) != name {
				t.Errorf("%q read back: %q", name, b)
			}
			if fi, err := f.Stat(ctx, p); err != nil || fi.Size() != int64(len(name)) || fi.Name() != name {
				t.Errorf("Stat(%q) = %v, %v", name, fi, err)
			}
			if _, err := f.UpdateFile(ctx, p, 0, func(b []byte) ([][]byte, error) { return [][]byte{b, b}, nil }); err != nil {
				t.Errorf("UpdateFile(%q): %v", name, err)
			}
			if err := f.Rename(ctx, p, p+".2"); err != nil {
				t.Errorf("Rename(%q): %v", name, err)
			}
			want = append(want, name+".2")
		}
		es, err := f.ReadDir(ctx, "d")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range es {
			got = append(got, e.Name())
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("ReadDir lists %q\nwant %q", got, want)
		}
		for _, name := range want {
			if err := f.Remove(ctx, "d/"+name); err != nil {
				t.Errorf("Remove(%q): %v", name, err)
			}
		}
		if err := f.Remove(ctx, "d"); err != nil {
			t.Errorf("the directory is not empty after the removals: %v", err)
		}
		for _, canary := range []string{filepath.Join(root, "PWNED"), "/PWNED"} {
			if _, err := os.Lstat(canary); err == nil {
				os.Remove(canary)
				t.Errorf("a name ran as a command: %s exists", canary)
			}
		}
	})
}

// recorder keeps the argv of every exec.
type recorder struct {
	execfs.Runner
	argv [][]string
}

func (r *recorder) Exec(ctx context.Context, argv []string, stdin []byte, maxStdout int64) ([]byte, []byte, int, error) {
	r.argv = append(r.argv, argv)
	return r.Runner.Exec(ctx, argv, stdin, maxStdout)
}

// The script text of an operation is the same whatever the path or data:
// neither ever reaches it. Each operation runs with two different marked
// names and data, and the scripts of the two runs are compared and
// searched for the marks.
func TestScriptsNeverContainPathsOrData(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		root := t.TempDir()
		rec := &recorder{Runner: sh.r}
		f, err := execfs.New(context.Background(), rec, root, &sh.opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		scripts := map[string][]string{}
		for _, mark := range []string{"MARKone", "MARKtwo"} {
			ops := []struct {
				name string
				run  func()
			}{
				{"write", func() { f.WriteFile(ctx, mark+"/f", []byte(mark+"data")) }},
				{"update", func() {
					f.UpdateFile(ctx, mark+"/f", 0, func(b []byte) ([][]byte, error) { return [][]byte{b, []byte(mark)}, nil })
				}},
				{"stat", func() { f.Stat(ctx, mark+"/f") }},
				{"open", func() { f.Open(ctx, mark+"/f") }},
				{"readdir", func() { f.ReadDir(ctx, mark) }},
				{"rename", func() { f.Rename(ctx, mark+"/f", mark+"/g") }},
				{"remove", func() { f.Remove(ctx, mark+"/g") }},
			}
			for _, o := range ops {
				op, run := o.name, o.run
				rec.argv = nil
				run()
				if len(rec.argv) == 0 {
					t.Fatalf("%s ran no exec", op)
				}
				for _, argv := range rec.argv {
					if strings.Contains(argv[2], "MARK") {
						t.Errorf("%s: the script contains the path or data", op)
					}
					scripts[op] = append(scripts[op], argv[2])
				}
			}
		}
		for op, s := range scripts {
			half := len(s) / 2
			if !slices.Equal(s[:half], s[half:]) {
				t.Errorf("%s: the scripts differ between two paths", op)
			}
		}
	})
}

// Links that a command inside the workspace creates, pointing at its "/"
// or climbing out of the root, lead nowhere: every operation through them
// is refused, and nothing outside the root is read or changed.
func TestLinksMadeByACommandCannotLeadOut(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		base := t.TempDir()
		root := filepath.Join(base, "root")
		outside := filepath.Join(base, "outside")
		mustWrite(t, filepath.Join(outside, "secret"), "secret")
		os.Mkdir(root, 0o755)
		f, err := execfs.New(context.Background(), sh.r, root, &sh.opts)
		if err != nil {
			t.Fatal(err)
		}
		// The command runs in the workspace as an agent's Bash call would.
		mk := `cd "$1" && mkdir -p sub/deep && ln -s / slash && ln -s ../outside up && ln -s ../../../outside sub/deep/up3 &&
			ln -s "$2" absout && ln -s sub/deep/up3 chain && ln -s slash/etc etc && ln -s up/secret direct`
		if _, stderr, code, err := sh.r.Exec(context.Background(), []string{sh.opts.Shell, "-c", mk, "sh", root, outside}, nil, 1<<10); err != nil || code != 0 {
			t.Fatalf("making the links: %v, exit %d: %s", err, code, stderr)
		}
		before := tree(t, outside)
		ctx := context.Background()
		for _, p := range []string{
			"slash/etc/passwd", "slash" + outside + "/secret", "up/secret", "sub/deep/up3/secret", "absout/secret",
			"chain/secret", "etc/passwd", "direct", "up", "slash", "sub/deep/up3/new", "up/new", "slash/tmp/execfs-pwned",
		} {
			if b, err := f.Open(ctx, p); !errors.Is(err, workspace.ErrOutside) {
				t.Errorf("Open(%q) = %v, %v; want ErrOutside", p, b, err)
			}
			if _, err := f.Stat(ctx, p); !errors.Is(err, workspace.ErrOutside) {
				t.Errorf("Stat(%q) = %v; want ErrOutside", p, err)
			}
			if _, err := f.WriteFile(ctx, p, []byte("PWNED")); !errors.Is(err, workspace.ErrOutside) {
				t.Errorf("WriteFile(%q) = %v; want ErrOutside", p, err)
			}
			if _, err := f.UpdateFile(ctx, p, 0, func(b []byte) ([][]byte, error) { return [][]byte{[]byte("PWNED")}, nil }); !errors.Is(err, workspace.ErrOutside) {
				t.Errorf("UpdateFile(%q) = %v; want ErrOutside", p, err)
			}
			if _, err := f.ReadDir(ctx, p); !errors.Is(err, workspace.ErrOutside) {
				t.Errorf("ReadDir(%q) = %v; want ErrOutside", p, err)
			}
			if err := f.Rename(ctx, "sub", p+"/x"); !errors.Is(err, workspace.ErrOutside) {
				t.Errorf("Rename(sub, %q) = %v; want ErrOutside", p+"/x", err)
			}
			if err := f.Remove(ctx, p+"/secret"); !errors.Is(err, workspace.ErrOutside) {
				t.Errorf("Remove(%q) = %v; want ErrOutside", p+"/secret", err)
			}
		}
		if after := tree(t, outside); after != before {
			t.Errorf("the outside changed:\nbefore %s\nafter  %s", before, after)
		}
		if _, err := os.Lstat("/tmp/execfs-pwned"); err == nil {
			os.Remove("/tmp/execfs-pwned")
			t.Error("a file was written at the workspace's /tmp")
		}
	})
}

// tree describes every file under dir: names, modes and contents.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var b bytes.Buffer
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		b.WriteString(p + " " + fi.Mode().String())
		if d.Type().IsRegular() {
			c, _ := os.ReadFile(p)
			b.WriteString(" " + string(c))
		}
		b.WriteString("\n")
		return nil
	})
	return b.String()
}

// A hard link inside the root to a file outside is replaced by a write,
// never written through.
func TestWriteDoesNotWriteThroughAHardLink(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		base := t.TempDir()
		root := filepath.Join(base, "root")
		mustWrite(t, filepath.Join(base, "outside"), "outside")
		os.Mkdir(root, 0o755)
		if err := os.Link(filepath.Join(base, "outside"), filepath.Join(root, "hard")); err != nil {
			t.Skip(err)
		}
		f, err := execfs.New(context.Background(), sh.r, root, &sh.opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteFile(context.Background(), "hard", []byte("new")); err != nil {
			t.Fatal(err)
		}
		if _, err := f.UpdateFile(context.Background(), "hard", 0, func(b []byte) ([][]byte, error) { return [][]byte{b, b}, nil }); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(filepath.Join(base, "outside")); string(b) != "outside" {
			t.Errorf("the outside file holds %q", b)
		}
		if b, _ := os.ReadFile(filepath.Join(root, "hard")); string(b) != "newnew" {
			t.Errorf("hard holds %q", b)
		}
	})
}

// A write that expects the file its path leads to (workspace.ExpectWriter)
// is refused when a link made by a command in the workspace leads it to
// another file: nothing is written, no parent is made, the update is not
// called, in one exec, and the error names where the path led. Expected
// paths are compared whole, never as patterns.
func TestExpectWritesRefuseLinksToOtherFiles(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, func(o *execfs.Options) {
			if o.NoStdin {
				o.MaxArgvBytes = 64 << 10 // a large write takes several execs
			}
		})
		ctx := context.Background()
		mk := `cd "$1" && printf 'API_KEY=hunter2\n' >.env && mkdir -p secret src && printf kept >secret/keep &&
			ln -s .env innocent.txt && ln -s ../.env src/config && ln -s secret box && ln -s innocent.txt chain && ln -s box/keep kept`
		if _, stderr, code, err := sh.r.Exec(ctx, []string{sh.opts.Shell, "-c", mk, "sh", root}, nil, 1<<10); err != nil || code != 0 {
			t.Fatalf("making the links: %v, exit %d: %s", err, code, stderr)
		}
		before := tree(t, root)
		big := bytes.Repeat([]byte("b"), 200<<10)
		for _, c := range []struct{ name, real string }{
			{"innocent.txt", ".env"}, {"src/config", ".env"}, {"chain", ".env"}, {"kept", "secret/keep"},
			{"box/planted", "secret/planted"}, {"box/sub/deeper/planted", "secret/sub/deeper/planted"},
		} {
			lexical := path.Clean(c.name)
			for _, expect := range [][]string{{lexical}, {lexical, "src/main.go"}, {"*"}, {".e*", "?env"}, {"[.]env"}, nil} {
				for _, data := range [][]byte{[]byte("PWNED"), big} {
					n := sh.r.execs.Load()
					_, err := f.WriteFileExpect(ctx, c.name, data, expect)
					if ue := (*workspace.UnexpectedPathError)(nil); !errors.As(err, &ue) || ue.Path != c.real {
						t.Errorf("WriteFileExpect(%q, %d bytes, %q) = %v; want refused, naming %s", c.name, len(data), expect, err, c.real)
					}
					if got := sh.r.execs.Load() - n; got != 1 {
						t.Errorf("WriteFileExpect(%q, %d bytes, %q) cost %d execs, want 1", c.name, len(data), expect, got)
					}
				}
				called := false
				_, err := f.UpdateFileExpect(ctx, c.name, 1<<20, expect, func(b []byte) ([][]byte, error) {
					called = true
					return [][]byte{[]byte("PWNED")}, nil
				})
				if ue := (*workspace.UnexpectedPathError)(nil); strings.HasSuffix(c.real, "planted") {
					if !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("UpdateFileExpect(%q) of a missing file = %v, want ErrNotExist", c.name, err)
					}
				} else if !errors.As(err, &ue) || ue.Path != c.real || called {
					t.Errorf("UpdateFileExpect(%q, %q) = %v (update called: %v); want refused before the read, naming %s", c.name, expect, err, called, c.real)
				}
			}
		}
		if after := tree(t, root); after != before {
			t.Errorf("the root changed:\nbefore %s\nafter  %s", before, after)
		}
		// The real path, or a list holding it, is expected: the write
		// goes through the link.
		if res, err := f.WriteFileExpect(ctx, "innocent.txt", []byte("new"), []string{"x", ".env"}); err != nil || res.Path != ".env" {
			t.Errorf("WriteFileExpect to the expected real path = %+v, %v", res, err)
		}
		if res, err := f.UpdateFileExpect(ctx, "chain", 0, []string{".env"}, func(b []byte) ([][]byte, error) { return [][]byte{b, b}, nil }); err != nil || res.Path != ".env" {
			t.Errorf("UpdateFileExpect to the expected real path = %+v, %v", res, err)
		}
		if b, _ := os.ReadFile(filepath.Join(root, ".env")); string(b) != "newnew" {
			t.Errorf(".env holds %q", b)
		}
		for _, bad := range []string{"", "../x", "/abs", "a//b", "a/./b", "a/"} {
			if _, err := f.WriteFileExpect(ctx, "x", nil, []string{bad}); !errors.Is(err, fs.ErrInvalid) {
				t.Errorf("expected path %q: %v, want ErrInvalid", bad, err)
			}
		}
	})
}

// A link swapped in for the file an update read, before its write, is a
// change: the update fails with ErrChanged and the link's target is left
// as it was.
func TestUpdateFailsWhenALinkIsSwappedIn(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, nil)
		mustWrite(t, filepath.Join(root, "f"), "old")
		mustWrite(t, filepath.Join(root, "other"), "other")
		for _, expect := range [][]string{nil, {"f"}} {
			update := func(b []byte) ([][]byte, error) {
				if err := os.Symlink("other", filepath.Join(root, "l")); err != nil {
					return nil, err
				}
				return [][]byte{[]byte("PWNED")}, os.Rename(filepath.Join(root, "l"), filepath.Join(root, "f"))
			}
			var err error
			if expect == nil {
				_, err = f.UpdateFile(context.Background(), "f", 0, update)
			} else {
				_, err = f.UpdateFileExpect(context.Background(), "f", 0, expect, update)
			}
			if !errors.Is(err, workspace.ErrChanged) {
				t.Errorf("update with a link swapped in (expect %q) = %v, want ErrChanged", expect, err)
			}
			if b, _ := os.ReadFile(filepath.Join(root, "other")); string(b) != "other" {
				t.Errorf("the link's target holds %q", b)
			}
			os.Remove(filepath.Join(root, "f"))
			mustWrite(t, filepath.Join(root, "f"), "old")
		}
		leftovers(t, root)
	})
}
