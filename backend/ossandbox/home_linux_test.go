//go:build linux

package ossandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
)

// homeBackend returns a backend over a private os.TempDir() (t.Setenv: not
// parallel), in each launcher configuration, closed at the end.
func homeBackend(t *testing.T, opts Options, set func(*Backend)) (*Backend, string) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	b, _ := newTestBackend(t, opts)
	t.Cleanup(func() { b.Close() })
	launcherStarts(t, b)
	set(b)
	return b, tmp
}

// TestSessionHomeOutlivesCommands: the commands of one backend share HOME
// (a second command sees what the first left there, Go's build cache for
// one), which lies outside the root, in TMPDIR, is not the temporary
// directory, and is removed by Close; the next command finds it empty.
func TestSessionHomeOutlivesCommands(t *testing.T) {
	for mode, set := range readOnlyModes(t) {
		t.Run(mode, func(t *testing.T) {
			b, tmp := homeBackend(t, Options{}, set)
			if b.home == nil {
				t.Fatalf("no session home: %s", b.homeWhy)
			}
			home := runOK(t, b, `mkdir -p "$HOME/.cache/go-build" && echo warm > "$HOME/.cache/go-build/entry" && echo "$HOME"`)
			if home != b.home.path || !strings.HasPrefix(home, filepath.Join(tmp, homeDirName+strconv.Itoa(os.Geteuid()))+"/") {
				t.Fatalf("HOME = %q; want the session home %s in TMPDIR %s", home, b.home.path, tmp)
			}
			if got := runOK(t, b, `cat "$HOME/.cache/go-build/entry"; [ "$HOME" != "$TMPDIR" ] && echo apart`); got != "warm\napart" {
				t.Errorf("the second command sees %q; want the first's cache entry, and HOME apart from TMPDIR", got)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(home); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the session home is still there after Close: %v", err)
			}
			if got := runOK(t, b, `ls -A "$HOME" | wc -l`); got != "0" {
				t.Errorf("after Close the next command's HOME holds %s entries; want a new, empty one", got)
			}
		})
	}
}

// TestSessionHomeCap: once a command leaves the home over its cap, the
// next command is refused with ErrHomeFull, saying which flag raises it.
func TestSessionHomeCap(t *testing.T) {
	b, _ := homeBackend(t, Options{HomeSize: 1 << 20}, func(*Backend) {})
	runOK(t, b, `head -c 2000000 /dev/zero > "$HOME/big"`)
	b.home.wait() // the measure runs in the background
	_, err := b.Run(context.Background(), &backend.Request{Command: "true"})
	if !errors.Is(err, ErrHomeFull) || !strings.Contains(err.Error(), "--home-size") {
		t.Fatalf("a command after the home went over its cap: %v; want ErrHomeFull naming --home-size", err)
	}
	if err := os.Remove(filepath.Join(b.home.path, "big")); err != nil {
		t.Fatal(err)
	}
	b.home.measureHome()
	b.home.wait()
	runOK(t, b, "true")
}

// TestSessionHomeRefusesPlantedLink is an attack test: another user (or a
// command of an earlier run) who plants a symbolic link where this user's
// session homes go cannot have commands write where it points. Without the
// check of the parent (usableMountPoint in homeParent), the home would be
// made in the link's target.
func TestSessionHomeRefusesPlantedLink(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	victim := t.TempDir()
	if err := os.Symlink(victim, filepath.Join(tmp, homeDirName+strconv.Itoa(os.Geteuid()))); err != nil {
		t.Fatal(err)
	}
	b, err := New(t.TempDir(), &Options{ReadPaths: []string{attackBin(t)}})
	if err != nil {
		t.Fatalf("New with a planted link where the homes go: %v; want a backend without a session home", err)
	}
	t.Cleanup(func() { b.Close() })
	if b.home != nil {
		t.Fatalf("session home %s made through a planted link", b.home.path)
	}
	if !strings.Contains(b.homeFeature(), "symbolic link") {
		t.Errorf("guarantees say %q; want the reason", b.homeFeature())
	}
	runOK(t, b, `echo x > "$HOME/planted" || true`)
	if ents, _ := os.ReadDir(victim); len(ents) != 0 {
		t.Errorf("the link's target holds %v; want nothing", ents)
	}
}

// TestSessionHomeRemovalStaysInside is an attack test: links a command
// leaves in the home (to a directory outside, made read-only) do not make
// Close change or remove anything outside it.
func TestSessionHomeRemovalStaysInside(t *testing.T) {
	b, _ := homeBackend(t, Options{}, func(*Backend) {})
	victim := t.TempDir()
	mustWrite(t, filepath.Join(victim, "keep"), "keep")
	if err := os.Chmod(victim, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(victim, 0o700) })
	// The command cannot reach victim (Landlock), so the link is made
	// by hand as a command could have made it: a name in the home.
	if err := os.Symlink(victim, filepath.Join(b.home.path, "link")); err != nil {
		t.Fatal(err)
	}
	runOK(t, b, `mkdir -p "$HOME/ro/sub" && touch "$HOME/ro/sub/f" && chmod 500 "$HOME/ro/sub" "$HOME/ro"`)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(victim)
	if err != nil || fi.Mode().Perm() != 0o500 {
		t.Errorf("the link's target after Close: %v, %v; want mode 0500 unchanged", fi, err)
	}
	if _, err := os.Stat(filepath.Join(victim, "keep")); err != nil {
		t.Errorf("the link's target lost its file: %v", err)
	}
}

