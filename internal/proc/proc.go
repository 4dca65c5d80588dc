// Package proc runs one command as a process tree that can be killed as a
// whole, with captured, capped output and resource limits. It is the part
// of process handling that every local execution backend shares (the host
// backend and the OS-sandbox backend).
//
// # Guarantees
//
// [Run] starts the command in its own session and process group and tracks
// every process it starts with the strongest mechanism the machine offers
// (see [Tracking]):
//
//   - [TrackCgroup]: a fresh cgroup v2 per command, entered atomically at
//     fork (clone3 CLONE_INTO_CGROUP) and killed with cgroup.kill. Nothing
//     the command starts can leave it: double-forked daemons, processes that
//     call setsid and processes that move to another process group are all
//     killed. Needs a writable cgroup v2 hierarchy and Linux 5.14.
//   - [TrackReaper]: a small reaper process (this program re-executed) that
//     is a child subreaper (PR_SET_CHILD_SUBREAPER): orphans of the command
//     are re-parented to it instead of init, and it kills every descendant
//     when the command ends. A descendant can escape only by being re-parented
//     past the reaper, which Linux does not allow while the reaper lives.
//   - [TrackGroup]: the process group and session of the command. A process
//     that calls setsid and double-forks escapes it.
//   - [TrackPidNamespace] (Linux, chosen explicitly, never by [TrackAuto]):
//     the caller starts the command as the first process of a new pid
//     namespace (see [Starter]). When that process exits the kernel has
//     already killed and released every other process of the namespace, so
//     nothing is scanned or waited for: the cheapest mode, and as strong as
//     cgroup tracking.
//
// When the command's main process exits, when the timeout expires or when
// the context is cancelled, everything left of the tree is killed with
// SIGKILL (no grace period: a timed-out command gets no chance to keep
// running), and Run waits until the tree is gone before it returns. Output
// pipes held open by a process that somehow survives are closed after a
// grace period of [PipeGrace], so Run returns promptly even then.
//
// Standard input is /dev/null unless a reader is given. Captured output is
// kept in [backend.CappedBuffer]s: the first OutputCap bytes of each stream,
// memory bounded whatever the command writes; output beyond the cap is read
// and discarded, so a command that writes a lot keeps running to its normal
// end (it is not stopped with SIGPIPE).
//
// # Resource limits
//
// Go cannot run code in the child between fork and exec, and setrlimit in
// the parent would limit the whole program, so limits are applied in one of
// two ways:
//
//   - by a shell prologue ([ShellArgv], [ExecArgv]): the command is started
//     through bash (or sh) whose first action is ulimit, and the limits then
//     hold for the shell and everything it starts;
//   - for a program started directly ([Spec].Limits, Linux): the child
//     calls ptrace(PTRACE_TRACEME) just before its execve, so the kernel
//     stops it with SIGTRAP once the new image is in place and before its
//     first instruction; Run sets the limits with prlimit(2) and detaches it
//     at once (PTRACE_O_EXITKILL kills it should this program die in
//     between). The program is traced for those few system calls only, so
//     it can use ptrace itself. Where ptrace is refused (a seccomp filter,
//     Yama's ptrace_scope 3, this program being traced), Run fails with
//     [ErrNoDirectStart] and the caller uses the prologue; the host backend
//     does so, and runs set-ID programs (which a traced exec would not give
//     their privileges) through the shell too.
//
// ulimit counts in units (seconds; KiB for bash's file size and address
// space; 512-byte blocks for sh's file size), so byte limits are rounded down
// to the unit; a direct start rounds as bash does. A limit above this
// program's own hard limit is lowered to it.
//
// # Waiting
//
// On Linux, Run waits for the command's exit (its pidfd), its output, the
// timeout and the context with one poll(2) in the calling goroutine, unless
// the command is started through a reaper or by a [Starter], or reads its
// input from a reader that is not a file: then it waits with goroutines.
// The guarantees are the same either way.
//
// # Not guaranteed
//
// Processes are not contained: they have the access of this program (see the
// backends for containment). RLIMIT_NPROC counts every process of the user,
// not of the command, so [backend.ResourceLimits].Processes is not applied.
// Without cgroups, a command can fork faster than the reaper kills; the
// reaper keeps killing for up to [KillTimeout].
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/paigasus/helikon/backend"
)

