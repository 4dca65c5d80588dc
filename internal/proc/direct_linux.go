package proc

import (
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// directDisabled is set once ptrace(PTRACE_TRACEME) was refused (a seccomp
// filter, Yama's ptrace_scope 3, this program being traced): direct starts
// are then refused without trying.
var directDisabled atomic.Bool

// startLimited starts cmd stopped at its exec, applies limits to it and
// lets it run. The program executes no instruction of its own before its
// limits are in place: PTRACE_TRACEME makes the kernel stop it with SIGTRAP
// once execve has replaced the image, before it returns to user space. It is
// detached right after prlimit, so it is not traced while it runs (and can
// use ptrace itself). On any failure after the start, the program is killed
// while still stopped and reaped, and the error is returned: nothing ran.
func startLimited(cmd *exec.Cmd, limits []rlimit) error {
	if directDisabled.Load() {
		return ErrNoDirectStart
	}
	// The tracer is the thread that forked; only it may detach.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr.Ptrace = true
	if err := cmd.Start(); err != nil {
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSYS) {
			// EPERM is what a refused PTRACE_TRACEME reports (it could
			// also be the clone into the cgroup; the shell path then
			// finds out and falls back to the reaper).
			if directDisabled.CompareAndSwap(false, true) {
				slog.Warn("helikon: direct starts disabled; commands run through the shell", "err", err)
			}
			return fmt.Errorf("%w: %w", ErrNoDirectStart, err)
		}
		return err
	}
	pid := cmd.Process.Pid
	fail := func(err error) error {
		_ = unix.Kill(pid, unix.SIGKILL)
		_ = cmd.Wait()
		return fmt.Errorf("%w: %w", ErrNoDirectStart, err)
	}
	if err := waitExecStop(pid); err != nil {
		return fail(err)
	}
	// Should this program die before the detach, the kernel kills the
	// stopped program rather than letting it run without its limits.
	if err := unix.PtraceSetOptions(pid, unix.PTRACE_O_EXITKILL); err != nil {
		return fail(fmt.Errorf("ptrace options: %w", err))
	}
	for _, l := range limits {
		v := l.value()
		rl := unix.Rlimit{Cur: v, Max: v}
		if err := unix.Prlimit(pid, rlimitResource(l.res), &rl, nil); err != nil {
			return fail(fmt.Errorf("prlimit %s: %w", l.flag, err))
		}
	}
	if err := unix.PtraceDetach(pid); err != nil {
		return fail(fmt.Errorf("ptrace detach: %w", err))
	}
	return nil
}

// siginfo is the SIGCHLD layout of siginfo_t that waitid fills in.
type siginfo struct {
	signo, errno, code int32
	_                  int32
	pid                int32
	uid                uint32
	status             int32
	_                  [100]byte
}

const (
	cldTrapped = 4 // CLD_TRAPPED: a traced child stopped
)

// waitExecStop waits until pid, traced since before its exec, stops at the
// SIGTRAP the kernel sends it after a successful execve. Anything else (a
// signal that arrived first, the process gone) is an error.
func waitExecStop(pid int) error {
	for {
		var info siginfo
		_, _, errno := unix.Syscall6(unix.SYS_WAITID, unix.P_PID, uintptr(pid), uintptr(unsafe.Pointer(&info)), unix.WEXITED|unix.WSTOPPED|unix.WNOWAIT, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return fmt.Errorf("wait for the exec stop: %w", errno)
		}
		if info.code == cldTrapped && syscall.Signal(info.status) == unix.SIGTRAP {
			return nil
		}
		return fmt.Errorf("the program did not stop at its exec (code %d, status %d)", info.code, info.status)
	}
}

func rlimitResource(r resource) int {
	switch r {
	case resCPU:
		return unix.RLIMIT_CPU
	case resFileSize:
		return unix.RLIMIT_FSIZE
	case resAddressSpace:
		return unix.RLIMIT_AS
	}
	return unix.RLIMIT_NOFILE
}
