package agentsandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/capture"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/execfs"
)

// Workspace is one claimed sandbox: its files through package execfs, its
// commands through the pod's exec subresource. It is safe for concurrent
// use. See the package documentation for what it guarantees.
type Workspace struct {
	*execfs.FS
	e    *Engine
	tg   *target
	guar backend.Guarantees
	info workspace.Info
	dir  string

	mu   sync.Mutex
	dead error // why every call now fails with ErrGone; nil while it lives
}

var (
	_ workspace.Workspace = (*Workspace)(nil)
	_ backend.WorkingDir  = (*Workspace)(nil)
	_ backend.TimeLimited = (*Workspace)(nil)
	// The file tools' checked Write and Edit take one exec less.
	_ workspace.ExpectWriter = (*Workspace)(nil)
)

// init finds the workspace root and opens its file tree.
func (w *Workspace) init(ctx context.Context, pod *corev1.Pod) error {
	dir := w.e.opts.Dir
	if dir == "" {
		for _, c := range pod.Spec.Containers {
			if c.Name == w.tg.container {
				dir = c.WorkingDir
			}
		}
	}
	if dir == "" {
		var out bytes.Buffer
		var errb bytes.Buffer
		code, err := w.stream(ctx, []string{"sh", "-c", "pwd -P"}, nil, &out, &errb)
		if err != nil {
			return err
		}
		if code != 0 {
			return fmt.Errorf("k8s: finding the container's working directory: sh exited %d: %s; does the image have a POSIX sh?", code, strings.TrimSpace(errb.String()))
		}
		dir = strings.TrimSpace(out.String())
	}
	if !path.IsAbs(dir) {
		return fmt.Errorf("k8s: workspace directory %q is not an absolute path", dir)
	}
	w.dir = path.Clean(dir)
	fsys, err := execfs.New(ctx, runner{w}, w.dir, nil)
	if err != nil {
		return fmt.Errorf("k8s: opening the workspace's files in pod %s/%s: %w", w.e.ns, w.tg.pod, err)
	}
	w.FS = fsys
	return nil
}

// Dir is the workspace root in the container: the commands' working
// directory.
func (w *Workspace) Dir() string { return w.dir }

// Timeout is the longest a command may run.
func (w *Workspace) Timeout() time.Duration { return backend.EffectiveTimeout(w.e.opts.Timeout, 0) }

// Guarantees reports what the pod's runtime class and the template's
// network policy give, as read when the workspace was opened.
func (w *Workspace) Guarantees() backend.Guarantees { return w.guar }

// Info describes the workspace: ID is the claim's name.
func (w *Workspace) Info() workspace.Info { return w.info }

// Pod is the namespace/name of the pod the workspace's commands run in.
func (w *Workspace) Pod() string { return w.e.ns + "/" + w.tg.pod }

// Close deletes the claim (the controller's owner references take the
// Sandbox and its pod with it), whatever the state of ctx, and marks the
// workspace gone. It is idempotent; a claim someone else already deleted
// is not an error.
func (w *Workspace) Close(ctx context.Context) error {
	w.mu.Lock()
	closed := w.dead != nil && errors.Is(w.dead, errClosed)
	if !closed {
		w.dead = fmt.Errorf("k8s: %w: %w", workspace.ErrGone, errClosed)
	}
	w.mu.Unlock()
	if closed {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	return w.e.delete(ctx, w.tg.claim)
}

var errClosed = errors.New("closed")

func (w *Workspace) setGone(err error) {
	w.mu.Lock()
	if w.dead == nil {
		w.dead = err
	}
	w.mu.Unlock()
}

func (w *Workspace) goneErr() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.dead
}

