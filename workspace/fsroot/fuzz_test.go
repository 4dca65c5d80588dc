package fsroot_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/paigasus/helikon/workspace"
)

// FuzzPathConfinement throws arbitrary paths at every entry point of a
// sandbox whose root holds links that lead out, and checks that nothing
// outside is read or written and that resolved paths stay relative.
func FuzzPathConfinement(f *testing.F) {
	fx := newFixture(f)
	for _, p := range attackPaths(fx) {
		f.Add(p)
	}
	for _, p := range []string{"hello.txt", "rel-in", "sub/up-in", "dangling", "new/x.txt", "loop1", "./././x", "a//b", "sub/deeper/", fx.root + "/x"} {
		f.Add(p)
	}
	base := filepath.Dir(fx.root)
	before := snapshot(f, base, fx.root)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, p string) {
		rel, relErr := fx.sb.Rel(p)
		if relErr == nil {
			if filepath.IsAbs(rel) {
				t.Fatalf("Rel(%q) = %q: absolute", p, rel)
			}
			if c := path.Clean(rel); c == ".." || strings.HasPrefix(c, "../") {
				t.Fatalf("Rel(%q) = %q: leaves the root lexically", p, rel)
			}
		}
		real, realErr := fx.sb.RealPath(p)
		if realErr == nil {
			if real != path.Clean(real) || filepath.IsAbs(real) || real == ".." || strings.HasPrefix(real, "../") {
				t.Fatalf("RealPath(%q) = %q: not a clean path inside the root", p, real)
			}
		}
		if relErr != nil && realErr == nil {
			t.Fatalf("Rel(%q) failed (%v) but RealPath succeeded", p, relErr)
		}
		if fl, _, err := fx.sb.OpenRegular(p); err == nil {
			b, _ := io.ReadAll(io.LimitReader(fl, 1<<20))
			fl.Close()
			if strings.Contains(string(b), secret) {
				t.Fatalf("OpenRegular(%q) read the outside secret", p)
			}
		} else if relErr != nil && !errors.Is(err, workspace.ErrOutside) && !errors.Is(err, fs.ErrInvalid) {
			t.Fatalf("Rel(%q) refused (%v) but OpenRegular says %v", p, relErr, err)
		}
		fx.sb.WriteFile(ctx, p, []byte("fuzz"))
		fx.sb.UpdateFile(ctx, p, 1<<20, func(b []byte) ([][]byte, error) { return [][]byte{b, []byte("x")}, nil })
		if after := snapshot(t, base, fx.root); after != before {
			t.Fatalf("path %q changed files outside the root:\nbefore %s\nafter  %s", p, before, after)
		}
	})
}

// FuzzRealPathAgreesWithOSRoot checks the resolver that permission rules
// rely on against os.Root's own resolution, on a tree of links inside and
// out: whenever os.Root finds a file, RealPath names that same file (through
// no link), or refuses the path as the kernel would (a component after a
// non-directory, which os.Root resolves lexically) or as over the walk
// budget. A difference would let a path be checked as one file and opened
// as another.
func FuzzRealPathAgreesWithOSRoot(f *testing.F) {
	fx := newFixture(f)
	for name, target := range map[string]string{
		"sub/dl":            "deeper",
		"sub/deeper/up2":    "../dl/../..",
		"sub/deeper/toroot": "../../.",
		"sub/self":          ".",
		"sub/chain":         "self/self/self/dl",
	} {
		must(f, os.Symlink(target, filepath.Join(fx.root, name)))
	}
	for _, p := range attackPaths(fx) {
		f.Add(p)
	}
	for _, p := range []string{
		"hello.txt", "rel-in", "sub/up-in", "sub/dl/inner.txt", "sub/deeper/up2/hello.txt", "sub/chain/toroot/sub/dl/up2/rel-in",
		"sub/self/self/self/self/self/self/self/self/dl", "sub/dl/..", "sub/dl/../dl/./inner.txt", "hello.txt/..", "rel-in/",
		"missing/../hello.txt", "sub/deeper/toroot/../x", "dangling", "loop1", ".", "sub//deeper///inner.txt", fx.root + "/sub/dl/",
	} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		rel, err := fx.sb.Rel(p)
		if err != nil {
			return
		}
		real, rerr := fx.sb.RealPath(p)
		ofi, oerr := fx.sb.Root().Stat(rel)
		if rerr == nil {
			if real != path.Clean(real) || real == ".." || strings.HasPrefix(real, "../") || filepath.IsAbs(real) {
				t.Fatalf("RealPath(%q) = %q: not a clean path inside the root", p, real)
			}
			rfi, err := fx.sb.Root().Lstat(real)
			if err == nil && rfi.Mode()&fs.ModeSymlink != 0 {
				t.Fatalf("RealPath(%q) = %q, which is a symbolic link", p, real)
			}
			if oerr == nil && (err != nil || !os.SameFile(ofi, rfi)) {
				t.Fatalf("RealPath(%q) = %q (%v), but os.Root resolves it to another file", p, real, err)
			}
			return
		}
		if oerr == nil && !errors.Is(rerr, syscall.ENOTDIR) && !errors.Is(rerr, syscall.ENAMETOOLONG) {
			t.Fatalf("os.Root resolves %q, but RealPath refuses it: %v", p, rerr)
		}
	})
}

// FuzzEntryConfinement throws arbitrary paths at the methods that act on a
// directory entry rather than on what it leads to (Remove, Rename from and
// to) and at Stat and ReadDir, each on a fresh fixture, and checks that
// nothing outside the root is removed, moved or created, and that a refusal
// of the lexical check is never turned into success.
func FuzzEntryConfinement(f *testing.F) {
	seed := newFixture(f)
	for _, p := range attackPaths(seed) {
		f.Add(p)
	}
	for _, p := range []string{"hello.txt", "rel-out", "rel-out/", "rel-out/secret.txt", "sub/deep-out", "abs-out/secret.txt", "evil/secret.txt", "sub/deeper/..", "sub/", ".", "chain1", "loop1/x", "proc-root/secret.txt"} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		fx := newFixture(t)
		base := filepath.Dir(fx.root)
		before := snapshot(t, base, fx.root)
		_, relErr := fx.sb.Rel(p)
		results := map[string]error{}
		_, results["Stat"] = fx.sb.Stat(p)
		_, results["ReadDir"] = fx.sb.ReadDir(p)
		results["RenameTo"] = fx.sb.Rename("hello.txt", p)
		results["RenameFrom"] = fx.sb.Rename(p, "moved")
		results["Remove"] = fx.sb.Remove(p)
		for op, err := range results {
			if relErr != nil && err == nil {
				t.Fatalf("Rel(%q) refused (%v) but %s succeeded", p, relErr, op)
			}
		}
		if after := snapshot(t, base, fx.root); after != before {
			t.Fatalf("path %q changed files outside the root:\nbefore %s\nafter  %s", p, before, after)
		}
		if _, err := os.Lstat(fx.root); err != nil {
			t.Fatalf("path %q removed the root: %v", p, err)
		}
	})
}
