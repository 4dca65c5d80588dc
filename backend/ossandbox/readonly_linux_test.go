//go:build linux

package ossandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
)

// policyDirs are the read-only paths the attack tests protect: helikon's and
// Claude Code's project policy directories, as the CLI passes them.
var policyDirs = []string{".helikon", ".claude"}

// policyTree is the content of the protected directories before an attack:
// .claude/settings.local.json is absent, a policy file a command must not be
// able to create.
var policyTree = map[string]string{
	".helikon/settings.json": `{"permissions":{"deny":["Bash"]}}`,
	".claude/settings.json":  `{"permissions":{"deny":["Bash"]}}`,
}

// readOnlyAttacks are programs that try to change, replace, rename, remove
// or create a policy file, each naming it its own way. need is a program
// the attack needs, by the path the command runs it as (a system path the
// sandbox can execute, not a shim in $HOME); without it the attack is
// skipped.
var readOnlyAttacks = []struct {
	name, need, cmd string
}{
	{"redirect", "", `echo evil > .helikon/settings.json`},
	{"append", "", `echo evil >> .claude/settings.json`},
	{"create absent file", "", `echo evil > .claude/settings.local.json`},
	{"truncate", "", `truncate -s 0 .helikon/settings.json`},
	{"python", "/usr/bin/python3", `/usr/bin/python3 -c 'open(".helikon/settings.json","w").write("evil")'`},
	{"python os.replace", "/usr/bin/python3", `/usr/bin/python3 -c '
import os
open("n","w").write("evil")
os.replace("n", ".claude/settings.json")'`},
	{"perl", "/usr/bin/perl", `/usr/bin/perl -e 'open(F, ">", ".claude/settings.json") or die; print F "evil"'`},
	{"cp -r a tree into the root", "", `mkdir -p "$TMPDIR/t/.helikon" "$TMPDIR/t/.claude" && echo evil > "$TMPDIR/t/.helikon/settings.json" && echo evil > "$TMPDIR/t/.claude/settings.local.json" && cp -r "$TMPDIR/t/." .`},
	{"cp -r --remove-destination", "", `mkdir -p "$TMPDIR/t/.claude" && echo evil > "$TMPDIR/t/.claude/settings.json" && cp -r --remove-destination "$TMPDIR/t/." .`},
	{"mv the directory away", "", `mv .helikon gone; mkdir -p .helikon; echo evil > .helikon/settings.json`},
	{"mv a file over it", "", `echo evil > n; mv -f n .claude/settings.json`},
	{"rm -rf", "", `rm -rf .claude; mkdir -p .claude; echo evil > .claude/settings.json`},
	{"rmdir after emptying", "", `rm -f .helikon/settings.json; rmdir .helikon; echo evil > .helikon`},
	{"hard link then write", "", `ln .claude/settings.json l; echo evil > l`},
	{"hard link of a planted file", "", `echo evil > n; ln n .claude/settings.local.json`},
	{"symlink in place", "", `rm -rf .helikon; ln -s elsewhere .helikon; mkdir elsewhere; echo evil > elsewhere/settings.json`},
	{"/proc/self/cwd", "", `echo evil > /proc/self/cwd/.helikon/settings.json; echo evil > /proc/$$/cwd/.claude/settings.local.json`},
	{"tar -x over it", "/usr/bin/tar", `mkdir -p "$TMPDIR/t/.helikon" "$TMPDIR/t/.claude" && echo evil > "$TMPDIR/t/.helikon/settings.json" && echo evil > "$TMPDIR/t/.claude/settings.local.json" && tar -C "$TMPDIR/t" -cf "$TMPDIR/a.tar" .helikon .claude && tar -xf "$TMPDIR/a.tar"; tar --recursive-unlink -xf "$TMPDIR/a.tar"`},
	{"chmod and touch", "", `chmod 0777 .helikon .claude/settings.json; touch -d 2000-01-01 .helikon/settings.json`},
}

// snapshot returns what lies beneath the policy directories of root: each
// path relative to root, with a file's content or a directory's mode.
func snapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, d := range policyDirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			switch {
			case fi.Mode().IsRegular():
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				got[rel] = string(b) + " " + fi.Mode().String() + " " + fi.ModTime().String()
			default:
				got[rel] = fi.Mode().String()
			}
			return nil
		})
		if errors.Is(err, fs.ErrNotExist) {
			got[d] = "missing"
		} else if err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// readOnlyModes returns the ways this caller's commands can be started,
// each a function that puts a fresh backend in it: root callers have one;
// unprivileged callers the long-lived launcher and a launcher per command,
// with and without its pid namespace.
func readOnlyModes(t *testing.T) map[string]func(*Backend) {
	if isRoot() {
		return map[string]func(*Backend){"root caller": func(*Backend) {}}
	}
	return map[string]func(*Backend){
		"long-lived launcher":          func(*Backend) {},
		"launcher per command":         func(b *Backend) { b.server = false },
		"launcher without pid ns":      func(b *Backend) { b.server, b.pidNS = false, false },
		"launcher per command, no tmp": func(b *Backend) { b.server, b.tmpBase = false, "" },
	}
}

