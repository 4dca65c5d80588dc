//go:build linux

package ossandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cacheBackend returns a backend over root with the named caches of scope
// in cacheDir, closed at the end.
func cacheBackend(t *testing.T, root, cacheDir string, scope CacheScope) *Backend {
	t.Helper()
	b, err := New(root, &Options{ReadPaths: []string{attackBin(t)}, Caches: scope, CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// TestNamedCachesAcrossSessions: what one session leaves in GOCACHE a
// later session finds with the project scope on the same project, and
// with the user scope on any project; without sharing (the session's
// scope) or on another project with the project scope, the cache starts
// empty. The variables point inside the cache directory, never the root.
func TestNamedCachesAcrossSessions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		scope    CacheScope
		sameRoot bool
		wantWarm bool
	}{
		{"project, same project", CacheProject, true, true},
		{"project, other project", CacheProject, false, false},
		{"user, other project", CacheUser, false, true},
		{"session only", CacheSession, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			cacheDir := t.TempDir()
			root1 := t.TempDir()
			b1 := cacheBackend(t, root1, cacheDir, tc.scope)
			gocache := runOK(t, b1, `d=$(go env GOCACHE 2>/dev/null || echo "${GOCACHE:-$HOME/.cache/go-build}"); mkdir -p "$d" && echo warm > "$d/entry" && echo "$d"`)
			if tc.scope != CacheSession && !strings.HasPrefix(gocache, cacheDir+"/") {
				t.Fatalf("GOCACHE = %q; want it in %s", gocache, cacheDir)
			}
			b1.Close()
			root2 := root1
			if !tc.sameRoot {
				root2 = t.TempDir()
			}
			b2 := cacheBackend(t, root2, cacheDir, tc.scope)
			got := runOK(t, b2, `d=$(go env GOCACHE 2>/dev/null || echo "${GOCACHE:-$HOME/.cache/go-build}"); cat "$d/entry" 2>/dev/null || echo cold`)
			want := map[bool]string{true: "warm", false: "cold"}[tc.wantWarm]
			if got != want {
				t.Errorf("the second session finds %q; want %q", got, want)
			}
		})
	}
}

// TestNamedCachesRefuseLinks is an attack test: a named cache directory
// replaced by a symbolic link (to a directory of the user's the link's
// maker wants written) fails New with ErrCacheDir; nothing is written
// where it points. So does a cache directory in the root. Without the check
// of each directory (privateDir), New would succeed.
func TestNamedCachesRefuseLinks(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	root := t.TempDir()
	cacheDir := t.TempDir()
	b := cacheBackend(t, root, cacheDir, CacheUser)
	b.Close()
	victim := t.TempDir()
	goBuild := filepath.Join(cacheDir, "user", "go-build")
	if err := os.RemoveAll(goBuild); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, goBuild); err != nil {
		t.Fatal(err)
	}
	if b, err := New(root, &Options{Caches: CacheUser, CacheDir: cacheDir}); !errors.Is(err, ErrCacheDir) {
		if b != nil {
			runOK(t, b, `echo x > "$GOCACHE/planted" || true`)
			b.Close()
		}
		t.Errorf("New with a linked cache directory: %v; want ErrCacheDir", err)
	}
	if ents, _ := os.ReadDir(victim); len(ents) != 0 {
		t.Errorf("the link's target holds %v; want nothing", ents)
	}
	if _, err := New(root, &Options{Caches: CacheProject, CacheDir: filepath.Join(root, ".cache")}); !errors.Is(err, ErrCacheDir) {
		t.Errorf("New with the caches in the root: %v; want ErrCacheDir", err)
	}
}

// treeSum returns every entry beneath dir with its mode and content.
func treeSum(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String()
		if info.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		m[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestUserCachesBeneathLeaveTheUsersUnchanged: with UserCachesBeneath, a
// command reads the user's module cache through GOMODCACHE, and what it
// writes there (a new file, an appended read-only file, a removal, a
// renamed directory) lands in the named cache, where the next command
// finds it, while the user's cache stays byte for byte as it was. Without
// the overlay (GOMODCACHE the user's own), the user's cache would change.
func TestUserCachesBeneathLeaveTheUsersUnchanged(t *testing.T) {
	for mode, set := range readOnlyModes(t) {
		t.Run(mode, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			user := t.TempDir()
			mod := filepath.Join(user, "pkg", "mod")
			if err := os.MkdirAll(filepath.Join(mod, "example.com", "m@v1"), 0o755); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(mod, "example.com", "m@v1", "m.go"), "package m\n")
			mustWrite(t, filepath.Join(mod, "example.com", "m@v1", "gone.go"), "package m\n")
			if err := os.Chmod(filepath.Join(mod, "example.com", "m@v1", "m.go"), 0o444); err != nil {
				t.Fatal(err)
			}
			t.Setenv("GOMODCACHE", mod)
			t.Setenv("XDG_CACHE_HOME", filepath.Join(user, "none")) // no other cache of the user's
			t.Setenv("GOCACHE", "")
			t.Setenv("HOME", user)
			before := treeSum(t, user)
			cacheDir := t.TempDir()
			// overlayfs leaves its work directory mode 000: an unprivileged
			// owner removes it as removeTree does.
			t.Cleanup(func() { removeTree(cacheDir) })
			b, err := New(t.TempDir(), &Options{ReadPaths: []string{attackBin(t)}, Caches: CacheProject, CacheDir: cacheDir, UserCachesBeneath: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			launcherStarts(t, b)
			set(b)
			if len(b.caches.overlays) != 1 || b.caches.overlays[0].Lower != mod {
				t.Fatalf("overlays %+v; want the user's module cache %s beneath go-mod", b.caches.overlays, mod)
			}
			got := runOK(t, b, `cd "$GOMODCACHE/example.com/m@v1" && cat m.go && chmod u+w m.go && echo poisoned >> m.go && rm gone.go && echo new > new.go && mv "$GOMODCACHE/example.com" "$GOMODCACHE/moved" && echo done`)
			if got != "package m\ndone" {
				t.Fatalf("the command saw %q; want the user's file, then its changes made", got)
			}
			if got := runOK(t, b, `cat "$GOMODCACHE/moved/m@v1/m.go" "$GOMODCACHE/moved/m@v1/new.go"`); got != "package m\npoisoned\nnew" {
				t.Errorf("the next command finds %q; want the changes kept in the named cache", got)
			}
			if after := treeSum(t, user); !mapsEqual(before, after) {
				t.Errorf("the user's cache changed:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}
