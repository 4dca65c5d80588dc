package seccomp

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// InstallThreadListener installs prog on the calling OS thread only, like
// [InstallThread], and returns the filter's listener: the supervisor side
// of the syscalls prog answers with [RetUserNotif]. The caller must keep
// the thread locked and discard it, as for InstallThread, and must serve or
// close the listener: a notified syscall blocks until it is answered, and
// fails with ENOSYS once the listener is closed.
func InstallThreadListener(prog []bpf.RawInstruction) (*Listener, error) {
	if len(prog) == 0 {
		return nil, fmt.Errorf("seccomp: empty filter")
	}
	filters := make([]unix.SockFilter, len(prog))
	for i, ins := range prog {
		filters[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filters)), Filter: &filters[0]}
	fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filters)
	if errno != 0 {
		return nil, fmt.Errorf("seccomp: install filter with a listener: %w", errno)
	}
	// The kernel creates the listener close-on-exec. Non-blocking, so
	// that the runtime's poller waits for notifications instead of a
	// thread blocked in an ioctl.
	if err := unix.SetNonblock(int(fd), true); err != nil {
		unix.Close(int(fd))
		return nil, fmt.Errorf("seccomp: listener: %w", err)
	}
	f := os.NewFile(fd, "seccomp-listener")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("seccomp: listener: %w", err)
	}
	return &Listener{f: f, rc: rc}, nil
}

// Listener receives the syscalls a filter answered with [RetUserNotif] and
// answers them. Its methods may be called from any goroutine, but Next
// from one at a time.
type Listener struct {
	f  *os.File
	rc syscall.RawConn
}

// Notif is one notified syscall, stopped until it is answered.
type Notif struct {
	// ID identifies the notification in answers.
	ID uint64
	// Pid is the calling thread's id in this program's pid namespace.
	Pid int
	// Nr and Arch are the syscall number and AUDIT_ARCH_* value.
	Nr   int32
	Arch uint32
	// Args are the raw arguments.
	Args [6]uint64
}

// struct seccomp_notif and struct seccomp_notif_resp (linux/seccomp.h).
type notifData struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

type notifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// Next waits for the next notification. It returns [io.EOF] when no
// process uses the filter any more (none can be notified again), and an
// error wrapping [os.ErrClosed] after Close.
func (l *Listener) Next() (Notif, error) {
	var n Notif
	var ioErr error
	gone := false
	err := l.rc.Read(func(fd uintptr) bool {
		// A listener polls readable when a notification waits and hangs
		// up when the filter has no task left. The receive ioctl itself
		// blocks whatever the descriptor's flags, so it is made only
		// when poll says it will not.
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			_, err := unix.Poll(pfd, 0)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				ioErr = err
				return true
			}
			break
		}
		switch {
		case pfd[0].Revents&unix.POLLIN != 0:
		case pfd[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0:
			gone = true
			return true
		default:
			return false // wait for the poller
		}
		var d notifData // the kernel insists on a zeroed structure
		if _, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&d))); errno != 0 {
			if errno == unix.ENOENT || errno == unix.EINTR {
				// The caller was killed (or the wait interrupted) between
				// poll and receive: nothing to answer.
				return false
			}
			ioErr = errno
			return true
		}
		n = Notif{ID: d.id, Pid: int(d.pid), Nr: d.nr, Arch: d.arch, Args: d.args}
		return true
	})
	switch {
	case err != nil:
		return Notif{}, fmt.Errorf("seccomp: listener: %w", err)
	case ioErr != nil:
		return Notif{}, fmt.Errorf("seccomp: receive notification: %w", ioErr)
	case gone:
		return Notif{}, io.EOF
	}
	return n, nil
}

// Continue lets the notified syscall run as if the filter had allowed it.
// Only for syscalls whose arguments are values, not pointers: the kernel
// reads pointed-to memory again after the answer, when the caller may have
// changed it.
func (l *Listener) Continue(id uint64) error {
	return l.send(notifResp{id: id, flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE})
}

// Fail makes the notified syscall fail with errno without running it.
func (l *Listener) Fail(id uint64, errno syscall.Errno) error {
	return l.send(notifResp{id: id, error: -int32(errno)})
}

func (l *Listener) send(r notifResp) error {
	var errno syscall.Errno
	err := l.rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(&r)))
	})
	if err != nil {
		return fmt.Errorf("seccomp: answer notification: %w", err)
	}
	if errno != 0 {
		if errno == unix.ENOENT {
			return fmt.Errorf("seccomp: answer notification: %w", ErrNotifGone)
		}
		return fmt.Errorf("seccomp: answer notification: %w", errno)
	}
	return nil
}

// ErrNotifGone is wrapped by answers to a notification whose caller was
// killed in the meantime.
var ErrNotifGone = errors.New("the notified caller is gone")

// Valid reports whether notification id is still pending: its caller has
// not been killed, so the Pid it reported still names it. Check it after
// acting on a Pid (which may otherwise have been reused).
func (l *Listener) Valid(id uint64) bool {
	var errno syscall.Errno
	err := l.rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, uintptr(unsafe.Pointer(&id)))
	})
	return err == nil && errno == 0
}

// Close closes the listener. Syscalls notified afterwards fail with ENOSYS.
func (l *Listener) Close() error { return l.f.Close() }
