package agentsandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace/internal/pidline"
)

var _ backend.Starter = (*Workspace)(nil)

// startScript runs between the wrapper and the command of a started
// process: it joins standard error to standard output (the exec protocol
// carries them on two streams, which the client copies concurrently and so
// would reorder), sets the terminal's size when there is one ($1 rows, $2
// columns; the resize stream's first size may arrive after the command
// asked), and runs the command as the wrapper would. It keeps the
// wrapper's pid: every step is an exec.
//
//	sh -c STARTSCRIPT helikon ROWS COLS (-c LINE | PROGRAM ARG...)
const startScript = `exec 2>&1
[ "$1" = 0 ] || stty rows "$1" cols "$2" 2>/dev/null
shift 2
if [ "$1" = -c ]; then
	command -v bash >/dev/null 2>&1 && exec bash -c "$2"
	exec sh -c "$2"
fi
exec "$@"`

// Start starts req in the workspace's container as a process that keeps
// running (see [backend.Starter]): a pod exec through client-go's executor
// (WebSocket, or SPDY as for Run) with its standard input attached, and
// with req.TTY a terminal whose size follows Resize (the executor's
// terminal size queue). Its output arrives in the process's ring as the
// stream passes it on. Kill, the lifetime's end and ctx's end kill the
// process tree in the container as Run does at its timeout (the kubelet
// does not end an exec whose stream closed); other signals go to the
// process group through a second exec. The Request's Env allowlist and
// Limits do not apply, as for Run. Start returns once the wrapper reported
// the process's pid.
//
// A keeper exec per workspace (while it has processes) holds their pids
// and ends their trees when its input ends, which the kubelet passes on
// when this process's stream drops: so they end when this process dies,
// also of SIGKILL. Not covered: a death in the instant between the pid
// line and the keeper's news, a keeper killed by a command of the pod
// while this process dies (it is restarted at the next Start), and a
// kubelet that would not pass the stream's end on as the input's end.
func (w *Workspace) Start(ctx context.Context, req *backend.StartRequest) (backend.Process, error) {
	if req == nil {
		return nil, errors.New("k8s: nil start request")
	}
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
	if req.TTY != nil && (req.TTY.Rows == 0 || req.TTY.Cols == 0) {
		return nil, errors.New("k8s: a terminal needs at least one row and one column")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows, cols := "0", "0"
	if req.TTY != nil {
		rows, cols = strconv.Itoa(int(req.TTY.Rows)), strconv.Itoa(int(req.TTY.Cols))
	}
	argv := w.wrap(req.SetEnv, append([]string{"sh", "-c", startScript, "helikon", rows, cols}, cmd...))
	p := &process{w: w, ring: backend.NewRing(req.RingSize), done: make(chan struct{}), begin: time.Now()}
	inR, inW := io.Pipe()
	p.in = inW
	if req.TTY != nil {
		p.in = ttyInput{inW}
		p.sizes = newSizeQueue(*req.TTY)
	}
	// The wrapper reports its pid on standard error, which a terminal
	// joins to its output.
	stdout, stderr := io.Writer(p.ring), io.Writer(nil)
	p.pw = newPidWriter(p.ring)
	if req.TTY != nil {
		stdout = p.pw
	} else {
		stderr = p.pw
	}
	pctx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	lctx, lcancel := context.WithTimeout(pctx, backend.EffectiveLifetime(req.Lifetime))
	go func() {
		defer lcancel()
		code, err := w.execProcess(lctx, argv, inR, stdout, stderr, p.sizes, p.pw)
		res := &backend.Result{Duration: time.Since(p.begin)}
		switch {
		case err == nil:
			res.ExitCode = &code
		case lctx.Err() != nil && pctx.Err() == nil:
			res.TimedOut, res.Signal, err = true, int(syscall.SIGKILL), nil
		case pctx.Err() != nil:
			// Killed: through Signal(os.Kill), a result like any other;
			// by ctx's end, with ctx's error.
			res.Signal, err = int(syscall.SIGKILL), nil
			if ctx.Err() != nil {
				err = fmt.Errorf("k8s exec: %w", ctx.Err())
			}
		default:
			res = nil
		}
		cancel()
		inR.CloseWithError(os.ErrProcessDone)
		if p.sizes != nil {
			p.sizes.close()
		}
		p.ring.Close()
		p.mu.Lock()
		p.res, p.err = res, err
		p.mu.Unlock()
		close(p.done)
	}()
	select {
	case <-p.pw.Ready():
	case <-p.done:
		if p.err != nil {
			return nil, p.err
		}
		return p, nil
	}
	pid, ok := p.pw.PID()
	if !ok {
		cancel()
		<-p.done
		return nil, errors.New("k8s: the process's id was not reported; it was not started")
	}
	k := w.keeperOf()
	if err := k.keep(pid); err != nil {
		// Nothing would end the process if this process died: fail
		// closed.
		cancel()
		<-p.done
		return nil, err
	}
	go func() {
		<-p.done
		k.forget(pid)
	}()
	return p, nil
}

// execProcess is exec (which it follows step for step) for a started
// process: the stream may have a terminal, fed by sizes. A second function
// rather than a parameter of exec, whose callers (Run, the file tools)
// never want one.
func (w *Workspace) execProcess(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, sizes *sizeQueue, pw *pidline.Writer) (exitCode, error) {
	sctx, scancel := context.WithCancel(context.WithoutCancel(ctx))
	defer scancel()
	ended := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
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
				w.e.log.Warn("k8s: killing a process failed; it may still run in the pod", "pod", w.Pod(), "pid", pid, "err", err)
			}
		}
		scancel()
	})
	code, err := w.streamProcess(sctx, argv, stdin, stdout, stderr, sizes)
	close(ended)
	wg.Wait()
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	return code, err
}

