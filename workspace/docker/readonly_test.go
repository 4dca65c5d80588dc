package docker

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
)

// policyAttacks try to change, replace, rename, remove or create a policy
// file from inside a bind-mode workspace, each naming it its own way (the
// test image is busybox: no python or perl).
var policyAttacks = []struct{ name, cmd string }{
	{"redirect", `echo evil > .helikon/settings.json`},
	{"create absent file", `echo evil > .claude/settings.local.json`},
	{"cp -r a tree into the root", `mkdir -p /tmp/t/.helikon /tmp/t/.claude && echo evil > /tmp/t/.helikon/settings.json && echo evil > /tmp/t/.claude/settings.local.json && cp -r /tmp/t/. .`},
	{"mv the directory away", `mv .helikon gone; mkdir -p .helikon; echo evil > .helikon/settings.json`},
	{"mv a file over it", `echo evil > n; mv -f n .claude/settings.json`},
	{"rm -rf", `rm -rf .claude; mkdir -p .claude; echo evil > .claude/settings.json`},
	{"hard link then write", `ln .claude/settings.json l; echo evil > l`},
	{"/proc/self/cwd", `echo evil > /proc/self/cwd/.helikon/settings.json`},
	{"tar -x over it", `mkdir -p /tmp/t/.helikon && echo evil > /tmp/t/.helikon/settings.json && tar -C /tmp/t -cf /tmp/a.tar .helikon && tar -xf /tmp/a.tar`},
	{"chmod", `chmod 0777 .helikon .claude/settings.json`},
}

// policySnapshot returns what lies beneath root's policy directories.
func policySnapshot(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	for _, d := range []string{".helikon", ".claude"} {
		b.WriteString(snapshot(t, filepath.Join(root, d)))
	}
	return b.String()
}

// TestAttackPolicyDirsReadOnly: in the bind mode, with the policy
// directories as ReadOnlyPaths, no program in the container can change,
// replace, rename, remove or create a policy file, however it names it;
// without them each attack changes the project's policy files.
func TestAttackPolicyDirsReadOnly(t *testing.T) {
	for _, a := range policyAttacks {
		t.Run(a.name, func(t *testing.T) {
			for _, protect := range []bool{false, true} {
				root := bindRoot(t)
				mustWritePolicy(t, root)
				opts := Options{Root: root}
				if protect {
					opts.ReadOnlyPaths = []string{".helikon", ".claude"}
				}
				ws := create(t, newEngine(t, opts))
				before := policySnapshot(t, root)
				res := run(t, ws, &backend.Request{Command: a.cmd})
				changed := policySnapshot(t, root) != before
				if !protect && !changed {
					t.Fatalf("without read-only paths the attack changed nothing (stderr %q): the test shows nothing", res.Stderr)
				}
				if protect && changed {
					t.Errorf("the policy files changed:\nbefore %s\nafter  %s\nstderr %q", before, policySnapshot(t, root), res.Stderr)
				}
				if protect {
					if got := strings.TrimSpace(sh(t, ws, "echo ok > other && cat other")); got != "ok" {
						t.Errorf("a write elsewhere in the root: %q", got)
					}
				}
			}
		})
	}
}

func mustWritePolicy(t *testing.T, root string) {
	t.Helper()
	for _, d := range []string{".helikon", ".claude"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{".helikon/settings.json", ".claude/settings.json"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte(`{"permissions":{"deny":["Bash"]}}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPolicyDirsCreatedAndReported: a missing policy directory is created
// before the container, so that a command finds a read-only directory, not
// a name it can take; the guarantees name the read-only paths; a policy
// directory that is a symbolic link is refused (the daemon would mount
// where it points).
func TestPolicyDirsCreatedAndReported(t *testing.T) {
	root := bindRoot(t)
	ws := create(t, newEngine(t, Options{Root: root, ReadOnlyPaths: []string{".helikon", ".claude"}}))
	res := run(t, ws, &backend.Request{Command: `mkdir -p .claude; echo evil > .claude/settings.json; echo evil > .helikon/settings.json`})
	for _, d := range []string{".helikon", ".claude"} {
		ents, err := os.ReadDir(filepath.Join(root, d))
		if err != nil || len(ents) > 0 {
			t.Errorf("%s: %v, %v (stderr %q); want an empty directory", d, ents, err, res.Stderr)
		}
	}
	if !slices.ContainsFunc(ws.Guarantees().Features, func(f string) bool { return strings.Contains(f, "read-only in the container: .helikon, .claude") }) {
		t.Errorf("features %q do not name the read-only paths", ws.Guarantees().Features)
	}

	linked := bindRoot(t)
	if err := os.Mkdir(filepath.Join(linked, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real", filepath.Join(linked, ".claude")); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, Options{Root: linked, ReadOnlyPaths: []string{".claude"}})
	if ws, err := e.Create(t.Context(), session(t)); err == nil {
		ws.Close(t.Context())
		t.Fatal("a workspace was created with .claude a symbolic link")
	}
}

// TestPolicyDirRemovedOnHostRefused: a read-only directory removed on the
// host while the container lives is detached from the container by the
// kernel, and a command could create it and a policy file in it; every
// command first checks that its read-only paths are still read-only, and
// stops (exit 125) when one is not.
func TestPolicyDirRemovedOnHostRefused(t *testing.T) {
	root := bindRoot(t)
	mustWritePolicy(t, root)
	ws := create(t, newEngine(t, Options{Root: root, ReadOnlyPaths: []string{".helikon", ".claude"}}))
	if !slices.Equal(ws.readOnly, []string{".helikon", ".claude"}) && !slices.Equal(ws.readOnly, []string{".claude", ".helikon"}) {
		t.Fatalf("the workspace's read-only paths are %q", ws.readOnly)
	}
	const attack = `mkdir -p .claude && echo evil > .claude/settings.json`
	planted := filepath.Join(root, ".claude", "settings.json")
	if err := os.RemoveAll(filepath.Join(root, ".claude")); err != nil {
		t.Fatal(err)
	}
	// Without the check, the detached mount lets the command plant it.
	saved := ws.readOnly
	ws.readOnly = nil
	run(t, ws, &backend.Request{Command: attack})
	if b, err := os.ReadFile(planted); err != nil || !strings.Contains(string(b), "evil") {
		t.Fatalf("without the check the command could not plant the file (%q, %v): the test shows nothing", b, err)
	}
	if err := os.RemoveAll(filepath.Join(root, ".claude")); err != nil {
		t.Fatal(err)
	}
	ws.readOnly = saved
	res := run(t, ws, &backend.Request{Command: attack})
	if res.ExitCode == nil || *res.ExitCode != 125 || !strings.Contains(string(res.Stderr), "no longer mounted read-only") {
		t.Errorf("exit %v, stderr %q; want 125 and the reason", res.ExitCode, res.Stderr)
	}
	if _, err := os.Stat(planted); err == nil {
		t.Error("the command planted a policy file")
	}
	// The other read-only path still holds, and the check costs nothing
	// to a workspace whose paths are in place.
	ok := create(t, newEngine(t, Options{Root: bindRoot(t), ReadOnlyPaths: []string{".helikon"}}))
	if got := strings.TrimSpace(sh(t, ok, "echo fine")); got != "fine" {
		t.Errorf("a command in an intact workspace: %q", got)
	}
}
