package forkd

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/forkdapi"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/execfs"
)

// Label is the Guarantees label of a forkd workspace.
const Label = "forkd workspace (firecracker microvm, experimental)"

// Workspace is one session's forkd workspace: its live microVM, in which
// Run runs commands from the root and the file operations (package
// workspace/execfs) act on the tree under it. It is safe for concurrent
// use. Once the controller's workspace is found gone (deleted, suspended,
// stale), every call fails with an error matching workspace.ErrGone.
type Workspace struct {
	workspace.FS
	e       *Engine
	name    string
	sandbox string // the live sandbox every exec goes to
	root    string // the root's absolute path in the microVM
	info    workspace.Info

	mu     sync.Mutex
	gone   error // set once the workspace is lost or closed
	closed bool  // Close deleted it
}

var (
	_ workspace.Workspace = (*Workspace)(nil)
	_ workspace.Engine    = (*Engine)(nil)
)

// open builds the Workspace of the controller's workspace info.
func (e *Engine) open(info forkdapi.WorkspaceInfo, session string, labels map[string]string, attached bool) *Workspace {
	i := e.infoOf(info, session, labels)
	i.Attached = attached
	if labels == nil {
		i.Labels = e.labelsOf(info, session, "")
	}
	return &Workspace{e: e, name: info.Name, sandbox: info.LiveSandboxID, info: i}
}

// setRoot takes the root's absolute path as the setup exec printed it and
// builds the file tree on it.
func (w *Workspace) setRoot(ctx context.Context, out string) error {
	root := strings.TrimSuffix(out, "\n")
	if !strings.HasPrefix(root, "/") || strings.ContainsAny(root, "\n\x00") {
		return fmt.Errorf("forkd workspaces: the workspace reported root %q, not an absolute path", root)
	}
	if d := w.e.Dir(); d != "" && root != d {
		return fmt.Errorf("forkd workspaces: the root %s is %s in the microVM (a link): give that directory as the root", d, root)
	}
	w.root = root
	fsys, err := newFS(ctx, runner{w}, root)
	if err != nil {
		return err
	}
	w.FS = fsys
	return nil
}

// Dir is the root's absolute path in the microVM: the commands' working
// directory.
func (w *Workspace) Dir() string { return w.root }

// setup runs one of the engine's own scripts (make or find the root) and
// returns its standard output; a non-zero exit is an error with its
// standard error.
func (w *Workspace) setup(ctx context.Context, argv []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, setupTimeout)
	defer cancel()
	stdout, stderr, code, err := w.exec(ctx, argv, maxLabelsOutput)
	if err != nil {
		return "", err
	}
	if code != 0 {
		return "", fmt.Errorf("root %s in the microVM: exit code %d: %s", w.e.dir, code, strings.TrimSpace(string(stderr)))
	}
	return string(stdout), nil
}

// Info describes the workspace: its forkd name, the session, its labels
// and the controller's creation time.
func (w *Workspace) Info() workspace.Info {
	i := w.info
	i.Labels = maps.Clone(w.info.Labels)
	return i
}

// Guarantees reports backend/microvm's guarantees (filesystem and syscalls
// virtualized; network proxied with EnforceEgress, none otherwise), for
// this workspace.
func (w *Workspace) Guarantees() backend.Guarantees {
	g := w.e.Guarantees()
	g.Features = append(g.Features, "workspace "+w.name)
	return g
}

// Run runs req in the workspace's microVM, starting in the root, as
// backend/microvm's Run does in a fresh one: same timeout, output cap and
// Result. A command that timed out or whose ctx ended is killed with every
// process it started (see [RunMarker]).
func (w *Workspace) Run(ctx context.Context, req *backend.Request) (*backend.Result, error) {
	if err := w.alive(); err != nil {
		return nil, err
	}
	mark := newMark()
	r := *req
	r.SetEnv = append(slices.Clip(req.SetEnv), mark)
	res, err := w.e.b.RunIn(ctx, w.sandbox, w.root, &r)
	if errors.Is(err, forkdapi.ErrNotFound) {
		return nil, w.lost(ctx, err)
	}
	if ctx.Err() != nil || res != nil && res.TimedOut {
		w.kill(ctx, mark)
	}
	return res, err
}

// RunMarker is the environment variable that marks the processes of one
// call in a workspace (RunMarker=random id). The controller's exec cannot
// be cancelled, and its guest agent kills only the direct child of a
// command that runs past its timeout; so when a call times out or its
// context ends, one more exec kills every process of the microVM whose
// environment carries the call's mark: the command and what it started,
// unless they cleared their environment.
const RunMarker = "HELIKON_WORKSPACE_RUN"

// killTimeout bounds the exec that kills a call's processes.
const killTimeout = 10 * time.Second

// killScript kills, twice over to catch what forked during the first
// pass, every process whose environment holds the line $1.
const killScript = `for i in 1 2; do for e in /proc/[0-9]*/environ; do if tr '\0' '\n' < "$e" 2>/dev/null | grep -qxF -- "$1"; then p=${e#/proc/}; kill -9 "${p%/environ}" 2>/dev/null; fi; done; done; :`