// Tracking is how the processes of a command are found when it must be
// killed.
type Tracking int

const (
	// TrackAuto picks the strongest tracking available: cgroup, then
	// reaper (Linux), then group.
	TrackAuto Tracking = iota
	// TrackCgroup puts the command in its own cgroup v2.
	TrackCgroup
	// TrackReaper runs the command under a subreaper process.
	TrackReaper
	// TrackGroup relies on the command's session and process group.
	TrackGroup
	// TrackPidNamespace relies on the command's main process being the
	// init of its own pid namespace, which the caller arranges (Linux
	// only): the kernel kills the whole namespace when it exits, and
	// killing it kills the namespace.
	TrackPidNamespace
)

// String returns auto, cgroup, reaper or group.
func (t Tracking) String() string {
	switch t {
	case TrackAuto:
		return "auto"
	case TrackCgroup:
		return "cgroup"
	case TrackReaper:
		return "reaper"
	case TrackGroup:
		return "group"
	case TrackPidNamespace:
		return "pid-namespace"
	}
	return fmt.Sprintf("Tracking(%d)", int(t))
}

const (
	// PipeGrace is how long Run waits for output pipes to reach end of
	// file after the process tree was killed before closing them.
	PipeGrace = 500 * time.Millisecond
	// KillTimeout bounds how long Run waits for a killed tree to be gone.
	KillTimeout = 3 * time.Second
)

// ErrSurvivors is wrapped by the error Run returns when processes of the
// command were still alive [KillTimeout] after they were killed.
var ErrSurvivors = errors.New("processes of the command survived it")

// Spec is one command to run.
type Spec struct {
	// Argv is the program and its arguments; Argv[0] is looked up in
	// this program's PATH when it holds no slash. Use [ShellArgv] or
	// [ExecArgv] to build it with resource limits.
	Argv []string
	// Dir is the working directory.
	Dir string
	// Env is the complete environment (see [backend.ScrubEnv]).
	Env []string
	// Stdin is the command's standard input; nil means /dev/null.
	Stdin io.Reader
	// Stdout and Stderr, when set, receive the output as it is written
	// (an *os.File is passed to the command directly); nil captures the
	// stream into the Result, capped at OutputCap.
	Stdout, Stderr io.Writer
	// OutputCap is the cap in bytes per captured stream; zero means
	// [backend.DefaultOutputCap].
	OutputCap int64
	// Timeout is the wall-clock limit; zero means [backend.DefaultTimeout].
	Timeout time.Duration
	// Tracking chooses how the tree is tracked; zero is [TrackAuto].
	// An explicit choice that is unavailable fails Run with an error
	// wrapping [backend.ErrUnavailable].
	Tracking Tracking
	// Starter, when set, starts the command instead of cmd.Start (see
	// [Starter]); the OS-sandbox backend's starts it from a thread it
	// confined.
	Starter Starter
	// Path, when set, is the file executed, and Argv[0] is passed to the
	// program unchanged as the name it was invoked by (as a shell does).
	// It cannot be combined with [TrackReaper] (Run fails with an error
	// wrapping [ErrNoDirectStart]).
	Path string
	// Limits, when set, are applied to the program without a shell: Run
	// starts it stopped at its exec (Linux, ptrace(PTRACE_TRACEME)), sets
	// the limits with prlimit(2), soft and hard, in the units and with the
	// rounding of bash's ulimit (see [Prologue]), and only then lets it
	// run its first instruction; it is detached at once, so the program
	// can use ptrace itself. AddressSpace must be unset (≤ 0): exec itself
	// is subject to it. Where this is not possible (another system,
	// [TrackReaper], Starter set, ptrace refused) Run fails with an error
	// wrapping [ErrNoDirectStart] and nothing ran: run the command through
	// [ShellArgv] instead.
	Limits *backend.ResourceLimits
	// Spawn, when set, starts the command instead of this program (the
	// OS sandbox's long-lived launcher does): it gets the program to
	// execute (Path, or Argv[0] resolved in this program's PATH) and the
	// command's standard input, output and error (this program closes
	// its own copies once Spawn returns), and returns without waiting for
	// the command to start: [Remote].Wait reports whether it did. Where
	// nothing was started Run fails: with a *[StartError] when the
	// program could not be executed, with an error wrapping
	// [backend.ErrUnavailable] when it could not be confined. The spawner
	// tracks the command (Tracking is ignored); Starter and Limits must
	// be unset.
	Spawn func(path string, stdio [3]*os.File) (Remote, error)
	// Started, when set, is called once the command runs, before Run
	// waits for it, with the pid of its main process as this program
	// sees it (the leader of its process group), or 0 when Spawn started
	// it and its pid is not known here. A command whose standard input
	// is a terminal (an *os.File) gets it as its controlling terminal.
	Started func(pid int)
}