// TestReadOnlyPathsResistAttacks: with the policy directories as
// ReadOnlyPaths, no program a command runs can change, replace, rename,
// remove or create a policy file, however it names it; the rest of the
// root stays writable. Without the mounts (ProtectPaths) each attack
// succeeds.
func TestReadOnlyPathsResistAttacks(t *testing.T) {
	for mode, set := range readOnlyModes(t) {
		t.Run(mode, func(t *testing.T) {
			for _, a := range readOnlyAttacks {
				t.Run(a.name, func(t *testing.T) {
					if a.need != "" {
						if _, err := os.Stat(a.need); err != nil {
							t.Skipf("%s is not installed", a.need)
						}
					}
					b, root := newTestBackend(t, Options{ReadOnlyPaths: policyDirs})
					t.Cleanup(func() { b.Close() })
					set(b)
					for p, s := range policyTree {
						mustWrite(t, filepath.Join(root, p), s)
					}
					before := snapshot(t, root)
					res, err := b.Run(context.Background(), &backend.Request{Command: a.cmd})
					if err != nil {
						t.Fatalf("Run: %v", err)
					}
					if after := snapshot(t, root); !mapsEqual(before, after) {
						t.Errorf("the policy directories changed (exit %v, stderr %q):\nbefore %v\nafter  %v", res.ExitCode, res.Stderr, before, after)
					}
					// The rest of the root is writable: the attack was not
					// stopped by a root that no command can write.
					if got := runOK(t, b, "echo ok > other && cat other"); got != "ok" {
						t.Fatalf("a write elsewhere in the root: %q", got)
					}
				})
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestReadOnlyPathsCreatedWhenAbsent: a policy directory that does not
// exist is created, empty, by New and before each command, so that a
// command finds a directory it cannot write instead of a name it can take;
// it is left in place (git does not see an empty directory). One removed
// on the host while the backend lives (after a thread was confined ahead
// for the next command, whose mount the kernel then detaches) is made
// again, and the command either refuses to start or runs with it
// read-only: it never creates a policy file there.
func TestReadOnlyPathsCreatedWhenAbsent(t *testing.T) {
	dirs := []string{".helikon", ".claude", "nested/policy"}
	const attack = `mkdir -p .claude nested/policy; echo evil > .claude/settings.json; echo evil > .helikon; echo evil > nested/policy/settings.json`
	for mode, set := range readOnlyModes(t) {
		t.Run(mode, func(t *testing.T) {
			b, root := newTestBackend(t, Options{ReadOnlyPaths: dirs})
			t.Cleanup(func() { b.Close() })
			set(b)
			check := func(when string, res *backend.Result) {
				t.Helper()
				for _, d := range dirs {
					fi, err := os.Lstat(filepath.Join(root, d))
					if err != nil || !fi.IsDir() {
						t.Fatalf("%s: %s: %v; want a directory", when, d, err)
					}
					if ents, _ := os.ReadDir(filepath.Join(root, d)); len(ents) > 0 {
						t.Errorf("%s: %s holds %v (result %+v)", when, d, ents, res)
					}
				}
			}
			check("after New", nil)
			res, err := b.Run(context.Background(), &backend.Request{Command: attack})
			if err != nil {
				t.Fatal(err)
			}
			check("after the first command", res)
			for i := range 2 {
				for _, d := range dirs {
					if err := os.Remove(filepath.Join(root, d)); err != nil {
						t.Fatal(err)
					}
				}
				res, err = b.Run(context.Background(), &backend.Request{Command: attack})
				if err != nil && !errors.Is(err, backend.ErrUnavailable) {
					t.Fatal(err)
				}
				check(fmt.Sprintf("after removal %d", i), res)
			}
			res, err = b.Run(context.Background(), &backend.Request{Command: attack})
			if err != nil {
				t.Fatalf("a command after the removals: %v", err)
			}
			check("at the end", res)
		})
	}
}

// TestReadOnlyPathThroughSymlinkRefused: a policy directory that is a
// symbolic link is refused before anything runs; a mount there could be
// redirected to where the link points, and the link replaced.
func TestReadOnlyPathThroughSymlinkRefused(t *testing.T) {
	b, root := newTestBackend(t, Options{ReadOnlyPaths: policyDirs})
	t.Cleanup(func() { b.Close() })
	if err := os.Remove(filepath.Join(root, ".claude")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(root, ".claude")); err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(context.Background(), &backend.Request{Command: "echo evil > real/settings.json"})
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Fatalf("Run = %v, %v; want ErrUnavailable", res, err)
	}
	if _, err := os.Stat(filepath.Join(root, "real", "settings.json")); err == nil {
		t.Fatal("the command ran")
	}
}

// TestReadOnlyPathsGuarantees: the guarantees name the read-only paths, or
// say that they are not read-only where there is no mount namespace.
func TestReadOnlyPathsGuarantees(t *testing.T) {
	b, _ := newTestBackend(t, Options{ReadOnlyPaths: policyDirs})
	t.Cleanup(func() { b.Close() })
	want := "read-only in the command's mount namespace: .helikon, .claude"
	if !isRoot() && !b.userns {
		want = "NOT read-only"
	}
	if !slices.ContainsFunc(b.Guarantees().Features, func(f string) bool { return strings.Contains(f, want) }) {
		t.Errorf("features %q; want one containing %q", b.Guarantees().Features, want)
	}
	if !isRoot() {
		// Without user namespaces there is no mount namespace: the
		// guarantees must say the paths are not read-only.
		launcherUnavailable = unix.EPERM
		nb, _ := newTestBackend(t, Options{ReadOnlyPaths: policyDirs})
		launcherUnavailable = nil
		if !slices.ContainsFunc(nb.Guarantees().Features, func(f string) bool {
			return strings.Contains(f, ".helikon, .claude are NOT read-only")
		}) {
			t.Errorf("without user namespaces, features %q do not say the read-only paths are not enforced", nb.Guarantees().Features)
		}
	}
	b2, _ := newTestBackend(t, Options{})
	if slices.ContainsFunc(b2.Guarantees().Features, func(f string) bool { return strings.Contains(f, "read-only paths") }) {
		t.Errorf("features %q name read-only paths the backend has none of", b2.Guarantees().Features)
	}
}
