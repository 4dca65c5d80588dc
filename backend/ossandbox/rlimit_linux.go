//go:build linux

package ossandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
)

// rlimit is one resource limit to set on the command, soft and hard alike.
type rlimit = launcher.Rlimit

// rlimits returns the limits to set on the command's first process: core 0
// and every positive limit of l, each lowered to this program's own hard
// limit (a command never gets more than this program has). procs is
// RLIMIT_NPROC, or -1 where the process cap is a pids cgroup or does not
// apply (uid 0).
func rlimits(l backend.ResourceLimits, procs int64) []rlimit {
	out := []rlimit{{Resource: unix.RLIMIT_CORE, Name: "core"}}
	add := func(res int, name string, v int64) {
		if v <= 0 {
			return
		}
		u := uint64(v)
		var cur unix.Rlimit
		if err := unix.Getrlimit(res, &cur); err == nil && cur.Max != unix.RLIM_INFINITY && u > cur.Max {
			u = cur.Max
		}
		out = append(out, rlimit{Resource: res, Name: name, Value: u})
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

// limitAtExec sets the resource limits of cmd's process, which was started
// with SysProcAttr.Ptrace from the calling thread, the confining one (see
// launcher.LimitAtExec). A child that cannot be limited is killed and
// reaped: nothing runs without its limits.
func limitAtExec(cmd *exec.Cmd, limits []rlimit) error {
	if err := launcher.LimitAtExec(cmd.Process, limits); err != nil {
		return fmt.Errorf("ossandbox: %w", err)
	}
	return nil
}
