//go:build linux

package ossandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/paigasus/helikon/backend"
)

// tmpfsBackend returns a backend whose commands get a tmpfs temporary
// directory, over a private os.TempDir() (t.Setenv: not parallel), or skips
// where the caller has no mount namespace per command.
func tmpfsBackend(t *testing.T, opts Options) (*Backend, string) {
	t.Helper()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	b, _ := newTestBackend(t, opts)
	if !b.privileged && !b.userns {
		t.Skip("no mount namespace per command here: per-command directories")
	}
	if b.tmpBase == "" {
		t.Fatal("a caller with a mount namespace per command got no tmpfs temporary directory")
	}
	if filepath.Dir(b.tmpBase) != tmp {
		t.Fatalf("mount point %s is not in TMPDIR %s", b.tmpBase, tmp)
	}
	return b, tmp
}

func runOK(t *testing.T, b *Backend, cmd string) string {
	t.Helper()
	res, err := b.Run(context.Background(), &backend.Request{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("%s: exit %v, stdout %q, stderr %q", cmd, res.ExitCode, res.Stdout, res.Stderr)
	}
	return strings.TrimSpace(string(res.Stdout))
}

// TestTmpfsTempDirIsPrivate: what a command leaves in its temporary
// directory never reaches the host nor the next command, and two commands
// running at once do not see each other's files.
func TestTmpfsTempDirIsPrivate(t *testing.T) {
	b, tmp := tmpfsBackend(t, Options{})
	got := runOK(t, b, `echo secret > "$TMPDIR/left"; echo "$TMPDIR $HOME"; stat -f -c %T "$TMPDIR"`)
	if want := b.tmpBase + " " + b.home.path + "\ntmpfs"; got != want {
		t.Errorf("TMPDIR, HOME and file system = %q, want %q", got, want)
	}
	if ents, err := os.ReadDir(b.tmpBase); err != nil || len(ents) != 0 {
		t.Errorf("the host's mount point holds %v (%v); want it empty", ents, err)
	}
	if got := runOK(t, b, `ls -A "$TMPDIR" | wc -l`); got != "0" {
		t.Errorf("the next command sees %s entries in its temporary directory; want 0", got)
	}
	// Two at once, each waiting (bounded) for the other to have written
	// its file before it lists its own directory.
	script := func(me, other string) string {
		return `echo x > "$TMPDIR/` + me + `" && touch ` + me + `-wrote && i=0; while [ ! -e ` + other + `-wrote ] && [ $i -lt 2000 ]; do sleep 0.01; i=$((i+1)); done; ls -A "$TMPDIR"`
	}
	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i, me := range []string{"a", "b"} {
		other := map[string]string{"a": "b", "b": "a"}[me]
		wg.Go(func() { outs[i] = runOK(t, b, script(me, other)) })
	}
	wg.Wait()
	if outs[0] != "a" || outs[1] != "b" {
		t.Errorf("concurrent commands list %q and %q; want a and b each alone", outs[0], outs[1])
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 || ents[0].Name() != homeDirName+strconv.Itoa(os.Geteuid()) || ents[1].Name() != filepath.Base(b.tmpBase) {
		t.Errorf("TMPDIR holds %v after the commands; want only the session homes' directory and the mount point", ents)
	}
}

// TestTmpfsIsBounded: the tmpfs holds at most the file size limit in all,
// and a bounded number of files.
func TestTmpfsIsBounded(t *testing.T) {
	b, _ := tmpfsBackend(t, Options{Limits: backend.ResourceLimits{FileSize: 1 << 20}})
	res, err := b.Run(context.Background(), &backend.Request{
		Command: `cd "$TMPDIR" && head -c 700000 /dev/zero > a && head -c 700000 /dev/zero > b; echo $?; seq 20000 | xargs touch 2>&1 | grep -c 'No space'`,
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(res.Stdout))
	if len(got) != 2 || got[0] == "0" || got[1] == "0" {
		t.Errorf("1.4 MB and 20000 files in a tmpfs of 1 MiB: %q, stderr %q; want both refused", res.Stdout, res.Stderr)
	}
}

// TestTempDirFallback: a mount point that is not this user's private
// directory is not used; each command then gets a directory of its own,
// removed afterwards.
func TestTempDirFallback(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	mp := filepath.Join(tmp, tmpfsMountPointName+strconv.Itoa(os.Geteuid()))
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, mp); err != nil {
		t.Fatal(err)
	}
	b, _ := newTestBackend(t, Options{})
	if b.tmpBase != "" {
		t.Fatalf("a symbolic link %s was taken as the mount point", mp)
	}
	got := runOK(t, b, `touch "$TMPDIR/x" && echo "$TMPDIR"`)
	if !strings.HasPrefix(got, filepath.Join(tmp, "helikon-os-")) || got == mp {
		t.Errorf("TMPDIR = %q; want a directory of its own in %s", got, tmp)
	}
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 || ents[0].Name() != homeDirName+strconv.Itoa(os.Geteuid()) {
		t.Errorf("TMPDIR holds %v after the command; want only the session homes' directory and the link", ents)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("the link's target got %v", ents)
	}
}

func TestUsableMountPoint(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		setup func(p string) error
		want  bool
	}{
		{"missing: created", func(string) error { return nil }, true},
		{"private directory", func(p string) error { return os.Mkdir(p, 0o700) }, true},
		{"symbolic link", func(p string) error { return os.Symlink(dir, p) }, false},
		{"file", func(p string) error { return os.WriteFile(p, nil, 0o600) }, false},
		{"group-writable", func(p string) error {
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			return os.Chmod(p, 0o770)
		}, false},
		{"another user's", func(p string) error {
			if !isRoot() {
				return os.Mkdir(p, 0o700) // cannot chown: expect usable
			}
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			return os.Chown(p, 65534, 65534)
		}, !isRoot()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			if err := tc.setup(p); err != nil {
				t.Fatal(err)
			}
			if got := usableMountPoint(p); got != tc.want {
				t.Errorf("usableMountPoint = %v, want %v", got, tc.want)
			}
		})
	}
	// A mount point that would cover the root or a read path, or lie in
	// one, is not used.
	t.Setenv("TMPDIR", dir)
	mp := filepath.Join(dir, tmpfsMountPointName+strconv.Itoa(os.Geteuid()))
	for _, b := range []*Backend{
		{root: filepath.Join(mp, "work")},
		{root: "/work", readPaths: []string{dir}},
		{root: "/work", readPaths: []string{mp}},
	} {
		if got := b.tmpfsMountPoint(); got != "" {
			t.Errorf("root %s, read paths %v: mount point %s used", b.root, b.readPaths, got)
		}
	}
	if got := (&Backend{root: "/work"}).tmpfsMountPoint(); got != mp {
		t.Errorf("mount point = %q, want %q", got, mp)
	}
}
