package launcher

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/internal/proc/reaper"
)

// Rlimit is one resource limit to set on a command, soft and hard alike.
type Rlimit struct {
	Resource int    // RLIMIT_*
	Name     string // for errors
	Value    uint64
}

// cldTrapped is the siginfo code of a ptrace stop (CLD_TRAPPED).
const cldTrapped = 4

// LimitAtExec sets the resource limits of p, which was started with
// SysProcAttr.Ptrace from the calling thread (its tracer).
//
// Go cannot run code in a child between fork and exec, and setrlimit in
// this program would limit all of it. A shell prologue (ulimit, then exec)
// costs a whole extra program start, so the child is started traced
// instead: the runtime makes it call PTRACE_TRACEME just before execve, and
// the kernel stops it with SIGTRAP once the new program is loaded, before
// it runs a single instruction. This thread, its tracer, sets the limits
// with prlimit(2) and detaches, suppressing the SIGTRAP; only then does the
// command run. The seccomp filter lets ptrace make exactly those two
// requests (see internal/seccomp Options.TraceMe). A child that cannot be
// limited is killed and reaped here: nothing runs without its limits.
//
// Waiting must not consume the stop or an exit (the caller reaps the
// process later), hence WNOWAIT; a stopped tracee is let go by the detach.
func LimitAtExec(p *os.Process, limits []Rlimit) error {
	pid := p.Pid
	err := func() error {
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WSTOPPED|unix.WEXITED|unix.WNOWAIT|unix.WALL, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return fmt.Errorf("wait for the command to stop at exec: %w", err)
			}
			break
		}
		if info.Code != cldTrapped {
			return fmt.Errorf("the command ended before it could be limited (siginfo code %d)", info.Code)
		}
		for _, r := range limits {
			lim := unix.Rlimit{Cur: r.Value, Max: r.Value}
			if err := unix.Prlimit(pid, r.Resource, &lim, nil); err != nil {
				return fmt.Errorf("set the %s limit: %w", r.Name, err)
			}
		}
		if err := unix.PtraceDetach(pid); err != nil {
			return fmt.Errorf("let the command run: %w", err)
		}
		return nil
	}()
	if err != nil {
		_ = p.Kill()
		_, _ = p.Wait()
		return err
	}
	return nil
}

// janitorInterval is how often ReapTracedThreads looks at its command.
const janitorInterval = 50 * time.Millisecond

// ReapTracedThreads keeps a command that may call PTRACE_TRACEME (the
// filter lets it, for LimitAtExec) from hanging its call. A thread other
// than the command's first one that asks to be traced is traced by this
// program, and when it dies it stays a zombie until this program waits for
// it by its thread id (__WALL); until then the command's first thread, the
// init of its pid namespace, cannot finish exiting (the kernel waits for
// every pid of the namespace to be freed), its parent never learns that it
// exited, and the call would wait forever, timeout or not. Every
// janitorInterval until done is closed, this reaps the command's other
// threads that are zombies (and so dead and traced by this program: an
// untraced thread is released as it dies). It must not wait for the first
// thread to become a zombie: when the traced thread dies first, the first
// thread exits last and waits, not a zombie yet, in the kernel for that
// thread's pid to be freed. It waits for those thread ids only, with
// WEXITED: the first thread's status stays for its waiter, no live
// thread's stop is consumed, and no other child of this program is touched.
func ReapTracedThreads(pid int, done <-chan struct{}) {
	t := time.NewTicker(janitorInterval)
	defer t.Stop()
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		tasks, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range tasks {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || tid == pid || !zombie(dir+"/"+e.Name()+"/stat") {
				continue
			}
			var info unix.Siginfo
			_ = unix.Waitid(unix.P_PID, tid, &info, unix.WEXITED|unix.WNOHANG|unix.WALL, nil)
		}
	}
}

// zombie reports whether the task whose stat file is at path is a zombie.
func zombie(path string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	f, ok := reaper.StatFields(b)
	return ok && len(f) > 0 && f[0] == "Z"
}
