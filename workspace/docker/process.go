package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/moby/moby/client"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/proc"
)

var _ backend.Starter = (*Workspace)(nil)

// Start starts req in the container as a process that keeps running (see
// [backend.Starter]): a docker exec with its standard input attached, its
// output (standard output and error, or the terminal with req.TTY) read
// into the process's ring as the daemon passes it on, under the same
// wrapper, environment and per-command limits as a command of Run, with
// the lifetime in place of the timeout. Kill (the lifetime, ctx's end,
// Signal(os.Kill)) ends the process's session and process group through a
// second exec, as Run does at its timeout; other signals go to its
// process group the same way. A keeper exec per workspace holds the list
// of running processes and kills them all when its connection to this
// process drops, so that none outlives a helikon killed with SIGKILL (see
// the package doc). Start returns once the wrapper reported the process's
// pid.
func (w *Workspace) Start(ctx context.Context, req *backend.StartRequest) (backend.Process, error) {
	if req == nil {
		return nil, errors.New("docker: nil start request")
	}
	if req.Command != "" && len(req.Argv) > 0 {
		return nil, errors.New("docker: a request sets both Command and Argv; set one")
	}
	if len(req.Argv) > 0 && req.Argv[0] == "" {
		return nil, errors.New("docker: empty program name in Argv")
	}
	if req.TTY != nil && (req.TTY.Rows == 0 || req.TTY.Cols == 0) {
		return nil, errors.New("docker: a terminal needs at least one row and one column")
	}
	if w.isClosed() {
		return nil, errClosed
	}
	lifetime := backend.EffectiveLifetime(req.Lifetime)
	limits := w.limits.Merge(req.Limits).WithDefaults(lifetime)
	limits.Processes = 0
	allow := w.allow
	if len(req.Env) > 0 {
		allow = append(slices.Clone(w.allow), req.Env...)
	}
	env := backend.ScrubEnv(os.Environ(), allow, req.SetEnv)
	argv := req.Argv
	if len(argv) == 0 {
		argv = []string{w.shell, "-c", req.Command}
	}
	// One stream, in the order the process writes (the daemon reads
	// standard output and error from two pipes, and would reorder them).
	prologue := "exec 2>&1"
	if pl := proc.Prologue(limits, false); pl != "" {
		prologue += "\n" + pl
	}
	if req.TTY != nil {
		// Daemons before API 1.42 ignore the size given at the exec's
		// creation: the terminal gets it here, before the command runs.
		prologue = fmt.Sprintf("stty rows %d cols %d 2>/dev/null\n", req.TTY.Rows, req.TTY.Cols) + prologue
	}
	k, err := w.keeper(ctx)
	if err != nil {
		return nil, err
	}
	p := &process{w: w, ring: backend.NewRing(req.RingSize), done: make(chan struct{}), tty: req.TTY != nil, begin: time.Now()}
	inR, inW := io.Pipe()
	p.in = inW
	if p.tty {
		p.in = ttyInput{inW}
	}
	pw := newPidWriter(p.ring)
	pctx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	spec := &execSpec{
		script:  wrapper(prologue, unsafeLocale(w.baseEnv, env), w.readOnly),
		argv:    argv,
		env:     env,
		stdin:   inR,
		stdout:  p.ring,
		stderr:  p.ring,
		timeout: lifetime,
		tty:     req.TTY,
		pw:      pw,
		started: func(id string) {
			p.mu.Lock()
			p.execID = id
			p.mu.Unlock()
		},
	}
	go func() {
		o, err := w.exec(pctx, spec)
		if err != nil && errors.Is(err, context.Canceled) && ctx.Err() == nil && o != nil {
			err = nil // killed through Signal(os.Kill): a result like any other
		}
		cancel()
		var res *backend.Result
		if o != nil {
			res = &backend.Result{TimedOut: o.timedOut, Duration: time.Since(p.begin)}
			if o.killed {
				res.Signal = int(syscall.SIGKILL)
			} else {
				code := o.exitCode
				res.ExitCode = &code
			}
		}
		inR.CloseWithError(os.ErrProcessDone)
		p.ring.Close()
		if pid, ok := wrapperPid(pw); ok {
			k.forget(pid)
		}
		p.mu.Lock()
		p.res, p.err = res, err
		p.mu.Unlock()
		close(p.done)
	}()
	select {
	case <-pw.Ready():
	case <-p.done:
		if p.err != nil {
			return nil, p.err
		}
		return p, nil // it ended before its pid line was read whole
	}
	pid, ok := wrapperPid(pw)
	if !ok {
		cancel()
		<-p.done
		return nil, errors.New("docker: the process's id was not reported; it was not started")
	}
	p.mu.Lock()
	p.pid = pid
	p.mu.Unlock()
	if err := k.keep(ctx, pid); err != nil {
		// Without the keeper nothing would end the process if this
		// process died: fail closed.
		cancel()
		<-p.done
		return nil, err
	}
	return p, nil
}

