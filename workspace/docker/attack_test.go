package docker

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
)

// Each attack test shows first that the attack works where the protection
// is missing, then that the workspace stops it.

func TestAttackCapabilitiesAreDropped(t *testing.T) {
	const attack = "touch f && chown 1:1 f && echo chowned; mknod null c 1 3 && echo mknod"
	weak := newEngine(t, Options{Isolate: true, User: "0"})
	weak.weaken.keepCaps = true
	if got := sh(t, create(t, weak), attack+"; true"); !strings.Contains(got, "chowned") || !strings.Contains(got, "mknod") {
		t.Fatalf("with the default capabilities, root in the container could not chown or mknod (%q): the test shows nothing", got)
	}
	e := newEngine(t, Options{Isolate: true, User: "0"})
	ws := create(t, e)
	res := run(t, ws, &backend.Request{Command: attack})
	if strings.Contains(string(res.Stdout), "chowned") || strings.Contains(string(res.Stdout), "mknod") {
		t.Errorf("root in the workspace used a capability: %q", res.Stdout)
	}
	if got := sh(t, ws, "grep -E '^Cap(Eff|Prm|Bnd)' /proc/self/status"); strings.Count(got, "0000000000000000") != 3 {
		t.Errorf("capability sets are not empty:\n%s", got)
	}
}

func TestAttackNoNewPrivileges(t *testing.T) {
	weak := newEngine(t, Options{Isolate: true})
	weak.weaken.newPrivs = true
	if got := sh(t, create(t, weak), "grep NoNewPrivs /proc/self/status"); !strings.Contains(got, "0") {
		t.Fatalf("without the option, NoNewPrivs is %q: the test shows nothing", got)
	}
	ws := create(t, newEngine(t, Options{Isolate: true}))
	if got := sh(t, ws, "grep NoNewPrivs /proc/self/status"); !strings.Contains(got, "1") {
		t.Errorf("NoNewPrivs is %q, want 1: a set-user-ID program in the image would gain its owner's rights", got)
	}
}

// interfaces lists the network interfaces a command in ws sees.
func interfaces(t *testing.T, ws *Workspace) []string {
	t.Helper()
	return strings.Fields(sh(t, ws, "ls /sys/class/net"))
}

func TestAttackNetworkNoneHasOnlyLoopback(t *testing.T) {
	open := newEngine(t, Options{Isolate: true, AllowNetwork: true, Network: "host"})
	ows := create(t, open)
	if got := interfaces(t, ows); len(got) < 2 {
		t.Fatalf("with the host's network the container sees %q: the test shows nothing", got)
	}
	if g := ows.Guarantees(); g.Network != backend.IsolationNone {
		t.Errorf("with the network allowed, Guarantees().Network = %v, want none", g.Network)
	}
	ws := create(t, newEngine(t, Options{Isolate: true}))
	if got := interfaces(t, ws); !slices.Equal(got, []string{"lo"}) {
		t.Errorf("network mode none: the container sees interfaces %q, want only lo", got)
	}
	// No route leaves the container: a connection to an address outside
	// fails at once (no interface to send it on), not after a timeout.
	res := run(t, ws, &backend.Request{Command: "nc -w 2 192.0.2.1 80 </dev/null; echo rc=$?"})
	if !strings.Contains(string(res.Stdout)+string(res.Stderr), "unreachable") {
		t.Errorf("a connection to 192.0.2.1: stdout %q stderr %q, want network unreachable", res.Stdout, res.Stderr)
	}
	if g := ws.Guarantees(); g.Network != backend.IsolationOSKernel {
		t.Errorf("Guarantees().Network = %v, want os_kernel", g.Network)
	}
}

// snapshot lists the tree at dir: path, mode, size and content.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(p + " " + fi.Mode().String())
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.WriteString(" " + string(data))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestAttackIsolatedModeLeavesTheHostUntouched(t *testing.T) {
	root := bindRoot(t)
	if err := os.WriteFile(filepath.Join(root, "kept.txt"), []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(root), "outside-"+session(t))
	attack := "echo changed > kept.txt && echo new > sub/new.txt && rm -rf sub; echo escaped > " + outside + "; echo x > /tmp/x"
	before := snapshot(t, root)

	// Bind-mounted, the same command changes the project: the test can fail.
	bws := create(t, newEngine(t, Options{Root: root}))
	run(t, bws, &backend.Request{Command: attack})
	if snapshot(t, root) == before {
		t.Fatal("bind-mounted, the command did not change the root: the test shows nothing")
	}
	if err := os.WriteFile(filepath.Join(root, "kept.txt"), []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	before = snapshot(t, root)

	ws := create(t, newEngine(t, Options{Root: root, Isolate: true}))
	if got := sh(t, ws, "cat kept.txt"); got != "original\n" {
		t.Fatalf("the copy in the container holds %q, want the root's content", got)
	}
	run(t, ws, &backend.Request{Command: attack})
	if _, err := ws.WriteFile(t.Context(), "through-fs.txt", []byte("fs\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.WriteFile(t.Context(), "../escape.txt", []byte("fs\n")); !errors.Is(err, workspace.ErrOutside) {
		t.Errorf("WriteFile(../escape.txt): %v, want ErrOutside", err)
	}
	if got := sh(t, ws, "cat kept.txt through-fs.txt"); got != "changed\nfs\n" {
		t.Errorf("in the container: %q, want the changes there", got)
	}
	if after := snapshot(t, root); after != before {
		t.Errorf("the isolated workspace changed the root on the host:\nbefore\n%s\nafter\n%s", before, after)
	}
	for _, p := range []string{outside, filepath.Join(filepath.Dir(root), "escape.txt")} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists on the host: %v", p, err)
		}
	}
}

func TestAttackLinkToTheContainersRootIsRefused(t *testing.T) {
	root := bindRoot(t)
	ws := create(t, newEngine(t, Options{Root: root}))
	// The command makes links that lead to its own "/" (absolute, and
	// climbing out with ".."): inside the container they name the
	// container's files, on this machine the machine's.
	sh(t, ws, "ln -s / rootlink && ln -s /etc/passwd pw && ln -s ../../../../../../../../etc up && mkdir d && ln -s / d/deep")
	for _, name := range []string{"rootlink/etc/passwd", "pw", "up/passwd", "d/deep/etc/passwd"} {
		// Without the confinement, the file operation reads this
		// machine's /etc/passwd: the attack is real.
		if _, err := os.ReadFile(filepath.Join(root, name)); err != nil {
			t.Fatalf("a plain open of %s: %v; the test shows nothing", name, err)
		}
		f, err := ws.Open(t.Context(), name)
		if err == nil {
			f.Close()
		}
		if !errors.Is(err, workspace.ErrOutside) {
			t.Errorf("Open(%s): %v, want ErrOutside", name, err)
		}
	}
	// A write through the link, to a harmless name outside.
	victim := "/tmp/helikon-attack-" + session(t)
	if _, err := ws.WriteFile(t.Context(), "rootlink"+victim, []byte("x")); !errors.Is(err, workspace.ErrOutside) {
		t.Errorf("WriteFile(rootlink%s): %v, want ErrOutside", victim, err)
	}
	if _, err := os.Lstat(victim); !errors.Is(err, fs.ErrNotExist) {
		os.Remove(victim)
		t.Errorf("a write through the link created %s on this machine", victim)
	}
}