// newMark returns a fresh RunMarker=ID.
func newMark() string {
	return RunMarker + "=" + rand.Text()
}

// kill kills the processes carrying mark, whatever ctx's state; a failure
// is logged (Close destroys the microVM and them with it).
func (w *Workspace) kill(ctx context.Context, mark string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killTimeout+forkdapi.ExecGrace)
	defer cancel()
	res, err := w.e.c.Exec(ctx, w.sandbox, []string{"sh", "-c", killScript, "sh", mark}, int(killTimeout/time.Second), 1<<20)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit code %d: %s", res.ExitCode, res.Stderr)
	}
	if err != nil {
		w.e.log.Warn("forkd workspaces: killing a timed-out or cancelled command failed", "name", w.name, "err", err)
	}
}

// Close deletes the controller's workspace and its microVM. It is
// idempotent; a failed delete is returned and tried again by the next
// Close, while every other call already fails with workspace.ErrGone.
func (w *Workspace) Close(ctx context.Context) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	if w.gone == nil {
		w.gone = fmt.Errorf("forkd workspace %s: %w: closed", w.name, workspace.ErrGone)
	}
	w.mu.Unlock()
	// Not under mu: calls that find the workspace gone need not wait for
	// the controller. Two Closes at once both delete; the second finds
	// nothing (404), which is success.
	if err := w.e.c.DeleteWorkspace(ctx, w.name); err != nil {
		return fmt.Errorf("forkd workspaces: closing %s: %w", w.name, err)
	}
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	return nil
}

// alive returns the error that ended the workspace, nil while it lives.
func (w *Workspace) alive() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gone
}

// lost finds out why the live sandbox is unknown to the controller (cause:
// the 404), records it and returns it, wrapping workspace.ErrGone.
func (w *Workspace) lost(ctx context.Context, cause error) error {
	why := "its microVM is gone"
	switch info, err := w.e.c.GetWorkspace(context.WithoutCancel(ctx), w.name); {
	case errors.Is(err, forkdapi.ErrNotFound):
		why = "deleted by someone else"
	case err != nil:
	case info.Status == statusSuspended:
		why = "suspended by another client of the controller"
	case info.Status == statusStale:
		why = "stale: the controller restarted and the microVM died, with its files"
	case info.LiveSandboxID != w.sandbox:
		why = "its microVM was replaced (suspended and resumed by another client)"
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.gone == nil {
		w.gone = fmt.Errorf("forkd workspace %s: %w: %s (%v)", w.name, workspace.ErrGone, why, cause)
	}
	return w.gone
}

// exec runs argv in the live sandbox with a timeout of ctx's deadline
// (rounded up to whole seconds, as the API counts them) or the engine's
// command timeout, and returns at most maxStdout bytes of its output.
func (w *Workspace) exec(ctx context.Context, argv []string, maxStdout int64) (stdout, stderr []byte, code int, err error) {
	if err := w.alive(); err != nil {
		return nil, nil, 0, err
	}
	timeout := backend.EffectiveTimeout(w.e.timeout, 0)
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	secs := max(1, int((timeout+time.Second-1)/time.Second))
	execCtx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+forkdapi.ExecGrace)
	defer cancel()
	mark := newMark()
	start := time.Now()
	res, err := w.e.c.Exec(execCtx, w.sandbox, append([]string{"env", mark}, argv...), secs, forkdapi.MaxExecBody(maxStdout))
	timedOut := err == nil && forkdapi.TimedOut(res, time.Since(start), secs)
	if ctx.Err() != nil || timedOut || errors.Is(err, context.DeadlineExceeded) {
		w.kill(ctx, mark)
	}
	switch {
	case errors.Is(err, forkdapi.ErrNotFound):
		return nil, nil, 0, w.lost(ctx, err)
	case ctx.Err() != nil:
		return nil, nil, 0, fmt.Errorf("forkd workspace %s: %w", w.name, ctx.Err())
	case err != nil:
		return nil, nil, 0, fmt.Errorf("forkd workspace %s: %w", w.name, err)
	case timedOut:
		return nil, nil, 0, fmt.Errorf("forkd workspace %s: the command timed out after %ds: %w", w.name, secs, context.DeadlineExceeded)
	}
	out := []byte(res.Stdout)
	if int64(len(out)) > maxStdout {
		out = out[:maxStdout]
	}
	code = res.ExitCode
	if code < 0 {
		code = 128 - code // killed by signal -code, as a shell reports it
	}
	return out, []byte(res.Stderr), code, nil
}

var _ execfs.Runner = runner{}

// runner is the execfs Runner of a workspace: forkd's exec, which takes no
// standard input and decodes output as UTF-8.
type runner struct{ w *Workspace }

// Exec runs argv in the workspace's microVM.
func (r runner) Exec(ctx context.Context, argv []string, stdin []byte, maxStdout int64) ([]byte, []byte, int, error) {
	if stdin != nil {
		return nil, nil, 0, errors.New("forkd workspaces: the controller's exec takes no standard input")
	}
	return r.w.exec(ctx, argv, maxStdout)
}
