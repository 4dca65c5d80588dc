package sandbox_test

import (
	"context"
	"errors"
	"io"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
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
		} else if relErr != nil && !errors.Is(err, helikon.ErrDenied) && !errors.Is(err, helikon.ErrInvalidArgs) {
			t.Fatalf("Rel(%q) refused (%v) but OpenRegular says %v", p, relErr, err)
		}
		fx.sb.WriteFile(ctx, p, []byte("fuzz"))
		fx.sb.UpdateFile(ctx, p, 1<<20, func(b []byte) ([][]byte, error) { return [][]byte{b, []byte("x")}, nil })
		if after := snapshot(t, base, fx.root); after != before {
			t.Fatalf("path %q changed files outside the root:\nbefore %s\nafter  %s", p, before, after)
		}
	})
}