// Starter starts a command that [Run] has prepared, in place of
// cmd.Start: its program, arguments, directory, environment, standard
// streams and SysProcAttr (session, tracking) are set, and Run tracks,
// waits for and kills whatever Start started. A backend implements it to
// start the command its own way (the OS sandbox from a thread it confined
// first, or through its launcher) while Run keeps the process handling:
// the command flows to the Starter and only an error flows back; what the
// start leaves behind stays with the Starter.
type Starter interface {
	// Start starts cmd, through cmd.Start or by changing cmd and then
	// calling cmd.Start, or fails with nothing started.
	Start(cmd *exec.Cmd) error
}

// ErrNoDirectStart is wrapped by the error Run returns when a [Spec] with
// Limits or Path cannot be started directly here. Nothing ran.
var ErrNoDirectStart = errors.New("the program cannot be started directly with its limits here")

// StartError is the error Run returns when the program could not be
// started (it was not found, could not be executed, or a direct start
// failed). Nothing ran.
type StartError struct {
	Program string
	Err     error
}

// Error names the program that did not start, and why.
func (e *StartError) Error() string { return "proc: start " + e.Program + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *StartError) Unwrap() error { return e.Err }

// Run runs s and returns its result. A non-zero exit, a timeout and
// truncated output are results; errors are reserved for a command that could
// not be started (wrapping the OS error) and for a tree that could not be
// killed ([ErrSurvivors]). When ctx is cancelled the tree is killed and Run
// returns the result together with ctx's error.
func Run(ctx context.Context, s *Spec) (*backend.Result, error) {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return nil, errors.New("proc: empty argument vector")
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = backend.DefaultTimeout
	}
	outCap := s.OutputCap
	if outCap <= 0 {
		outCap = backend.DefaultOutputCap
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	if s.Spawn != nil {
		return runRemote(ctx, s, timeout, outCap)
	}
	if err := checkDirect(s); err != nil {
		return nil, err
	}
	argv, err := resolveArgv(s)
	if err != nil {
		return nil, err
	}
	tr, err := newTracker(s.Tracking)
	if err != nil {
		return nil, err
	}
	defer tr.close()
	cmd, err := newCommand(s, tr, argv)
	if err != nil {
		return nil, err
	}
	if loopSupported(s, tr) {
		return runLoop(ctx, s, tr, cmd, timeout, outCap)
	}
	return runWaiting(ctx, s, tr, cmd, timeout, outCap)
}

// checkDirect refuses, before anything is set up, a direct start (Limits
// or Path) that s's other fields rule out.
func checkDirect(s *Spec) error {
	if s.Limits != nil && s.Limits.AddressSpace > 0 {
		return fmt.Errorf("proc: an address-space limit cannot be applied after exec: %w", ErrNoDirectStart)
	}
	if s.Limits != nil && s.Starter != nil || (s.Limits != nil || s.Path != "") && s.Tracking == TrackReaper {
		return fmt.Errorf("proc: a direct start needs this program to start the command itself: %w", ErrNoDirectStart)
	}
	return nil
}

// resolveArgv returns s.Argv with its program looked up in this program's
// PATH, in every tracking mode alike (the reaper would otherwise search the
// command's PATH), or nil when s.Path names the program.
func resolveArgv(s *Spec) ([]string, error) {
	if s.Path != "" {
		return nil, nil // the command is built from Path and Argv
	}
	if strings.Contains(s.Argv[0], "/") {
		return s.Argv, nil
	}
	p, err := ownPath(s.Argv[0])
	if err != nil {
		return nil, err
	}
	return append([]string{p}, s.Argv[1:]...), nil
}

