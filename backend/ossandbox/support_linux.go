//go:build linux

package ossandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/internal/landlock"
	"github.com/paigasus/helikon/internal/seccomp"
)

// Probe reports what this machine supports. It builds a backend on a
// throwaway directory to learn whether [New] would succeed, and starts
// /bin/true in a new user namespace to learn whether those work.
func Probe() Support {
	s := Support{OS: runtime.GOOS, Root: os.Geteuid() == 0}
	if abi, err := landlockABI(); err != nil {
		s.Landlock = err.Error()
	} else {
		s.LandlockABI = abi
		s.Landlock = fmt.Sprintf("abi %d", abi)
		if abi < landlock.MinABI {
			s.Landlock += fmt.Sprintf(" (below the minimum %d)", landlock.MinABI)
		}
	}
	if err := seccomp.Available(); err != nil {
		s.Seccomp = err.Error()
	} else {
		s.Seccomp = "available (filters, kill-process and errno actions)"
	}
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  unix.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
	}
	if err := cmd.Run(); err != nil {
		s.UserNamespaces = "unavailable: " + err.Error()
	} else {
		s.UserNamespaces = "available"
	}
	s.MountNamespaces = "needs root or a user namespace"
	if dir := pidsCgroupDir(); dir != "" {
		s.PidsCgroup = "v1 at " + dir
	} else {
		s.PidsCgroup = "unavailable (no writable cgroup v1 pids hierarchy)"
	}
	tmp, err := os.MkdirTemp("", "helikon-os-doctor-")
	if err != nil {
		s.Reason = err.Error()
		return s
	}
	defer os.RemoveAll(tmp)
	b, err := New(tmp, nil)
	if err != nil {
		s.Reason = err.Error()
		if s.Root && !errors.Is(err, errRoot) {
			s.MountNamespaces = "unavailable: " + err.Error()
		}
		return s
	}
	b.settle()
	switch {
	case s.Root:
		s.MountNamespaces = "available (mount and pid namespaces created on a confining thread)"
	case b.userns:
		s.MountNamespaces = "available (a user and mount namespace per command, created by a launcher: files outside the root are read-only)"
	default:
		s.MountNamespaces = "unavailable: " + b.usernsWhy + "; metadata of the caller's own files outside the root (chmod, utimes, xattrs) is NOT confined"
	}
	s.Available = true
	return s
}