// process is a command started by Start.
type process struct {
	w      *Workspace
	ring   *backend.Ring
	in     io.WriteCloser
	tty    bool
	begin  time.Time
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	execID string
	pid    int // the wrapper's, leader of the process's session and group
	res    *backend.Result
	err    error
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

// signalWait bounds the exec that signals a process.
const signalWait = 10 * time.Second

func (p *process) Signal(sig os.Signal) error {
	if p.ended() {
		return fmt.Errorf("docker: signal: %w", os.ErrProcessDone)
	}
	if sig == os.Kill {
		p.cancel() // exec kills the session and the group, as at a timeout
		return nil
	}
	s, ok := sig.(syscall.Signal)
	if !ok || s <= 0 || s > 64 {
		return fmt.Errorf("docker: signal %v: %w", sig, backend.ErrUnsupported)
	}
	p.mu.Lock()
	pid := p.pid
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), signalWait)
	defer cancel()
	// The wrapper's pid names the process group until the exec's end has
	// been seen (the container's init reaps it, and the kernel reuses no
	// pid that still names a group): done is closed after that.
	// The shell's kill: busybox's takes no "--", and reads "-2 -PID" as
	// POSIX says.
	code, err := p.w.execRaw(ctx, []string{"/bin/sh", "-c", `kill -"$1" -"$2"`, "helikon-signal", strconv.Itoa(int(s)), strconv.Itoa(pid)}, nil, nil, io.Discard, io.Discard)
	if err != nil {
		return fmt.Errorf("docker: signal %v: %w", sig, err)
	}
	if code != 0 {
		if p.ended() {
			return fmt.Errorf("docker: signal: %w", os.ErrProcessDone)
		}
		return fmt.Errorf("docker: signal %v: kill exited %d: %w", sig, code, os.ErrProcessDone)
	}
	return nil
}

func (p *process) Resize(size backend.TermSize) error {
	if !p.tty {
		return fmt.Errorf("docker: resize: %w", backend.ErrNoTTY)
	}
	if p.ended() {
		return fmt.Errorf("docker: resize: %w", os.ErrProcessDone)
	}
	p.mu.Lock()
	id := p.execID
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), signalWait)
	defer cancel()
	if _, err := p.w.e.cli.ExecResize(ctx, id, client.ExecResizeOptions{Height: uint(size.Rows), Width: uint(size.Cols)}); err != nil {
		return fmt.Errorf("docker: resize the terminal: %w", gone(err))
	}
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

// keeperScript is the keeper's exec: it reads "+ PID" and "- PID" lines
// (a process started, a process ended) and, when its input ends (this
// process closed it, or died and the daemon closed the connection), kills
// the session and group of every PID still listed with killScript ($1).
const keeperScript = `ks=$1
pids=
while read -r op p; do
	case $op in
	+) pids="$pids $p" ;;
	-) n=; for q in $pids; do [ "$q" = "$p" ] || n="$n $q"; done; pids=$n ;;
	esac
done
for p in $pids; do /bin/sh -c "$ks" helikon-kill "$p"; done`

// keeper is a workspace's keeper exec and the processes it keeps.
type keeper struct {
	w    *Workspace
	mu   sync.Mutex
	st   *started      // nil when none runs
	done chan struct{} // closed when st's output ended: it exited
	pids map[int]bool
}

// keeper returns w's keeper, started on first use.
func (w *Workspace) keeper(ctx context.Context) (*keeper, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.keep == nil {
		w.keep = &keeper{w: w, pids: map[int]bool{}}
	}
	k := w.keep
	k.mu.Lock()
	defer k.mu.Unlock()
	if err := k.ensure(ctx); err != nil {
		return nil, err
	}
	return k, nil
}

// ensure starts the keeper exec when none runs (a command of the
// container's user may have killed it) and hands it the pids it keeps.
// k.mu is held.
func (k *keeper) ensure(ctx context.Context) error {
	if k.st != nil {
		select {
		case <-k.done:
			k.st.att.Close()
			k.st = nil
		default:
			return nil
		}
	}
	st, err := k.w.start(context.WithoutCancel(ctx), []string{"/bin/sh", "-c", keeperScript, "helikon-keeper", killScript}, nil, true, nil)
	if err != nil {
		return fmt.Errorf("docker: start the exec that ends processes left by this process: %w", err)
	}
	k.st, k.done = st, st.stream(nil, io.Discard, io.Discard)
	for pid := range k.pids {
		if err := k.send('+', pid); err != nil {
			return err
		}
	}
	return nil
}

// send writes one line to the keeper. k.mu is held.
func (k *keeper) send(op byte, pid int) error {
	if _, err := fmt.Fprintf(k.st.att.Conn, "%c %d\n", op, pid); err != nil {
		return fmt.Errorf("docker: tell the keeper exec about process %d: %w", pid, err)
	}
	return nil
}

// keep adds pid to the processes the keeper kills, restarting the keeper
// once if it no longer runs.
func (k *keeper) keep(ctx context.Context, pid int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.pids[pid] = true
	if err := k.ensure(ctx); err != nil {
		delete(k.pids, pid)
		return err
	}
	if err := k.send('+', pid); err != nil {
		k.st.att.Close()
		k.st = nil
		if err := k.ensure(ctx); err != nil { // hands it pid too
			delete(k.pids, pid)
			return err
		}
	}
	return nil
}

// forget removes pid, whose process ended, from the keeper's list.
func (k *keeper) forget(pid int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.pids[pid] {
		return
	}
	delete(k.pids, pid)
	if k.st != nil {
		_ = k.send('-', pid) // a keeper gone has nothing to forget
	}
}

// close ends the keeper, which kills what it still keeps.
func (k *keeper) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.st != nil {
		_ = k.st.att.CloseWrite()
		k.st.att.Close()
		k.st = nil
	}
}