// newCommand builds the command of s, whose resolved argv is argv, as tr
// runs it: the program (through the reaper, or Path directly), the
// directory, the environment, a session of its own and standard input.
// The output is left to the caller.
func newCommand(s *Spec, tr *tracker, argv []string) (*exec.Cmd, error) {
	var cmd *exec.Cmd
	if s.Path != "" || s.Limits != nil {
		if tr.mode == TrackReaper {
			// TrackAuto chose the reaper (cgroups are unusable here),
			// which would be the program's parent.
			return nil, fmt.Errorf("proc: a direct start is not possible with reaper tracking: %w", ErrNoDirectStart)
		}
	}
	if s.Path != "" {
		cmd = &exec.Cmd{Path: s.Path, Args: s.Argv}
	} else {
		var err error
		if cmd, err = tr.command(argv); err != nil {
			return nil, err
		}
	}
	cmd.Dir = s.Dir
	cmd.Env = s.Env
	if cmd.Env == nil {
		cmd.Env = []string{} // never inherit this program's environment by accident
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setSession(cmd.SysProcAttr)
	setTerminal(cmd.SysProcAttr, s.Stdin)
	if s.Stdin == nil {
		// One /dev/null for every command, rather than one opened and
		// closed by os/exec for each.
		if f, err := devNull(); err == nil {
			cmd.Stdin = f
		}
	} else {
		cmd.Stdin = s.Stdin
		if _, isFile := s.Stdin.(*os.File); !isFile {
			// os/exec copies from a non-file reader in a goroutine that
			// may block on the reader forever; bound the wait for it.
			cmd.WaitDelay = PipeGrace
		}
	}
	return cmd, nil
}

// ownPath returns name when it holds a slash, and otherwise the program
// it names in this program's PATH.
func ownPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("proc: %w", err)
	}
	return p, nil
}

// runWaiting is Run where runLoop cannot run s: output read by a
// goroutine per stream, the exit waited for by the calling goroutine, the
// timeout and the context watched by another that kills the tree.
func runWaiting(ctx context.Context, s *Spec, tr *tracker, cmd *exec.Cmd, timeout time.Duration, outCap int64) (*backend.Result, error) {
	var (
		out       outputs
		writeEnds []*os.File // the pipes' ends the command writes to
	)
	closeWriteEnds := func() {
		for _, f := range writeEnds {
			f.Close()
		}
	}
	for i, w := range []io.Writer{s.Stdout, s.Stderr} {
		f, err := out.add(w, outCap)
		if err != nil {
			closeWriteEnds()
			out.abandon()
			return nil, fmt.Errorf("proc: output pipe: %w", err)
		}
		if f != w {
			writeEnds = append(writeEnds, f)
		}
		if i == 0 {
			cmd.Stdout = f
		} else {
			cmd.Stderr = f
		}
	}
	begin, err := start(s, tr, cmd)
	closeWriteEnds()
	if err != nil {
		out.abandon()
		if err == errRetry {
			return Run(ctx, s)
		}
		return nil, err
	}
	tr.started(cmd.Process.Pid)
	if s.Started != nil {
		s.Started(cmd.Process.Pid)
	}

	w := watch(ctx, timeout, tr.kill)
	tr.waitExit(cmd)
	timedOut, ctxErr := w.stop()
	// The main process is a zombie now: its process group cannot be
	// reused until it is reaped, so killing the rest of the tree by group
	// is safe. Background children die with it.
	tr.kill()
	waitErr := tr.reap(cmd)
	goneErr := tr.waitGone(KillTimeout)
	out.wait()
	return result(tr, cmd, waitErr, goneErr, ctxErr, timedOut, out.bufs[0], out.bufs[1], begin)
}

// watchdog kills a command when its timeout expires or its context is
// done, until it is stopped.
type watchdog struct {
	state    atomic.Int32 // watching, then stopped or fired, whichever came first
	halt     chan struct{}
	done     chan struct{} // closed once a kill that fired has returned
	timedOut bool
	ctxErr   error
}

const (
	watching int32 = iota
	stopped
	fired
)

