//go:build linux

package fsroot_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/paigasus/helikon/workspace/fsroot"
)

// setidChildEnv, when set to a directory, makes TestWriteDoesNotHandSetIDBitsToANewOwner
// act as the child: it writes the file "f" in that directory and exits.
const setidChildEnv = "HELIKON_SANDBOX_SETID_CHILD"

// A set-user-ID or set-group-ID file rewritten by Write must not come out
// set-ID to an identity it did not have: root in a user namespace where the
// old owner is unmapped (chown fails) would otherwise make a set-user-ID-root
// file with the model's content, and an unprivileged writer a
// set-user-ID-to-itself one. When the owner and group are kept (root
// rewriting another user's file), the bits are kept too.
func TestWriteDoesNotHandSetIDBitsToANewOwner(t *testing.T) {
	if dir := os.Getenv(setidChildEnv); dir != "" {
		sb, err := fsroot.Open(dir)
		if err == nil {
			_, err = sb.WriteFile(context.Background(), "f", []byte("#!/bin/sh\nid\n"))
		}
		if err != nil {
			fmt.Println("child:", err)
			os.Exit(2)
		}
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("making files of other users needs root; not running as root")
	}
	const setid = syscall.S_ISUID | syscall.S_ISGID
	for _, tc := range []struct {
		name     string
		owner    int
		sys      *syscall.SysProcAttr // nil: write in this (root) process
		wantBits uint32               // set-ID bits expected after the write
		wantUID  uint32
	}{
		{name: "root keeps another user's owner and bits", owner: 1000, wantBits: setid, wantUID: 1000},
		{name: "root in a user namespace cannot keep an unmapped owner", owner: 1000,
			sys: &syscall.SysProcAttr{
				Cloneflags:  syscall.CLONE_NEWUSER,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}},
			}, wantBits: 0, wantUID: 0},
		{name: "an unprivileged writer replaces another user's file", owner: 2000,
			sys:      &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 1000, Gid: 1000}},
			wantBits: 0, wantUID: 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := publicTempDir(t)
			p := filepath.Join(dir, "f")
			must(t, os.WriteFile(p, []byte("#!/bin/sh\ntrue\n"), 0o755))
			must(t, os.Chown(p, tc.owner, tc.owner))
			must(t, syscall.Chmod(p, 0o6777))
			if tc.sys == nil {
				sb, err := fsroot.Open(dir)
				must(t, err)
				defer sb.Close()
				_, err = sb.WriteFile(context.Background(), "f", []byte("#!/bin/sh\nid\n"))
				must(t, err)
			} else {
				bin := filepath.Join(dir, "child.test")
				copyFile(t, os.Args[0], bin)
				cmd := exec.Command(bin, "-test.run=^TestWriteDoesNotHandSetIDBitsToANewOwner$", "-test.count=1")
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), setidChildEnv+"="+dir)
				cmd.SysProcAttr = tc.sys
				out, err := cmd.CombinedOutput()
				if err != nil {
					if cmd.ProcessState == nil { // no user namespaces, or a noexec temporary directory
						t.Skipf("cannot start the child here: %v", err)
					}
					t.Fatalf("child: %v\n%s", err, out)
				}
			}
			var st syscall.Stat_t
			must(t, syscall.Stat(p, &st))
			if b, _ := os.ReadFile(p); string(b) != "#!/bin/sh\nid\n" {
				t.Fatalf("the write did not happen: %q", b)
			}
			if st.Mode&setid != tc.wantBits || st.Uid != tc.wantUID || st.Mode&0o777 != 0o777 {
				t.Errorf("after the write: mode %#o, owner %d; want set-ID bits %#o, owner %d, permissions 0777", st.Mode&0o7777, st.Uid, tc.wantBits, tc.wantUID)
			}
		})
	}
}

// publicTempDir is a temporary directory that every user can write (not
// sticky: a writer must be able to replace another user's file), below
// directories every user can enter, for a child running as another user.
func publicTempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	must(t, os.Chmod(dir, 0o777))
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	must(t, err)
	for d := filepath.Dir(dir); len(d) > len(tmp); d = filepath.Dir(d) {
		must(t, os.Chmod(d, 0o755))
	}
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	must(t, err)
	must(t, os.WriteFile(to, b, 0o755))
}
