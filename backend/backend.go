// Package backend is the execution-backend contract: how the Bash tool and
// the helikon CLI run a command without knowing where or under what
// containment it runs.
//
// A [Backend] runs a [Request] (a shell command or an argument vector, a
// timeout, an output cap, an environment allowlist, resource limits) and
// reports, through [Guarantees], what it contains on each of three axes:
// filesystem, network and syscalls. Implementations live in the packages
// below this one: backend/host (no containment), backend/ossandbox (Landlock
// and seccomp on Linux, Seatbelt on macOS) and backend/microvm (a fresh
// Firecracker microVM per command, forked by a forkd controller).
//
// Containment, approval and resource caps are separate axes: a backend
// contains and caps; whether a command may run at all is the permission
// pipeline's business (package helikon).
//
// What the contract guarantees, for every implementation: Run never runs a
// command with weaker containment than Guarantees reports (it fails instead);
// cancelling ctx kills everything the command started; a command that exits
// non-zero, times out or overflows its output cap is a [Result], not an
// error. Implementations add their own guarantees in their package docs.
//
// What it does not say: Guarantees is a tier per axis, not a proof that every
// path on that axis is closed (each backend lists what it does not confine);
// a backend does not decide whether a command should run, and does not look
// at what the command says or prints.
package backend

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Isolation is the strength of containment on one axis.
type Isolation int

const (
	// IsolationNone: no enforcement; the command has the same access as the
	// calling process on this axis.
	IsolationNone Isolation = iota
	// IsolationOSKernel: enforced by an OS kernel mechanism (Landlock,
	// seccomp, Seatbelt). A violating operation fails with an OS error.
	IsolationOSKernel
	// IsolationVirtualized: enforced by a virtual-machine boundary.
	IsolationVirtualized
	// IsolationProxied: network egress filtered by a policy-enforcing proxy
	// that the command cannot go around.
	IsolationProxied
)

var isolationNames = [...]string{"none", "os_kernel", "virtualized", "proxied"}

// String returns none, os_kernel, virtualized or proxied.
func (i Isolation) String() string {
	if i >= 0 && int(i) < len(isolationNames) {
		return isolationNames[i]
	}
	return fmt.Sprintf("Isolation(%d)", int(i))
}

// MarshalText encodes i as its String form.
func (i Isolation) MarshalText() ([]byte, error) { return []byte(i.String()), nil }

// UnmarshalText decodes the String form.
func (i *Isolation) UnmarshalText(b []byte) error {
	for n, name := range isolationNames {
		if string(b) == name {
			*i = Isolation(n)
			return nil
		}
	}
	return fmt.Errorf("unknown isolation %q: want none, os_kernel, virtualized or proxied", b)
}

// Guarantees is what a backend enforces on each axis.
type Guarantees struct {
	Filesystem Isolation `json:"filesystem"` // what confines file access
	Network    Isolation `json:"network"`    // what confines network access
	Syscalls   Isolation `json:"syscalls"`   // what filters system calls
	// Label is a short human-readable name of the tier, shown to the model
	// in the Bash tool's description, e.g. "host (no containment)".
	Label string `json:"label"`
	// Features lists the mechanisms active on this machine, in words, for
	// operators (e.g. "landlock abi 6: truncate, ioctl-dev, scope-signal").
	Features []string `json:"features,omitempty"`
}

// String returns the guarantees as compact JSON.
func (g Guarantees) String() string {
	b, _ := json.Marshal(g)
	return string(b)
}

// ResourceLimits caps what one command may consume. A zero field means the
// backend's default (see each backend's documentation); a negative field means
// no limit where the backend allows that.
type ResourceLimits struct {
	CPUSeconds   int64 // RLIMIT_CPU
	FileSize     int64 // RLIMIT_FSIZE, bytes
	AddressSpace int64 // RLIMIT_AS, bytes
	OpenFiles    int64 // RLIMIT_NOFILE
	Processes    int64 // RLIMIT_NPROC, where the backend can apply it per command
}

// Request is one command to run. Exactly one of Command and Argv is set.
type Request struct {
	// Command is a shell command line, run with bash -c (sh -c where bash
	// is missing).
	Command string
	// Argv is a program and its arguments, run directly without a shell.
	Argv []string
	// Timeout shortens the backend's timeout; zero means the backend's.
	// A backend never lets it exceed its own maximum.
	Timeout time.Duration
	// OutputCap is the cap in bytes per captured stream; zero means the
	// backend's own. A backend never lets it exceed its own cap.
	OutputCap int64
	// Env names extra environment variables to pass through in addition to
	// the backend's allowlist.
	Env []string
	// SetEnv sets variables in the command's environment (NAME=value),
	// after the allowlist is applied.
	SetEnv []string
	// Limits overrides the backend's resource limits field by field; nil
	// keeps the backend's.
	Limits *ResourceLimits
	// Stdin, Stdout and Stderr, when set, are connected to the command
	// instead of closed stdin and captured output (the CLI's exec command
	// passes its own stdio). Captured output is then empty.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Result is the outcome of a command that ran. A non-zero exit, a timeout or
// truncated output is a result, not an error.
type Result struct {
	// Stdout and Stderr are the captured output, each at most the output
	// cap long; empty when the request supplied its own writers.
	Stdout []byte
	Stderr []byte
	// ExitCode is nil when the process did not exit normally (killed by a
	// signal, by the timeout or by cancellation).
	ExitCode *int
	// Signal is the signal that killed the process, or 0.
	Signal int
	// TimedOut is true when the backend's timeout stopped the command.
	TimedOut bool
	// Truncated is true when a captured stream reached the output cap.
	Truncated bool
	// Duration is the wall-clock time from start until the command and
	// its output were collected.
	Duration time.Duration
}

// Backend runs commands. Implementations must be safe for concurrent use,
// must honour cancellation of ctx by killing everything the command started,
// and must never run a command with weaker containment than Guarantees
// reports: when they cannot enforce it, Run fails.
type Backend interface {
	// Run runs req and waits for it. An error means the command could not
	// be run or collected as asked (invalid request, containment
	// unavailable, start failure, cancellation of ctx, which may come with
	// the partial result), never that the command itself failed.
	Run(ctx context.Context, req *Request) (*Result, error)
	// Guarantees reports the containment every Run of this backend gets.
	Guarantees() Guarantees
}

// ErrUnavailable is wrapped by errors returned when a backend cannot be built
// or cannot run on this machine (fail closed).
var ErrUnavailable = fmt.Errorf("backend unavailable")

// WorkingDir is implemented by backends that run commands in a directory of
// this machine (host, ossandbox). The Bash tool resolves the relative paths
// a command writes to against it when it reports the command's targets.
type WorkingDir interface {
	// Dir is the absolute directory commands start in.
	Dir() string
}

// TimeLimited is implemented by backends that kill every command after a
// maximum time, which a [Request] can shorten but never lengthen. The Bash
// tool tells the model the limit.
type TimeLimited interface {
	// Timeout is the longest a command may run.
	Timeout() time.Duration
}
