package execfs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/execfs"
	"github.com/paigasus/helikon/workspace/fsroot"
)

// FuzzResolutionAgreesWithSandbox is a differential test of the scripts'
// walk against package fsroot (os.Root) on generated trees: three links
// with fuzzed targets in a fixed tree of directories, files and links that
// lead out, and a fuzzed path. Both must resolve the path to the same file
// or refuse it for the same reason (outside, not a directory, too many
// links, too long, invalid). A write that expects another path than the
// one sandbox resolves (WriteFileExpect) must then be refused naming
// sandbox's path, the tree unchanged, and one that expects sandbox's path
// must never be refused as unexpected (and, when it succeeds, report that
// path). It runs in the first shell world (dash).
func FuzzResolutionAgreesWithSandbox(f *testing.F) {
	sh := shells(f)[0]
	for _, seed := range [][4]string{
		{"l1", "a/b", "../f", "l1"},
		{"a/l2/x", "a/b", "b/../..", "x"},
		{"a/b/l3/../f", "c", "..", "../../f"},
		{"l1/..", "a/b/../..", "../l1", "l3"},
		{"a/b/l3", "a", "../a/b/l3", "../l2"},
		{"m/../f", ".", ".", "."},
		{"up/x", "f", "g/", "../../up"},
		{"a/l2/g", "/", "b", "/etc"},
		{"l1/l2/l3", "a", "b", "f"},
		{"a/b/l3/x/../..", "x/../../..", "../../c", "../../../.."},
		{"f/", "f", "f/.", "f/.."},
		{"a//b/./l3", "l1", "../l1", "../../l1"},
		// Over the walk budget (more than 255 steps and 8 restarts), and
		// just under it.
		{strings.Repeat("a/b/../../", 100) + "f", "a", "b", "c"},
		{strings.Repeat("a/../", 60) + "f", "a", "b", "c"},
		{strings.Repeat("l1/", 8) + "f", ".", "..", "x"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, p, t1, t2, t3 string) {
		for _, target := range []string{t1, t2, t3} {
			if target == "" || strings.IndexByte(target, 0) >= 0 || len(target) > 256 {
				t.Skip()
			}
		}
		if len(p) > 5000 {
			t.Skip()
		}
		root := t.TempDir()
		for _, d := range []string{"a/b", "c"} {
			os.MkdirAll(filepath.Join(root, d), 0o755)
		}
		for _, file := range []string{"f", "a/g"} {
			os.WriteFile(filepath.Join(root, file), []byte("x"), 0o644)
		}
		for name, target := range map[string]string{"l1": t1, "a/l2": t2, "a/b/l3": t3, "up": "..", "abs": "/", "a/in": "../c"} {
			if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
				t.Skip()
			}
		}
		sb, err := fsroot.Open(root)
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		xf, err := execfs.New(ctx, sh.r, root, &sh.opts)
		if err != nil {
			t.Fatal(err)
		}
		want, werr := sb.RealPath(p)
		got, gerr := xf.RealPathForTest(ctx, p)
		if class(werr) != class(gerr) || (werr == nil && got != want) {
			t.Fatalf("path %q with l1 -> %q, a/l2 -> %q, a/b/l3 -> %q:\nsandbox %q, %v\nexecfs  %q, %v", p, t1, t2, t3, want, werr, got, gerr)
		}
		before := tree(t, root)
		other := "zz-not-" + want
		_, err = xf.WriteFileExpect(ctx, p, []byte("w"), []string{other})
		ue := (*workspace.UnexpectedPathError)(nil)
		switch {
		case werr == nil && (!errors.As(err, &ue) || ue.Path != want):
			t.Fatalf("path %q (l1 -> %q, a/l2 -> %q, a/b/l3 -> %q) resolves to %q: WriteFileExpect(%q) = %v, want refused naming it", p, t1, t2, t3, want, other, err)
		case werr != nil && class(err) != class(werr):
			t.Fatalf("path %q (l1 -> %q, a/l2 -> %q, a/b/l3 -> %q): sandbox %v, WriteFileExpect %v", p, t1, t2, t3, werr, err)
		}
		if after := tree(t, root); after != before {
			t.Fatalf("path %q: a refused WriteFileExpect changed the tree:\nbefore %s\nafter  %s", p, before, after)
		}
		if werr == nil {
			res, err := xf.WriteFileExpect(ctx, p, []byte("w"), []string{want})
			if errors.As(err, &ue) || (err == nil && res.Path != want) {
				t.Fatalf("path %q resolves to %q: WriteFileExpect expecting it = %+v, %v", p, want, res, err)
			}
		}
	})
}

