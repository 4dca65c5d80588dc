//go:build unix

package fsroot

import (
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// canLock reports whether lockFile works on this platform.
const canLock = true

// lockFile takes an exclusive advisory lock (flock) on f. It waits when wait
// is true and fails at once otherwise. The kernel releases the lock when the
// last descriptor is closed, and so when the process dies.
func lockFile(f *os.File, wait bool) error {
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		for {
			lerr = unix.Flock(int(fd), how)
			if lerr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return lerr
}

// keepOwner gives f the owner and group of old when this process may (it
// runs as root) and they differ. Failure is not an error: the content and
// mode are what the write promises.
func keepOwner(f *os.File, old fs.FileInfo) {
	st, ok := old.Sys().(*syscall.Stat_t)
	if !ok || os.Geteuid() != 0 {
		return
	}
	if int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid() {
		f.Chown(int(st.Uid), int(st.Gid))
	}
}

// sameOwner reports whether a and b have the same owner and the same group.
func sameOwner(a, b fs.FileInfo) (uid, gid bool) {
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	if !ok1 || !ok2 {
		return false, false
	}
	return sa.Uid == sb.Uid, sa.Gid == sb.Gid
}
