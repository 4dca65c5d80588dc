// Package host is the execution backend without containment: it runs a
// command as a child of this program with the working directory pinned to a
// sandbox root, a scrubbed environment, a timeout, capped output and
// resource limits.
//
// # Guarantees
//
//   - The working directory is the sandbox root ([fsroot.FS.Dir]).
//   - The environment holds only the allowlisted variables (PATH and HOME by
//     default); secrets (see [backend.IsSecretEnv]) pass only when the
//     allowlist names them exactly. LOCPATH, and LC_ALL, LC_CTYPE or LANG
//     naming a locale whose character set is not UTF-8, never pass: bash
//     would read the command line in that character set, unlike the command
//     policy (see [backend.ScrubEnv]).
//   - Standard input is /dev/null unless the request connects its own.
//   - The command runs in its own session; when its main process exits, when
//     the timeout expires (default 30 s) or when the context is cancelled,
//     every process it started is killed: on Linux through a cgroup v2 where
//     one is writable, otherwise through a child-subreaper process, so
//     double-forked daemons die too; elsewhere through the process group.
//     Run returns only when they are gone.
//   - Each captured stream keeps its first 1 MiB (configurable), never
//     cutting a UTF-8 character in half, in bounded memory.
//   - Resource limits are set with ulimit in the shell that runs the command,
//     before the command: CPU seconds (default timeout + 5 s), file size
//     (default 1 GiB), address space and open files (no default).
//   - On Linux, a command that is one simple command of literal words naming
//     a program (ls -la, git status, go test ./...) runs without bash, with
//     the same result as through bash: the same program found the same way,
//     the same arguments, environment (as bash exports it, learnt once per
//     environment from bash itself), directory, session, tracking and
//     limits (set with prlimit(2) before the program's first instruction).
//     It saves bash's start-up. Anything else, and any case where one of
//     these cannot be promised, runs through bash (see direct_linux.go).
//
// # Not guaranteed
//
// This backend is NOT a security boundary. The command has the same access
// as this program: it can read and write any file this program can (absolute
// paths, "..", ~), use the network, and signal other processes of the same
// user. Its [backend.Guarantees] say so (every axis [backend.IsolationNone],
// label "host (no containment)"), and the Bash tool shows the label to the
// model. Gate it with permission rules or a policy, or use an OS-sandbox
// backend for containment. RLIMIT_NPROC is per user, not per command, so the
// Processes limit is not applied.
package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/capture"
	"github.com/paigasus/helikon/internal/proc"
)

// Label is the tier label of this backend.
const Label = "host (no containment)"

// Options configures a [Backend]. The zero value (or nil) gives the defaults.
type Options struct {
	// Timeout is the longest a command may run; a request may shorten it,
	// never lengthen it. Zero means [backend.DefaultTimeout] (30 s).
	Timeout time.Duration
	// OutputCap is the default cap per captured stream in bytes; zero means
	// [backend.DefaultOutputCap] (1 MiB). A request may lower it, not raise it.
	OutputCap int64
	// EnvAllowlist names the variables passed to commands: names, or
	// prefixes ending in "*" (see [backend.ScrubEnv]). nil means
	// [backend.DefaultEnvAllowlist] (PATH and HOME); an empty non-nil slice
	// passes nothing.
	EnvAllowlist []string
	// Limits are the resource limits; zero fields get the defaults (see
	// [backend.ResourceLimits.WithDefaults]), negative fields mean no limit.
	// A request may override them field by field.
	Limits backend.ResourceLimits
}

// Backend runs commands on the host without containment. It is safe for
// concurrent use.
type Backend struct {
	dir       string
	timeout   time.Duration
	outputCap int64
	allow     []string
	limits    backend.ResourceLimits
	features  []string

	noDirect   bool         // tests: always run commands through bash
	directRuns atomic.Int64 // commands run without bash (see direct.go)
	envs       envCache     // what bash exports, per environment
}

var (
	_ backend.Backend = (*Backend)(nil)
	_ backend.Starter = (*Backend)(nil)
)

