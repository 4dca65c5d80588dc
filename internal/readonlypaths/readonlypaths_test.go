package readonlypaths

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestResolve(t *testing.T) {
	root := t.TempDir()
	root, _ = filepath.EvalSymlinks(root)
	outside := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(outside, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		in    []string
		want  []string
		isErr bool
	}{
		{"relative", []string{".helikon", ".claude", ".claude/"}, []string{".helikon", ".claude"}, false},
		{"nested", []string{"a/b"}, []string{"a/b"}, false},
		{"absolute beneath", []string{filepath.Join(root, ".config", "helikon")}, []string{".config/helikon"}, false},
		{"absolute outside is dropped", []string{filepath.Join(outside, "helikon")}, nil, false},
		{"absolute through a link into the root", []string{filepath.Join(outside, "link", "x")}, []string{"real/x"}, false},
		{"the root", []string{"."}, nil, true},
		{"the root, absolute", []string{root}, nil, true},
		{"leaves the root", []string{"../x"}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(root, tc.in)
			if (err != nil) != tc.isErr || !slices.Equal(got, tc.want) {
				t.Fatalf("Resolve(%q) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.isErr)
			}
			if err != nil && !errors.Is(err, ErrBad) {
				t.Fatalf("error %v does not wrap ErrBad", err)
			}
		})
	}
}

func TestEnsure(t *testing.T) {
	root := t.TempDir()
	if err := Ensure(root, []string{".helikon", "a/b"}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".helikon", "a", "a/b"} {
		if fi, err := os.Lstat(filepath.Join(root, d)); err != nil || !fi.IsDir() {
			t.Fatalf("%s: %v, %v", d, fi, err)
		}
	}
	if err := Ensure(root, []string{".helikon"}); err != nil {
		t.Fatalf("an existing directory: %v", err)
	}
	if err := os.Mkdir(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".claude", "c"} {
		if err := os.Symlink("real", filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".claude", "c/sub", "f"} {
		if err := Ensure(root, []string{p}); !errors.Is(err, ErrNotDirectory) {
			t.Errorf("Ensure(%s) = %v; want ErrNotDirectory", p, err)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "real", "sub")); err == nil {
		t.Error("Ensure created a directory through a link")
	}
}