// class names the reason a resolution failed, in terms both packages
// share.
func class(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, helikon.ErrDenied), errors.Is(err, workspace.ErrOutside):
		return "outside"
	case errors.Is(err, syscall.ENOTDIR):
		return "notdir"
	case errors.Is(err, syscall.ELOOP):
		return "loop"
	case errors.Is(err, syscall.ENAMETOOLONG):
		return "toolong"
	case errors.Is(err, helikon.ErrInvalidArgs), errors.Is(err, fs.ErrInvalid):
		return "invalid"
	}
	return "other: " + err.Error()
}

// FuzzNamesAndDataRoundTrip writes fuzzed data under a fuzzed name through
// each way bytes travel (stdin and binary output in dash; arguments with
// printf escapes and od output in the dash world without base64; base64
// both ways in busybox's) and checks that the file on disk holds exactly
// the data, under exactly that name, that reading it back gives the same
// bytes, that nothing else appeared, and that the name is compared whole
// as an expected path (WriteFileExpect).
func FuzzNamesAndDataRoundTrip(f *testing.F) {
	for _, name := range hostile {
		f.Add(name, []byte(name))
	}
	f.Add("bin", allBytes())
	worlds := map[string]shell{}
	for _, sh := range shells(f) {
		worlds[sh.name] = sh
	}
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." || len(name) > 200 {
			t.Skip()
		}
		for _, w := range []string{"dash", "dash-forkd-od", "busybox-forkd"} {
			sh, ok := worlds[w]
			if !ok || (sh.opts.TextOnly && !utf8.ValidString(name)) {
				continue
			}
			root := t.TempDir()
			xf, err := execfs.New(ctx, sh.r, root, &sh.opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := xf.WriteFile(ctx, name, data); err != nil {
				t.Fatalf("%s: WriteFile(%q): %v", w, name, err)
			}
			es, _ := os.ReadDir(root)
			if len(es) != 1 || es[0].Name() != name {
				t.Fatalf("%s: after WriteFile(%q) the root holds %v", w, name, es)
			}
			if b, _ := os.ReadFile(filepath.Join(root, name)); !bytes.Equal(b, data) {
				t.Fatalf("%s: %q holds %q, want %q", w, name, b, data)
			}
			fl, err := xf.Open(ctx, name)
			if err != nil {
				t.Fatalf("%s: Open(%q): %v", w, name, err)
			}
			if b, err := io.ReadAll(fl); err != nil || !bytes.Equal(b, data) {
				t.Fatalf("%s: read back %q, %v; want %q", w, b, err, data)
			}
			// The name as an expected path is itself, whole: the
			// same name passes, another is refused naming it.
			if _, err := xf.WriteFileExpect(ctx, name, data, []string{"x" + name, name + "x"}); !errors.As(err, new(*workspace.UnexpectedPathError)) {
				t.Fatalf("%s: WriteFileExpect(%q) expecting other names = %v, want refused", w, name, err)
			}
			if res, err := xf.WriteFileExpect(ctx, name, data, []string{name}); err != nil || res.Path != name || res.Created {
				t.Fatalf("%s: WriteFileExpect(%q) expecting it = %+v, %v", w, name, res, err)
			}
		}
	})
}
