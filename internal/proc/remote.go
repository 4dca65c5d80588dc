package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/paigasus/helikon/backend"
)

// Remote is a command that [Spec].Spawn started outside this program.
type Remote interface {
	// Wait blocks until the command and every process it started are
	// gone and returns its exit code (nil when a signal killed it) and
	// the signal. Its error says that nothing was started (a
	// *[StartError], or an error wrapping [backend.ErrUnavailable]), or
	// that whoever ran the command failed and its status is unknown (the
	// command is gone then too).
	Wait() (code *int, signal int, err error)
	// Kill kills the command and everything it started; Wait returns
	// once they are gone. It may be called more than once, and after the
	// command ended.
	Kill()
}

// runRemote is Run for a command started by s.Spawn: the same pipes,
// capped output, timeout and cancellation, with the command's start, wait
// and kill left to the spawner.
func runRemote(ctx context.Context, s *Spec, timeout time.Duration, outCap int64) (*backend.Result, error) {
	if s.Starter != nil || s.Limits != nil {
		return nil, fmt.Errorf("proc: Spawn cannot be combined with Starter or Limits: %w", ErrNoDirectStart)
	}
	path := s.Path
	if path == "" {
		var err error
		if path, err = ownPath(s.Argv[0]); err != nil {
			return nil, err
		}
	}
	var (
		stdio [3]*os.File
		ours  []*os.File // this program's copies of what the command gets
		out   outputs
	)
	defer func() {
		for _, f := range ours {
			f.Close()
		}
	}()
	in, r, err := remoteStdin(s.Stdin)
	if err != nil {
		return nil, err
	}
	stdio[0] = in
	if r != nil {
		ours = append(ours, r)
	}
	for i, w := range []io.Writer{s.Stdout, s.Stderr} {
		f, err := out.add(w, outCap)
		if err != nil {
			out.abandon()
			return nil, fmt.Errorf("proc: output pipe: %w", err)
		}
		stdio[i+1] = f
		if f != w {
			ours = append(ours, f)
		}
	}
	begin := time.Now()
	rem, err := s.Spawn(path, stdio)
	for _, f := range ours {
		f.Close() // the command holds its own copies
	}
	ours = nil
	if err != nil {
		out.abandon()
		return nil, err
	}
	if s.Started != nil {
		s.Started(0)
	}
	// The command's end is waited for here, the timeout and the context
	// by a goroutine that kills it: one hand-off less on the way back.
	w := watch(ctx, timeout, rem.Kill)
	code, sig, werr := rem.Wait()
	timedOut, ctxErr := w.stop()
	out.wait()
	var se *StartError
	if errors.As(werr, &se) {
		return nil, se
	}
	if werr != nil {
		return nil, fmt.Errorf("proc: %w", werr)
	}
	res := &backend.Result{ExitCode: code, Signal: sig, TimedOut: timedOut, Duration: time.Since(begin)}
	markKilled(res, timedOut || ctxErr != nil)
	res.Stdout, res.Stderr, res.Truncated = out.result()
	return res, ctxErr
}

// remoteStdin returns the file a spawned command reads its standard input
// from: in itself when it is a file, /dev/null when it is nil, otherwise
// the read end of a pipe that a goroutine copies in to, which is returned
// as r too, for the caller to close once the command holds its own copy.
func remoteStdin(in io.Reader) (f, r *os.File, err error) {
	switch in := in.(type) {
	case nil:
		f, err := devNull()
		if err != nil {
			return nil, nil, fmt.Errorf("proc: %w", err)
		}
		return f, nil, nil
	case *os.File:
		return in, nil, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("proc: input pipe: %w", err)
	}
	// Like os/exec's copy: it ends when the command is gone (the write
	// fails) or the reader ends; a reader that never returns is abandoned.
	go func() {
		_, _ = io.Copy(w, in)
		w.Close()
	}()
	return r, r, nil
}

// outputs are a command's output streams as runRemote reads them.
type outputs struct {
	readers  sync.WaitGroup
	readEnds []*os.File
	bufs     [2]*backend.CappedBuffer
	n        int
}

// add returns the file the command writes stream n (stdout, then stderr)
// to: w itself when it is a file; otherwise a pipe read into w, or, when w
// is nil, into a buffer capped at outCap.
func (o *outputs) add(w io.Writer, outCap int64) (*os.File, error) {
	i := o.n
	o.n++
	if f, ok := w.(*os.File); ok {
		return f, nil
	}
	if w == nil {
		o.bufs[i] = backend.NewCappedBuffer(outCap)
		w = o.bufs[i]
	}
	r, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	o.readEnds = append(o.readEnds, r)
	o.readers.Go(func() {
		bp := readBufs.Get().(*[]byte)
		defer readBufs.Put(bp)
		b := *bp
		for {
			n, err := r.Read(b)
			if n > 0 {
				_, _ = w.Write(b[:n])
			}
			if err != nil {
				return
			}
		}
	})
	return pw, nil
}

// wait waits for the output to end, at most [PipeGrace] once the command
// is gone (a process outside it may hold a pipe), then closes the pipes.
func (o *outputs) wait() {
	done := make(chan struct{})
	go func() { o.readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(PipeGrace):
		o.abandon()
	}
	o.abandon()
}

// abandon closes the pipes and waits for their readers.
func (o *outputs) abandon() {
	for _, r := range o.readEnds {
		r.Close()
	}
	o.readers.Wait()
}

// result returns the captured output.
func (o *outputs) result() (stdout, stderr []byte, truncated bool) {
	if b := o.bufs[0]; b != nil {
		stdout, truncated = b.Bytes(), b.Truncated()
	}
	if b := o.bufs[1]; b != nil {
		stderr, truncated = b.Bytes(), truncated || b.Truncated()
	}
	return stdout, stderr, truncated
}
