//go:build linux

package ossandbox

import (
	"archive/tar"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
)

// TestAttackSetIDPlantSyscalls gives a file in the root a set-user-ID or
// set-group-ID bit through every call that takes a mode, inside the
// sandbox (refused) and unconfined (the control: the kernel honours each
// for this user). A set-user-ID file a root caller's command left in the
// project would run as root for any local user who can reach it.
func TestAttackSetIDPlantSyscalls(t *testing.T) {
	b, root := newTestBackend(t, Options{})
	for _, method := range setIDMethods {
		t.Run(method, func(t *testing.T) {
			if method == "creat" && sysCreat < 0 {
				t.Log("no creat on this architecture: the attack uses openat")
			}
			dir := filepath.Join(root, method)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			got := sandboxed(t, b, nil, "setid", method, dir)
			if got.code != attackBlocked {
				t.Errorf("sandboxed %s: %v; want EPERM (ENOSYS for openat2)", method, got)
			}
			noSetIDFiles(t, dir)
			ctl := unconfined(t, t.TempDir(), nil, "setid", method, t.TempDir())
			if ctl.code == attackBroken && strings.Contains(ctl.out, "no such call") {
				t.Skipf("control: %v", ctl)
			}
			if ctl.code != attackEscaped {
				t.Errorf("control (unconfined) %s: %v; the kernel must honour the bit without the sandbox", method, ctl)
			}
		})
	}
}

// TestAttackSetIDPlantTools makes set-ID files with the tools a command
// would use: chmod, install, cp -p of a set-user-ID file, tar -x, perl,
// python and busybox. No set-ID file may appear in the root; the same
// commands unconfined make one.
func TestAttackSetIDPlantTools(t *testing.T) {
	b, root := newTestBackend(t, Options{})
	cases := []struct {
		name, cmd string
		need      string // a program beyond coreutils and tar the case needs
		// userControl is whether the unconfined run must make a set-ID
		// file for an unprivileged user too (GNU tar restores set-ID bits
		// only where it restores the owner, as root).
		userControl bool
	}{
		{"chmod u+s", "chmod u+s f", "", true},
		{"chmod 4755", "chmod 4755 f", "", true},
		{"chmod g+s", "chmod g+s f", "", true},
		{"chmod 6755", "chmod 6755 f", "", true},
		{"chmod g+s on a directory", "mkdir d && chmod g+s d", "", true},
		{"install -m 4755", "install -m 4755 f inst", "", true},
		{"cp -p of a set-user-ID file", "cp -p src-suid copy", "", true},
		{"cp -a of a set-user-ID file", "cp -a src-suid copy", "", true},
		{"tar -xp of a set-user-ID entry", "tar -xpf a.tar", "", false},
		{"perl chmod", `perl -e 'chmod(04755, "f") or die "$!\n"'`, "perl", true},
		{"perl sysopen O_CREAT 04755", `perl -MFcntl -e 'sysopen(my $f, "p", O_CREAT|O_WRONLY, 04755) or die "$!\n"'`, "perl", true},
		{"python os.chmod", `/usr/bin/python3 -c 'import os; os.chmod("f", 0o4755)'`, "/usr/bin/python3", true},
		{"python os.open O_CREAT 04755", `/usr/bin/python3 -c 'import os; os.open("p", os.O_CREAT|os.O_WRONLY, 0o4755)'`, "/usr/bin/python3", true},
		{"busybox chmod", "busybox chmod 4755 f", "busybox", true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.need != "" {
				if _, err := exec.LookPath(tc.need); err != nil {
					t.Skipf("no %s here", tc.need)
				}
			}
			dir := filepath.Join(root, strconv.Itoa(i))
			setIDFixture(t, dir)
			res, err := b.Run(context.Background(), &backend.Request{Command: "cd " + dir + " && " + tc.cmd})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("sandboxed: exit %v: %s%s", exitOf(res), res.Stdout, res.Stderr)
			noSetIDFiles(t, dir)

			ctlDir := filepath.Join(t.TempDir(), "ctl")
			setIDFixture(t, ctlDir)
			cmd := exec.Command("bash", "-c", tc.cmd)
			cmd.Dir = ctlDir
			out, err := cmd.CombinedOutput()
			made := setIDFiles(t, ctlDir)
			switch {
			case len(made) == 0 && (isRoot() || tc.userControl):
				t.Errorf("control (unconfined) %q made no set-ID file (%v: %s); the attack must work without the sandbox", tc.cmd, err, out)
			case len(made) == 0:
				t.Logf("control (unconfined, not required for this user) made no set-ID file: %v: %s", err, out)
			}
		})
	}
}