// New returns a backend that runs commands in dir, an existing directory
// (for the file tools' root, pass the sandbox's [fsroot.FS.Dir]), as
// ossandbox.New does.
func New(dir string, opts *Options) (*Backend, error) {
	if opts == nil {
		opts = &Options{}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("host: working directory: %w", err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("host: %s is not a directory", dir)
	}
	if _, _, err := proc.Shell(); err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	b := &Backend{
		dir:       dir,
		timeout:   opts.Timeout,
		outputCap: opts.OutputCap,
		allow:     slices.Clone(opts.EnvAllowlist),
		limits:    opts.Limits,
	}
	if b.timeout <= 0 {
		b.timeout = backend.DefaultTimeout
	}
	if b.outputCap <= 0 {
		b.outputCap = backend.DefaultOutputCap
	}
	if opts.EnvAllowlist == nil {
		b.allow = slices.Clone(backend.DefaultEnvAllowlist)
	}
	tracking, why := proc.Available()
	b.features = []string{"process tracking: " + tracking.String() + " (" + why + ")", "resource limits: ulimit, or prlimit at the exec of a program run without the shell"}
	return b, nil
}

// Dir returns the working directory of commands.
func (b *Backend) Dir() string { return b.dir }

// Timeout returns the longest a command may run.
func (b *Backend) Timeout() time.Duration { return b.timeout }

// Guarantees reports no isolation on any axis.
func (b *Backend) Guarantees() backend.Guarantees {
	return backend.Guarantees{
		Filesystem: backend.IsolationNone,
		Network:    backend.IsolationNone,
		Syscalls:   backend.IsolationNone,
		Label:      Label,
		Features:   slices.Clone(b.features),
	}
}

// Run runs req. A command that could not be started is an error; a command
// that ran is a [backend.Result], whatever its exit status. When ctx is
// cancelled the command's processes are killed and Run returns the result
// with ctx's error.
func (b *Backend) Run(ctx context.Context, req *backend.Request) (*backend.Result, error) {
	return b.run(ctx, req, proc.Job{})
}

// Start starts req as a process that keeps running (see
// [backend.Starter]): tracked, limited and killed as a command of Run is,
// with its lifetime in place of the timeout.
func (b *Backend) Start(ctx context.Context, req *backend.StartRequest) (backend.Process, error) {
	p, err := proc.StartProcess(ctx, req, b.run)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	return p, nil
}

// run is Run, with j's timeout (when set) in place of the backend's and
// its start hook.
func (b *Backend) run(ctx context.Context, req *backend.Request, j proc.Job) (*backend.Result, error) {
	if req == nil {
		return nil, errors.New("host: nil request")
	}
	if req.Command != "" && len(req.Argv) > 0 {
		return nil, errors.New("host: a request sets both Command and Argv; set one")
	}
	timeout := backend.EffectiveTimeout(b.timeout, req.Timeout)
	if j.Timeout > 0 {
		timeout = j.Timeout
	}
	limits := b.limits.Merge(req.Limits).WithDefaults(timeout)
	allow := b.allow
	if len(req.Env) > 0 {
		allow = append(slices.Clone(b.allow), req.Env...)
	}
	spec := &proc.Spec{
		Dir:       b.dir,
		Env:       backend.ScrubEnv(os.Environ(), allow, req.SetEnv),
		Stdin:     req.Stdin,
		Stdout:    req.Stdout,
		Stderr:    req.Stderr,
		OutputCap: capture.Cap(b.outputCap, req.OutputCap),
		Timeout:   timeout,
		Started:   j.Started,
	}
	if len(req.Argv) == 0 && req.Command != "" {
		if res, err, ok := b.runDirect(ctx, req, spec, limits); ok {
			if err != nil && res == nil {
				return nil, fmt.Errorf("host: %w", err)
			}
			return res, err
		}
	}
	var argv []string
	var err error
	if len(req.Argv) > 0 {
		argv, err = proc.ExecArgv(req.Argv, limits)
	} else {
		argv, err = proc.ShellArgv(req.Command, limits)
	}
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	spec.Argv = argv
	res, err := proc.Run(ctx, spec)
	if err != nil && res == nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	return res, err
}
