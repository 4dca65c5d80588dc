//go:build linux

package ossandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/proc"
)

// rlimit is one resource limit to set on the command, soft and hard alike.
type rlimit struct {
	resource int
	name     string
	value    uint64
}

// rlimits returns the limits to set on the command's first process: core 0
// and every positive limit of l, each lowered to this program's own hard
// limit (a command never gets more than this program has). procs is
// RLIMIT_NPROC, or -1 where the process cap is a pids cgroup or does not
// apply (uid 0).
func rlimits(l backend.ResourceLimits, procs int64) []rlimit {
	out := []rlimit{{unix.RLIMIT_CORE, "core", 0}}
	add := func(res int, name string, v int64) {
		if v <= 0 {
			return
		}
		u := uint64(v)
		var cur unix.Rlimit
		if err := unix.Getrlimit(res, &cur); err == nil && cur.Max != unix.RLIM_INFINITY && u > cur.Max {
			u = cur.Max
		}
		out = append(out, rlimit{res, name, u})
	}
	add(unix.RLIMIT_CPU, "cpu", l.CPUSeconds)
	add(unix.RLIMIT_FSIZE, "file size", l.FileSize)
	add(unix.RLIMIT_AS, "address space", l.AddressSpace)
	add(unix.RLIMIT_NOFILE, "open files", l.OpenFiles)
	add(unix.RLIMIT_NPROC, "processes", procs)
	return out
}

// traceMeAllowed reports whether a child may ask to be traced by its
// parent after the parent dropped its capabilities: Yama's ptrace_scope 2
// and 3 refuse that.
func traceMeAllowed() bool {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	if errors.Is(err, os.ErrNotExist) {
		return true // no Yama
	}
	if err != nil {
		return false
	}
	s := strings.TrimSpace(string(b))
	return s == "0" || s == "1"
}

// traced reports whether this program is being traced (a debugger, strace
// -f): a tracer follows the command too, and the command's own
// PTRACE_TRACEME then fails, so limits are set by a shell prologue instead.
// The answer is kept for a second (reading /proc/self/status costs tens of
// microseconds); a tracer attaching within that second makes commands fail
// to start, never run unlimited.
func traced() bool {
	now := time.Now().UnixNano()
	if v := tracedCache.Load(); v != 0 && now-v&^1 < int64(time.Second) {
		return v&1 == 1
	}
	t := readTraced()
	v := now &^ 1
	if t {
		v |= 1
	}
	tracedCache.Store(v)
	return t
}

// tracedCache holds when traced last read /proc/self/status (nanoseconds,
// low bit cleared) and its answer (the low bit).
var tracedCache atomic.Int64

func readTraced() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return true // cannot tell: take the path that works either way
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "TracerPid:"); ok {
			return strings.TrimSpace(v) != "0"
		}
	}
	return true
}

// cldTrapped is the siginfo code of a ptrace stop (CLD_TRAPPED).
const cldTrapped = 4

// limitAtExec sets the resource limits of cmd's process, which was started
// with SysProcAttr.Ptrace from the calling thread, the confining one.
//
// Go cannot run code in a child between fork and exec, and setrlimit in
// this program would limit all of it. A shell prologue (ulimit, then exec)
// costs a whole extra program start, so for root callers the child is
// started traced instead: os/exec makes it call PTRACE_TRACEME just before
// execve, and the kernel stops it with SIGTRAP once the new program is
// loaded, before it runs a single instruction. This thread, its tracer,
// sets the limits with prlimit(2) and detaches, suppressing the SIGTRAP;
// only then does the command run. The seccomp filter lets ptrace make
// exactly those two requests (see internal/seccomp Policy.TraceMe). A
// child that cannot be limited is killed and reaped here: nothing runs
// without its limits.
//
// Waiting must not consume the stop or an exit (os/exec reaps the process
// later), hence WNOWAIT; a stopped tracee is let go by the detach.
func limitAtExec(cmd *exec.Cmd, limits []rlimit) error {
	pid := cmd.Process.Pid
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
			lim := unix.Rlimit{Cur: r.value, Max: r.value}
			if err := unix.Prlimit(pid, r.resource, &lim, nil); err != nil {
				return fmt.Errorf("set the %s limit: %w", r.name, err)
			}
		}
		if err := unix.PtraceDetach(pid); err != nil {
			return fmt.Errorf("let the command run: %w", err)
		}
		return nil
	}()
	if err != nil {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		return fmt.Errorf("ossandbox: %w", err)
	}
	return nil
}

// janitorInterval is how often reapTracedThreads looks at its command.
const janitorInterval = 50 * time.Millisecond

// reapTracedThreads keeps a command that may call PTRACE_TRACEME (the
// filter lets root callers' commands, for limitAtExec) from hanging its
// call. A thread other than the command's first one that asks to be traced
// is traced by this program, and when it dies it stays a zombie until this
// program waits for it by its thread id (__WALL); until then the command's
// first thread, the init of its pid namespace, cannot finish exiting (the
// kernel waits for every pid of the namespace to be freed), its parent
// never learns that it exited, and Run would wait forever, timeout or not.
// Every janitorInterval until done is closed, this reaps the command's
// other threads that are zombies (and so dead and traced by this program:
// an untraced thread is released as it dies). It must not wait for the
// first thread to become a zombie: when the traced thread dies first, the
// first thread exits last and waits, not a zombie yet, in the kernel for
// that thread's pid to be freed. It waits for those thread ids only, with
// WEXITED: the first thread's status stays for os/exec, no live thread's
// stop is consumed, and no other child of this program is touched.
func reapTracedThreads(pid int, done <-chan struct{}) {
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
	f, ok := proc.StatFields(b)
	return ok && len(f) > 0 && f[0] == "Z"
}