// TestReapHomes: ReapHomes removes a home no backend holds and leaves a
// live backend's alone.
func TestReapHomes(t *testing.T) {
	b, tmp := homeBackend(t, Options{}, func(*Backend) {})
	parent := filepath.Join(tmp, homeDirName+strconv.Itoa(os.Geteuid()))
	left := filepath.Join(parent, "1-crashed")
	if err := os.MkdirAll(filepath.Join(left, "go", "pkg", "mod"), 0o700); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(left, "go", "pkg", "mod", "x"), "x")
	if err := os.Chmod(filepath.Join(left, "go", "pkg", "mod"), 0o500); err != nil {
		t.Fatal(err)
	}
	if got, err := ReapHomes(true); err != nil || len(got) != 1 || got[0] != left {
		t.Fatalf("a dry run would reap %v (%v); want only %s", got, err, left)
	}
	removed, err := ReapHomes(false)
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != left {
		t.Errorf("reaped %v; want only %s", removed, left)
	}
	if _, err := os.Stat(b.home.path); err != nil {
		t.Errorf("the live backend's home was reaped: %v", err)
	}
}

// TestSessionHomeMountRefusesLink is an attack test of the second line:
// a link swapped in on the home's path after the backend made it (a
// directory renamed away and a link to a look-alike put in its place)
// fails the command rather than have it write where the link points.
// Without launcher.WritablePaths' lookup without links, the mount (and the
// Landlock rule, which follows the path) would grant the look-alike.
func TestSessionHomeMountRefusesLink(t *testing.T) {
	b, tmp := homeBackend(t, Options{}, func(*Backend) {})
	if !b.privileged && !b.userns {
		t.Skip("no mount namespace per command here: nothing is mounted")
	}
	parent := filepath.Dir(b.home.path)
	victim := filepath.Join(tmp, "victim")
	if err := os.MkdirAll(filepath.Join(victim, filepath.Base(b.home.path)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(parent, filepath.Join(tmp, "moved")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, parent); err != nil {
		t.Fatal(err)
	}
	b.srv.close()     // the long-lived launcher mounted the home when it started
	b.standby.Close() // and a root caller's thread confined ahead has it mounted
	res, err := b.Run(context.Background(), &backend.Request{Command: `echo x > "$HOME/planted"`})
	if err == nil && res.ExitCode != nil && *res.ExitCode == 0 {
		t.Errorf("a command wrote through a link on the home's path: %v, %v", res, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(victim, filepath.Base(b.home.path))); len(ents) != 0 {
		t.Errorf("the look-alike holds %v; want nothing", ents)
	}
}

// TestSessionHomeNeverInTheRoot: where TMPDIR lies in the root, no session
// home is made there (it would be the project's files, which checkpoints
// and review cover, and which every session shares): HOME falls back to
// the command's temporary directory. Without the check in setUpHome, the
// home would be made beneath the root.
func TestSessionHomeNeverInTheRoot(t *testing.T) {
	root := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(root, "tmp"))
	if err := os.Mkdir(filepath.Join(root, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := New(root, &Options{ReadPaths: []string{attackBin(t)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	if b.home != nil {
		t.Fatalf("session home %s made in the root %s", b.home.path, root)
	}
	if !strings.Contains(b.homeFeature(), "would lie in or hold") {
		t.Errorf("guarantees say %q; want the reason", b.homeFeature())
	}
}

// BenchmarkHomeMeasure is the cost added after each command by measuring
// a session home (or the named caches) against its cap: a walk of a tree
// of 5,000 files in 256 directories, about what a warm Go build cache of a
// small project holds.
func BenchmarkHomeMeasure(b *testing.B) {
	dir := b.TempDir()
	for i := range 5000 {
		d := filepath.Join(dir, strconv.Itoa(i%256))
		if err := os.MkdirAll(d, 0o700); err != nil {
			b.Fatal(err)
		}
		mustWrite(b, filepath.Join(d, strconv.Itoa(i)), "x")
	}
	h := &sessionHome{path: dir, cap: DefaultHomeSize, lock: -1}
	for b.Loop() {
		h.measureHome()
		h.wait()
	}
	if used, over := h.last(); over || used == 0 {
		b.Fatalf("measured %d bytes, over %v", used, over)
	}
}