// TestAttackFileCapabilityRefused sets a file capability, the other
// attribute that gives a program privilege at exec. It needs
// CAP_SETFCAP, which the command never holds.
func TestAttackFileCapabilityRefused(t *testing.T) {
	b, root := newTestBackend(t, Options{})
	if got := sandboxed(t, b, nil, "setcap", filepath.Join(root, "capped")); got.code != attackBlocked {
		t.Errorf("sandboxed: %v; want EPERM", got)
	}
	ctl := unconfined(t, root, nil, "setcap", filepath.Join(t.TempDir(), "capped"))
	switch {
	case isRoot() && ctl.code != attackEscaped:
		t.Errorf("control (root, unconfined): %v; want the capability set", ctl)
	case !isRoot():
		t.Logf("control (unprivileged, not required to succeed): %v", ctl)
	}
}

// TestSetIDFilterKeepsOrdinaryModes runs what builds and version control
// do with modes, which must keep working: chmod +x and numeric modes
// without set-ID bits, creating files and directories with modes,
// install, cp -p, tar -x, and a directory made inside a set-group-ID
// directory (the kernel's inheritance, not a call the filter refuses).
func TestSetIDFilterKeepsOrdinaryModes(t *testing.T) {
	b, root := newTestBackend(t, Options{})
	sgid := filepath.Join(root, "shared")
	if err := os.Mkdir(sgid, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sgid, 0o775|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	script := `set -e
cd ` + root + `
echo x > f && chmod +x f && chmod 0644 f && chmod u=rwx,go=rx f && chmod 1777 f && chmod 755 f
mkdir -m 700 d1 && mkdir -p d2/a/b && install -m 755 f d2/inst && install -d -m 750 d3
cp -p f fp && cp -a d2 d4 && touch -r f fp
tar -cf t.tar f d2 && mkdir x && tar -xpf t.tar -C x
(umask 0; echo y > u)
mkdir shared/sub && touch shared/file
test -g shared/sub
echo done`
	res, err := b.Run(context.Background(), &backend.Request{Command: script})
	if err != nil {
		t.Fatal(err)
	}
	if exitOf(res) != 0 || !strings.Contains(string(res.Stdout), "done") {
		t.Fatalf("exit %v: %s%s", exitOf(res), res.Stdout, res.Stderr)
	}
}

// setIDFixture makes dir with what the tool attacks start from: a plain
// executable f, a set-user-ID file src-suid owned by this user (the source
// of cp -p), and a.tar holding a set-user-ID entry.
func setIDFixture(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(dir, "f"), "#!/bin/sh\nid\n")
	if err := os.Chmod(filepath.Join(dir, "f"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "src-suid")
	mustWrite(t, src, "#!/bin/sh\nid\n")
	if err := os.Chmod(src, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "a.tar"))
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	body := "#!/bin/sh\nid\n"
	if err := tw.WriteHeader(&tar.Header{Name: "t-suid", Mode: 0o4755, Size: int64(len(body)), Uid: os.Getuid(), Gid: os.Getgid(), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// setIDFiles lists the files and directories under dir with a set-ID bit,
// but the fixture's own src-suid.
func setIDFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return err
		}
		if st.Mode&(unix.S_ISUID|unix.S_ISGID) != 0 && filepath.Base(path) != "src-suid" {
			out = append(out, path+" "+strconv.FormatUint(uint64(st.Mode&0o7777), 8))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// noSetIDFiles fails the test if a set-ID file appeared under dir.
func noSetIDFiles(t *testing.T, dir string) {
	t.Helper()
	if made := setIDFiles(t, dir); len(made) > 0 {
		t.Errorf("set-ID files planted in the root: %v", made)
	}
}

func exitOf(r *backend.Result) int {
	if r.ExitCode == nil {
		return -r.Signal
	}
	return *r.ExitCode
}
