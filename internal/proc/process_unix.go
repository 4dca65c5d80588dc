//go:build unix

package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"

	"github.com/paigasus/helikon/backend"
)

// Job is how a local backend runs one command for [StartProcess]: with
// this timeout instead of the backend's own (the process's lifetime), and
// with Started passed on to [Spec].Started.
type Job struct {
	Timeout time.Duration
	Started func(pid int)
}

// RunFunc runs req to its end as a backend's Run does, with j's timeout
// and start hook.
type RunFunc func(ctx context.Context, req *backend.Request, j Job) (*backend.Result, error)

// StartProcess starts req through run, which runs it to its end in a
// goroutine, and returns the running process once run reports it started
// (or run's error when it did not). Standard output and error go to one
// pipe (or to the terminal, with req.TTY), read into the process's ring;
// standard input is a pipe (or the terminal). Everything the backend
// promises for Run (containment, tracking, limits, killing the tree when
// ctx ends or the lifetime runs out) holds, because it is Run.
func StartProcess(ctx context.Context, req *backend.StartRequest, run RunFunc) (backend.Process, error) {
	if req == nil {
		return nil, errors.New("proc: nil start request")
	}
	p := &process{ring: backend.NewRing(req.RingSize), done: make(chan struct{})}
	r := req.Request
	r.Timeout, r.OutputCap = 0, 0
	var theirs []*os.File // the command's ends, closed here once it holds its own
	closeTheirs := sync.OnceFunc(func() {
		for _, f := range theirs {
			f.Close()
		}
	})
	var out *os.File
	if req.TTY != nil {
		master, slave, err := pty.Open()
		if err != nil {
			return nil, fmt.Errorf("proc: open a terminal: %w", err)
		}
		if err := pty.Setsize(master, &pty.Winsize{Rows: req.TTY.Rows, Cols: req.TTY.Cols}); err != nil {
			master.Close()
			slave.Close()
			return nil, fmt.Errorf("proc: size the terminal: %w", err)
		}
		p.tty, out, p.in = master, master, ttyInput{master}
		r.Stdin, r.Stdout, r.Stderr = slave, slave, slave
		theirs = []*os.File{slave}
	} else {
		inR, inW, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("proc: input pipe: %w", err)
		}
		outR, outW, err := os.Pipe()
		if err != nil {
			inR.Close()
			inW.Close()
			return nil, fmt.Errorf("proc: output pipe: %w", err)
		}
		p.in, out = inW, outR
		r.Stdin, r.Stdout, r.Stderr = inR, outW, outW
		theirs = []*os.File{inR, outW}
	}
	read := make(chan struct{})
	go func() {
		defer close(read)
		// A terminal's master reads EIO once no one holds the slave:
		// that is its end of file.
		_, _ = io.Copy(p.ring, out)
	}()
	pctx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	started := make(chan struct{})
	go func() {
		res, err := run(pctx, &r, Job{
			Timeout: backend.EffectiveLifetime(req.Lifetime),
			Started: func(pid int) {
				p.mu.Lock()
				p.pid = pid
				p.mu.Unlock()
				closeTheirs()
				close(started)
			},
		})
		if res != nil && errors.Is(err, context.Canceled) && ctx.Err() == nil {
			err = nil // killed through Signal(os.Kill): a result like any other
		}
		cancel()
		closeTheirs()
		// The tree is gone; a descendant that held the output open
		// somewhere run cannot see gets PipeGrace to finish.
		select {
		case <-read:
		case <-time.After(PipeGrace):
		}
		out.Close()
		<-read
		p.in.Close()
		p.ring.Close()
		if res != nil {
			res.Stdout, res.Stderr = nil, nil
		}
		p.mu.Lock()
		p.res, p.err = res, err
		p.mu.Unlock()
		close(p.done)
	}()
	select {
	case <-started:
		return p, nil
	case <-p.done:
		if p.err != nil {
			return nil, p.err
		}
		return p, nil // it started and ended before the hook's news arrived
	}
}

// process is a command started by StartProcess.
type process struct {
	ring   *backend.Ring
	in     io.WriteCloser
	tty    *os.File // the terminal's master, or nil
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	pid int // the process group's leader, 0 when unknown here
	res *backend.Result
	err error
}

func (p *process) Output() *backend.Ring { return p.ring }
func (p *process) Input() io.WriteCloser { return p.in }
func (p *process) Done() <-chan struct{} { return p.done }
func (p *process) ended() bool           { return isClosed(p.done) }
func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (p *process) Signal(sig os.Signal) error {
	if p.ended() {
		return fmt.Errorf("proc: signal: %w", os.ErrProcessDone)
	}
	if sig == os.Kill {
		p.cancel() // Run kills the whole tree, whatever its groups
		return nil
	}
	s, ok := sig.(syscall.Signal)
	if !ok {
		return fmt.Errorf("proc: signal %v: %w", sig, backend.ErrUnsupported)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pid <= 0 {
		return fmt.Errorf("proc: signal %v: the launcher that started the process only kills it: %w", sig, backend.ErrUnsupported)
	}
	// The leader is not reaped before Run returns, and done is closed
	// after: while done is open its pid names the process group still.
	if err := syscall.Kill(-signalGroup(p.pid), s); err != nil {
		if errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("proc: signal: %w", os.ErrProcessDone)
		}
		return fmt.Errorf("proc: signal %v: %w", sig, err)
	}
	return nil
}

func (p *process) Resize(size backend.TermSize) error {
	if p.tty == nil {
		return fmt.Errorf("proc: resize: %w", backend.ErrNoTTY)
	}
	if p.ended() {
		return fmt.Errorf("proc: resize: %w", os.ErrProcessDone)
	}
	return pty.Setsize(p.tty, &pty.Winsize{Rows: size.Rows, Cols: size.Cols})
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
type ttyInput struct{ f *os.File }

func (t ttyInput) Write(b []byte) (int, error) { return t.f.Write(b) }
func (t ttyInput) Close() error {
	_, err := t.f.Write([]byte{4})
	return err
}