// streamProcess is stream with a terminal when sizes is not nil.
func (w *Workspace) streamProcess(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer, sizes *sizeQueue) (exitCode, error) {
	if err := w.check(ctx); err != nil {
		return 0, err
	}
	tty := sizes != nil
	req := w.e.core.Post().Resource("pods").Namespace(w.e.ns).Name(w.tg.pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: w.tg.container,
			Command:   argv,
			Stdin:     true,
			Stdout:    true,
			Stderr:    !tty, // a terminal has one output
			TTY:       tty,
		}, scheme.ParameterCodec)
	ex, err := w.e.executor(req.URL())
	if err != nil {
		return 0, fmt.Errorf("k8s exec: %w", err)
	}
	opts := remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr, Tty: tty}
	if tty {
		opts.Stderr = nil
		opts.TerminalSizeQueue = sizes
	}
	err = ex.StreamWithContext(ctx, opts)
	var exit utilexec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit) && exit.Exited():
		return exit.ExitStatus(), nil
	case ctx.Err() != nil:
		return 0, ctx.Err()
	}
	if gone := w.e.gone(ctx, w.tg); gone != nil {
		if errIsGone(gone) {
			w.setGone(gone)
		}
		return 0, fmt.Errorf("%w (exec failed: %v)", gone, err)
	}
	return 0, fmt.Errorf("k8s exec in pod %s/%s: %w", w.e.ns, w.tg.pod, err)
}

// process is a command started by Start.
type process struct {
	w      *Workspace
	ring   *backend.Ring
	in     io.WriteCloser
	sizes  *sizeQueue // nil without a terminal
	pw     *pidline.Writer
	begin  time.Time
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	res *backend.Result
	err error
}

func (p *process) Output() *backend.Ring { return p.ring }
func (p *process) Input() io.WriteCloser { return p.in }
func (p *process) Done() <-chan struct{} { return p.done }

func (p *process) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func (p *process) Signal(sig os.Signal) error {
	if p.ended() {
		return fmt.Errorf("k8s: signal: %w", os.ErrProcessDone)
	}
	if sig == os.Kill {
		p.cancel() // the tree is killed, as at a timeout
		return nil
	}
	s, ok := sig.(syscall.Signal)
	if !ok || s <= 0 || s > 64 {
		return fmt.Errorf("k8s: signal %v: %w", sig, backend.ErrUnsupported)
	}
	pid, _ := p.pw.PID()
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	// The process group where the runtime made the wrapper a group's
	// leader, else the wrapper alone.
	code, err := p.w.stream(ctx, []string{"sh", "-c", `kill -"$1" -"$2" 2>/dev/null || kill -"$1" "$2"`, "helikon", strconv.Itoa(int(s)), strconv.Itoa(pid)}, nil, io.Discard, io.Discard)
	if err != nil {
		return fmt.Errorf("k8s: signal %v: %w", sig, err)
	}
	if code != 0 {
		return fmt.Errorf("k8s: signal %v: %w", sig, os.ErrProcessDone)
	}
	return nil
}

func (p *process) Resize(size backend.TermSize) error {
	if p.sizes == nil {
		return fmt.Errorf("k8s: resize: %w", backend.ErrNoTTY)
	}
	if p.ended() {
		return fmt.Errorf("k8s: resize: %w", os.ErrProcessDone)
	}
	p.sizes.set(size)
	return nil
}

func (p *process) Wait(ctx context.Context) (*backend.Result, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.res, p.err
}

// ttyInput is a terminal's input: closing it types end of file (Ctrl-D)
// rather than hanging the terminal up.
type ttyInput struct{ w *io.PipeWriter }

func (t ttyInput) Write(b []byte) (int, error) { return t.w.Write(b) }
func (t ttyInput) Close() error {
	_, err := t.w.Write([]byte{4})
	return err
}

// sizeQueue is the executor's remotecommand.TerminalSizeQueue: the first
// size, then each size Resize sets (only the latest when several come
// before the executor asks), nil once the process ended.
type sizeQueue struct {
	ch   chan remotecommand.TerminalSize
	done chan struct{}
	once sync.Once
}

func newSizeQueue(first backend.TermSize) *sizeQueue {
	q := &sizeQueue{ch: make(chan remotecommand.TerminalSize, 1), done: make(chan struct{})}
	q.set(first)
	return q
}

func (q *sizeQueue) set(s backend.TermSize) {
	ts := remotecommand.TerminalSize{Width: s.Cols, Height: s.Rows}
	for {
		select {
		case q.ch <- ts:
			return
		case <-q.done:
			return
		default:
			select { // replace the size not yet taken
			case <-q.ch:
			default:
			}
		}
	}
}

// Next blocks until the next size, or returns nil once the queue closed.
func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case s := <-q.ch:
		return &s
	case <-q.done:
		return nil
	}
}

func (q *sizeQueue) close() { q.once.Do(func() { close(q.done) }) }