// Run runs req in the workspace. The timeout and a cancelled ctx end the
// command's whole process tree in the container (see killTree). The
// Request's Env allowlist and Limits do not apply: the container has the
// environment and the resources its template gives it.
func (w *Workspace) Run(ctx context.Context, req *backend.Request) (*backend.Result, error) {
	var cmd []string
	switch {
	case req.Command != "" && len(req.Argv) > 0:
		return nil, errors.New("k8s: request has both Command and Argv")
	case req.Command != "":
		cmd = []string{"-c", req.Command}
	case len(req.Argv) > 0:
		cmd = req.Argv
	default:
		return nil, errors.New("k8s: request has neither Command nor Argv")
	}
	for _, kv := range req.SetEnv {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || strings.ContainsAny(name, " \t\n") {
			return nil, fmt.Errorf("k8s: SetEnv entry %q is not NAME=value", kv)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := capture.New(req, w.e.opts.OutputCap)
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, backend.EffectiveTimeout(w.e.opts.Timeout, req.Timeout))
	defer cancel()
	code, err := w.exec(rctx, w.wrap(req.SetEnv, cmd), req.Stdin, out.Stdout, out.Stderr)
	res := &backend.Result{Duration: time.Since(start)}
	out.Fill(res)
	switch {
	case err == nil:
		res.ExitCode = &code
		return res, nil
	case ctx.Err() != nil:
		return res, fmt.Errorf("k8s exec: %w", ctx.Err())
	case rctx.Err() != nil:
		res.TimedOut = true
		return res, nil
	}
	return nil, err
}

// wrap is the argv that runs cmd ("-c LINE" or a vector) under [wrapper].
func (w *Workspace) wrap(setEnv, cmd []string) []string {
	argv := append([]string{"sh", "-c", wrapper, "helikon", w.dir, strconv.Itoa(len(setEnv))}, setEnv...)
	return append(argv, cmd...)
}

// exec runs argv, built by wrap, and when ctx ends before the command
// does, kills the command's process tree in the container while the stream
// still runs (so that the pid the wrapper reports is not lost with it),
// then ends the stream. It returns ctx's error then.
func (w *Workspace) exec(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (exitCode, error) {
	pw := newPidWriter(stderr)
	sctx, scancel := context.WithCancel(context.WithoutCancel(ctx))
	defer scancel()
	ended := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ended:
			return
		case <-ctx.Done():
		}
		select {
		case <-pw.Ready():
		case <-ended:
		case <-time.After(pidGrace):
		}
		if pid, ok := pw.PID(); ok {
			if err := w.kill(ctx, pid); err != nil {
				w.e.log.Warn("k8s: killing a timed-out or cancelled command failed; it may still run in the pod", "pod", w.Pod(), "pid", pid, "err", err)
			}
		} else {
			w.e.log.Warn("k8s: a timed-out or cancelled command never reported its pid; it may still run in the pod", "pod", w.Pod())
		}
		scancel()
	}()
	code, err := w.stream(sctx, argv, stdin, stdout, pw)
	close(ended)
	wg.Wait()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return code, err
}

// pidGrace is how long a stopped command's kill waits for the wrapper's
// pid line, which a command stopped right after it started may not have
// delivered yet.
const pidGrace = 5 * time.Second

// runner is the workspace's exec as execfs needs it.
type runner struct{ w *Workspace }

// Exec runs argv under the wrapper, so that a cancelled file operation's
// script is killed in the container too.
func (r runner) Exec(ctx context.Context, argv []string, stdin []byte, maxStdout int64) ([]byte, []byte, int, error) {
	stdout := backend.NewCappedBuffer(maxStdout)
	stderr := backend.NewCappedBuffer(maxStderr)
	var in io.Reader
	if stdin != nil {
		in = bytes.NewReader(stdin)
	}
	code, err := r.w.exec(ctx, r.w.wrap(nil, argv), in, stdout, stderr)
	if err != nil {
		return nil, nil, 0, err
	}
	return stdout.Bytes(), stderr.Bytes(), code, nil
}

// maxStderr caps what a file operation's script may say on stderr.
const maxStderr = 8 << 10
