package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Starter is implemented by backends that can start a command and hand back
// the running [Process] instead of waiting for it: a dev server, a test
// watcher, a REPL, a build whose first errors are wanted before it ends.
// The process gets the same containment, environment scrubbing and resource
// limits as a command given to Run, for its whole life.
//
// A backend that does not implement Starter cannot run processes; callers
// report that with [ErrNoProcesses] (see [Start]) and never emulate a
// process with Run.
type Starter interface {
	// Start starts req and returns once the process runs, or fails with
	// nothing left running. Cancelling ctx, or its end, kills the process
	// and everything it started, as for Run: pass a context that lives as
	// long as the process may (a session's, not a tool call's).
	Start(ctx context.Context, req *StartRequest) (Process, error)
}

// ErrNoProcesses is wrapped by the error [Start] returns for a backend that
// does not implement [Starter]: run the command to its end with Run instead,
// or choose a backend that runs processes (host, ossandbox).
var ErrNoProcesses = errors.New("this backend cannot start processes that keep running")

// ErrNoTTY is wrapped by the error of [Process].Resize on a process started
// without a terminal.
var ErrNoTTY = errors.New("the process has no terminal: start it with StartRequest.TTY set")

// ErrUnsupported is wrapped by the error of a [Process] method that the
// backend cannot carry out for this process (a signal other than a kill
// through a launcher that only kills, say). Nothing was done.
var ErrUnsupported = errors.ErrUnsupported

// Start starts req on b when b is a [Starter], and otherwise returns an error
// wrapping [ErrNoProcesses].
func Start(ctx context.Context, b Backend, req *StartRequest) (Process, error) {
	s, ok := b.(Starter)
	if !ok {
		return nil, fmt.Errorf("%T: %w", b, ErrNoProcesses)
	}
	return s.Start(ctx, req)
}

// Lifetime bounds.
const (
	// DefaultLifetime is how long a started process may run when the
	// request does not say.
	DefaultLifetime = time.Hour
	// MaxLifetime is the longest any started process may run: a process
	// is for the work of a session, not a service.
	MaxLifetime = 24 * time.Hour
	// DefaultRingSize is the output a process keeps for its readers when
	// the request does not say: what a reader that fell behind can still
	// get.
	DefaultRingSize = 1 << 20
)

// StartRequest is a command to start as a [Process]. Command or Argv, Env,
// SetEnv and Limits mean what they mean for Run. Timeout, OutputCap and the
// standard streams of the embedded Request are ignored: Lifetime, RingSize
// and the process's own streams take their place.
type StartRequest struct {
	Request
	// Lifetime is the wall-clock time after which the process and
	// everything it started are killed. Zero means [DefaultLifetime]; it
	// never exceeds [MaxLifetime]. The CPU-time limit's default follows it
	// as it follows Run's timeout.
	Lifetime time.Duration
	// RingSize is how many of the most recent output bytes are kept for
	// readers; zero means [DefaultRingSize].
	RingSize int64
	// TTY, when set, runs the process on a new pseudo-terminal of this
	// size: its standard input, output and error are the terminal, and
	// its output is what the terminal shows (echo included).
	TTY *TermSize
}

// EffectiveLifetime returns the lifetime a process runs with: requested
// when positive, else [DefaultLifetime], never more than [MaxLifetime].
func EffectiveLifetime(requested time.Duration) time.Duration {
	if requested <= 0 {
		return DefaultLifetime
	}
	return min(requested, MaxLifetime)
}

// TermSize is the size of a terminal in characters.
type TermSize struct {
	Rows, Cols uint16
}

// Process is a command that runs while its caller goes on: its output
// arrives in a bounded [Ring] as it is written (standard output and error
// merged in the order the process wrote them, as a terminal shows them), it
// reads what is written to its input, and it can be signalled and waited
// for. Implementations are safe for concurrent use.
type Process interface {
	// Output is the process's output as it comes. It is closed, and so
	// ends, once the process and everything it started are gone.
	Output() *Ring
	// Input is the process's standard input (the terminal, with TTY).
	// Closing it sends end of file (without TTY).
	Input() io.WriteCloser
	// Signal sends sig to the process's process group. os.Kill kills the
	// process and everything it started, whatever their group. After the
	// process ended it returns an error wrapping [os.ErrProcessDone].
	Signal(sig os.Signal) error
	// Resize sets the size of the process's terminal, or returns an error
	// wrapping [ErrNoTTY].
	Resize(size TermSize) error
	// Done is closed once the process and everything it started are gone
	// and Wait no longer blocks.
	Done() <-chan struct{}
	// Wait waits for the end of the process (or of ctx) and returns how
	// it ended: the exit code or signal, TimedOut when its lifetime ran
	// out, Duration. Stdout and Stderr are empty: the output is in the
	// Ring. An error means the process's end could not be collected, or
	// ctx ended first.
	Wait(ctx context.Context) (*Result, error)
}