// watch starts a watchdog that calls kill once, when timeout has passed
// or ctx is done, whichever comes first.
func watch(ctx context.Context, timeout time.Duration, kill func()) *watchdog {
	w := &watchdog{halt: make(chan struct{}), done: make(chan struct{})}
	go func() {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		var timedOut bool
		var ctxErr error
		select {
		case <-w.halt:
			return
		case <-timer.C:
			timedOut = true
		case <-ctx.Done():
			ctxErr = ctx.Err()
		}
		if !w.state.CompareAndSwap(watching, fired) {
			return // stopped meanwhile: the command is gone
		}
		w.timedOut, w.ctxErr = timedOut, ctxErr
		kill()
		close(w.done)
	}()
	return w
}

// stop stops the watchdog and reports whether it fired for the timeout or
// for the context (its error); a kill it began has returned by then. A
// watchdog that has not fired is not waited for: the command's way back
// does not depend on another goroutine being scheduled.
func (w *watchdog) stop() (timedOut bool, ctxErr error) {
	if w.state.CompareAndSwap(watching, stopped) {
		close(w.halt)
		return false, nil
	}
	<-w.done
	return w.timedOut, w.ctxErr
}

// result builds the Result of a command that ran, and Run's error.
func result(tr *tracker, cmd *exec.Cmd, waitErr, goneErr, ctxErr error, timedOut bool, outBuf, errBuf *backend.CappedBuffer, begin time.Time) (*backend.Result, error) {
	res := &backend.Result{TimedOut: timedOut, Duration: time.Since(begin)}
	if tr.status != nil {
		res.ExitCode, res.Signal = tr.status.code, tr.status.signal
	} else if st := cmd.ProcessState; st != nil {
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = int(ws.Signal())
		} else if code := st.ExitCode(); code >= 0 {
			res.ExitCode = &code
		}
	} else if waitErr != nil {
		return nil, fmt.Errorf("proc: wait: %w", waitErr)
	}
	markKilled(res, timedOut || ctxErr != nil)
	if outBuf != nil {
		res.Stdout = outBuf.Bytes()
		res.Truncated = outBuf.Truncated()
	}
	if errBuf != nil {
		res.Stderr = errBuf.Bytes()
		res.Truncated = res.Truncated || errBuf.Truncated()
	}
	if goneErr != nil {
		return res, goneErr
	}
	return res, ctxErr
}

// markKilled makes res the result of a command that was killed, when it
// was, whatever the command reported on its way out.
func markKilled(res *backend.Result, killed bool) {
	if !killed {
		return
	}
	res.ExitCode = nil
	if res.Signal == 0 {
		res.Signal = int(syscall.SIGKILL)
	}
}

// start lets the tracker set up cmd and starts it as s asks, and returns
// the time of the start. When it fails nothing runs, and the error is
// errRetry where Run runs s again with the next tracking (see startFailed),
// a *StartError where the program could not be started, or the tracker's.
func start(s *Spec, tr *tracker, cmd *exec.Cmd) (time.Time, error) {
	if err := tr.prepare(cmd); err != nil {
		return time.Time{}, err
	}
	begin := time.Now()
	var err error
	switch {
	case s.Limits != nil:
		err = startLimited(cmd, rlimits(*s.Limits, true))
	case s.Starter != nil:
		err = s.Starter.Start(cmd)
	default:
		err = cmd.Start()
	}
	if err == nil {
		return begin, nil
	}
	if startFailed(s, tr, err) != nil {
		return begin, errRetry
	}
	return begin, &StartError{Program: s.Argv[0], Err: err}
}

// startFailed returns errRetry when the start failed because of the
// tracking, which is then disabled: nothing ran, and Run runs s again
// with the next tracking.
func startFailed(s *Spec, tr *tracker, err error) error {
	if s.Limits != nil {
		// Whatever failed (ptrace, the exec, the clone into the cgroup),
		// nothing ran; the caller runs the command through the shell,
		// which tells the user why.
		return nil
	}
	if s.Tracking == TrackAuto && tr.cannotStart(err) {
		// The strongest tracking is unusable here (clone3 filtered by
		// seccomp, say).
		return errRetry
	}
	return nil
}

var errRetry = errors.New("retry")

// devNull is /dev/null opened for reading, shared by every command.
var devNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

// readBufs holds the 64 KiB buffers output is read with.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// exitStatus is the command's status as reported by a reaper.
type exitStatus struct {
	code   *int
	signal int
}
