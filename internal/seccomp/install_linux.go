package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// Native returns the description of the architecture this program runs on.
func Native() (*Arch, error) { return ForArch(runtime.GOARCH) }

// Available reports whether the kernel supports seccomp filters with the
// actions this package uses, and why not when it does not.
func Available() error {
	for _, act := range []uint32{RetKillProcess, RetErrno, RetAllow} {
		a := act
		// SECCOMP_GET_ACTION_AVAIL = 2
		if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, 2, 0, uintptr(unsafe.Pointer(&a))); errno != 0 {
			return fmt.Errorf("seccomp action %#x unavailable: %w", act, errno)
		}
	}
	return nil
}

// InstallThread installs prog on the calling OS thread only: without
// SECCOMP_FILTER_FLAG_TSYNC, the other threads of the process are not
// filtered. The caller must have locked its goroutine to the thread
// (runtime.LockOSThread) and must have set no_new_privs on it, or hold
// CAP_SYS_ADMIN. A filter cannot be removed: the thread must never run
// unrelated goroutines again (exit the goroutine without unlocking).
func InstallThread(prog []bpf.RawInstruction) error {
	if len(prog) == 0 {
		return fmt.Errorf("seccomp: empty filter")
	}
	filters := make([]unix.SockFilter, len(prog))
	for i, ins := range prog {
		filters[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filters)), Filter: &filters[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filters)
	if errno != 0 {
		return fmt.Errorf("seccomp: install filter: %w", errno)
	}
	return nil
}
