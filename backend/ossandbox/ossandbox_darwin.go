//go:build darwin

package ossandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/capture"
	"github.com/paigasus/helikon/internal/proc"
	"github.com/paigasus/helikon/internal/readonlypaths"
)

// sandboxExec is Apple's Seatbelt front end, deprecated but shipped on every
// macOS release.
const sandboxExec = "/usr/bin/sandbox-exec"

// Backend runs commands confined by Landlock and seccomp (Linux) or
// Seatbelt (macOS). It is safe for concurrent use.
type Backend struct {
	root     string
	opts     Options
	readOnly []string // Options.ReadOnlyPaths, absolute
	// readOnlyRel are the same relative to the root.
	readOnlyRel []string
	shell       string
	shellKind   shellKind
	g           backend.Guarantees
	log         *slog.Logger
}

var _ backend.Backend = (*Backend)(nil)

// New returns a backend whose commands may write beneath root only. It
// fails with an error wrapping [backend.ErrUnavailable] when sandbox-exec
// is missing or a probe command cannot run under the profile.
func New(root string, opts *Options) (*Backend, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	croot, err := cleanRoot(root)
	if err != nil {
		return nil, err
	}
	if o.Egress != nil {
		if o.AllowNetwork {
			return nil, errEgressAndNetwork
		}
		return nil, fmt.Errorf("%w: os sandbox: network through the egress proxy needs a network namespace per session, which Seatbelt cannot give; it is available on Linux", backend.ErrUnavailable)
	}
	if o.Loopback {
		return nil, fmt.Errorf("%w: os sandbox: a loopback of the commands' own needs a network namespace per session, which Seatbelt cannot give; it is available on Linux", backend.ErrUnavailable)
	}
	if _, err := os.Stat(sandboxExec); err != nil {
		return nil, fmt.Errorf("%w: os sandbox: %s: %w", backend.ErrUnavailable, sandboxExec, err)
	}
	b := &Backend{root: croot, opts: o, log: o.Logger}
	rel, err := readonlypaths.Resolve(croot, o.ReadOnlyPaths)
	if err != nil {
		return nil, fmt.Errorf("ossandbox: %w", err)
	}
	for _, p := range rel {
		b.readOnly = append(b.readOnly, filepath.Join(croot, filepath.FromSlash(p)))
	}
	b.readOnlyRel = rel
	if err := b.ensureReadOnly(); err != nil {
		return nil, err
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	sh, isBash, err := proc.Shell()
	if err != nil {
		return nil, fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
	}
	b.shell, b.shellKind = sh, kindSh
	if isBash {
		b.shellKind = kindBash
	}
	tmp, err := os.MkdirTemp("", "helikon-os-probe-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	argv := seatbeltArgv(sandboxExec, o.AllowNetwork, croot, realPath(tmp), b.readOnly, []string{"/usr/bin/true"})
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: os sandbox: seatbelt probe failed: %v: %s", backend.ErrUnavailable, err, out)
	}
	b.g = backend.Guarantees{
		Filesystem: backend.IsolationOSKernel,
		Network:    backend.IsolationOSKernel,
		Syscalls:   backend.IsolationNone,
		Label:      SeatbeltLabel,
		Features: []string{
			"seatbelt: writes only beneath the root and the temporary directory; reads unrestricted",
			"seatbelt: network (including Unix sockets) denied",
		},
	}
	if o.AllowNetwork {
		b.g.Network = backend.IsolationNone
		b.g.Features[1] = "seatbelt: network allowed"
	}
	if len(rel) > 0 {
		b.g.Features = append(b.g.Features, "seatbelt: writes denied beneath the read-only paths "+strings.Join(rel, ", ")+" (created empty where missing)")
	}
	return b, nil
}

// ensureReadOnly creates the read-only paths that are missing, before a
// command, so that the profile's deny rules cover a directory rather than
// leave a name a command could take; one that is a symbolic link is
// refused (Seatbelt matches the path a link resolves to).
func (b *Backend) ensureReadOnly() error {
	if err := readonlypaths.Ensure(b.root, b.readOnlyRel); err != nil {
		return fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
	}
	return nil
}

// Guarantees reports what the backend enforces.
func (b *Backend) Guarantees() backend.Guarantees { return b.g }

// Dir returns the root: the directory commands start in and may write
// beneath (see [backend.WorkingDir]).
func (b *Backend) Dir() string { return b.root }

// Timeout returns the longest a command may run (see [backend.TimeLimited]).
func (b *Backend) Timeout() time.Duration {
	if b.opts.Timeout > 0 {
		return b.opts.Timeout
	}
	return backend.DefaultTimeout
}

// Run runs req under sandbox-exec.
func (b *Backend) Run(ctx context.Context, req *backend.Request) (*backend.Result, error) {
	if (req.Command == "") == (len(req.Argv) == 0) {
		return nil, errors.New("ossandbox: exactly one of Command and Argv must be set")
	}
	if err := b.ensureReadOnly(); err != nil {
		return nil, err
	}
	timeout := backend.EffectiveTimeout(b.opts.Timeout, req.Timeout)
	limits := tighten(b.opts.Limits.WithDefaults(timeout), req.Limits)
	outCap := capture.Cap(b.opts.OutputCap, req.OutputCap) // a request may lower it, not raise it
	tmp, err := os.MkdirTemp("", "helikon-os-")
	if err != nil {
		return nil, fmt.Errorf("ossandbox: create the command's temporary directory: %w", err)
	}
	defer os.RemoveAll(tmp)
	tmp = realPath(tmp)
	pro := prologue(b.shellKind, limits, limits.Processes, func(byte) int64 { return -1 })
	var inner []string
	if req.Command != "" {
		inner = []string{b.shell, "-c", pro + req.Command}
	} else {
		inner = append([]string{b.shell, "-c", pro + `exec "$@"`, "helikon"}, req.Argv...)
	}
	allow := b.opts.EnvAllowlist
	if allow == nil {
		allow = backend.DefaultEnvAllowlist
	}
	allow = append(allow[:len(allow):len(allow)], req.Env...)
	set := append([]string{"HOME=" + tmp, "TMPDIR=" + tmp}, req.SetEnv...)
	return proc.Run(ctx, &proc.Spec{
		Argv:      seatbeltArgv(sandboxExec, b.opts.AllowNetwork, b.root, tmp, b.readOnly, inner),
		Dir:       b.root,
		Env:       backend.ScrubEnv(os.Environ(), allow, set),
		Stdin:     req.Stdin,
		Stdout:    req.Stdout,
		Stderr:    req.Stderr,
		OutputCap: outCap,
		Timeout:   timeout,
	})
}

// realPath resolves symbolic links (/var is a link to /private/var on
// macOS, and Seatbelt matches resolved paths).
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// Probe reports what this machine supports.
func Probe() Support {
	s := Support{OS: runtime.GOOS, Root: os.Geteuid() == 0,
		Landlock: "linux only", Seccomp: "linux only", UserNamespaces: "linux only",
		MountNamespaces: "linux only", PidsCgroup: "linux only"}
	if _, err := os.Stat(sandboxExec); err != nil {
		s.Seatbelt = "unavailable: " + err.Error()
		s.Reason = s.Seatbelt
		return s
	}
	s.Seatbelt = "available (" + sandboxExec + ")"
	tmp, err := os.MkdirTemp("", "helikon-os-doctor-")
	if err != nil {
		s.Reason = err.Error()
		return s
	}
	defer os.RemoveAll(tmp)
	if _, err := New(tmp, nil); err != nil {
		s.Reason = err.Error()
		return s
	}
	s.Available = true
	return s
}

// Launcher is the unprivileged launcher started ahead of its backend
// (Linux only; see [StartLauncher]).
type Launcher struct{}

// StartLauncher returns a launcher no backend uses: Seatbelt needs none.
func StartLauncher(string) *Launcher { return &Launcher{} }

// Close does nothing.
func (*Launcher) Close() error { return nil }

// Close releases what the backend holds; here it holds nothing between
// commands (no session home, launcher or network namespace), so it does
// nothing. It is here so that code closing a backend builds everywhere.
func (*Backend) Close() error { return nil }
