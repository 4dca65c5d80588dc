package proc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
)

// loopSupported reports whether runLoop can run s: on Linux, with the
// command started by Run itself and tracked without a reaper, standard input
// a file or nothing, and output captured or passed to files.
func loopSupported(s *Spec, tr *tracker) bool {
	if s.Starter != nil || tr.mode == TrackReaper {
		return false
	}
	if s.Stdin != nil {
		if _, ok := s.Stdin.(*os.File); !ok {
			return false
		}
	}
	for _, w := range []any{s.Stdout, s.Stderr} {
		if _, ok := w.(*os.File); w != nil && !ok {
			return false
		}
	}
	return true
}

// loopStream is one captured output stream of runLoop.
type loopStream struct {
	fd  int // the read end, non-blocking; -1 once closed
	buf *backend.CappedBuffer
}

// loopPipes are the output pipes of one runLoop.
type loopPipes struct {
	streams   []*loopStream
	writeEnds []*os.File // the ends the command writes to, until it started
}

// add sets *dst to where the command writes stream w: w itself when it is
// a file, otherwise a pipe whose read end the loop drains into a buffer
// capped at outCap, returned.
func (p *loopPipes) add(w any, dst *io.Writer, outCap int64) (*loopStream, error) {
	if f, ok := w.(*os.File); ok {
		*dst = f
		return nil, nil
	}
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC); err != nil {
		return nil, fmt.Errorf("proc: output pipe: %w", err)
	}
	st := &loopStream{fd: fds[0], buf: backend.NewCappedBuffer(outCap)}
	p.streams = append(p.streams, st)
	// A blocking descriptor: os.NewFile leaves it out of the runtime's
	// poller, and the command writes to it as to any pipe.
	wf := os.NewFile(uintptr(fds[1]), "|1")
	p.writeEnds = append(p.writeEnds, wf)
	*dst = wf
	if err := unix.SetNonblock(fds[0], true); err != nil {
		return nil, fmt.Errorf("proc: output pipe: %w", err)
	}
	return st, nil
}

// closeWriteEnds closes this program's copies of the ends the command
// writes to, once it started (or could not).
func (p *loopPipes) closeWriteEnds() {
	for _, f := range p.writeEnds {
		f.Close()
	}
	p.writeEnds = nil
}

// close closes every pipe still open.
func (p *loopPipes) close() {
	for _, st := range p.streams {
		if st.fd >= 0 {
			unix.Close(st.fd)
			st.fd = -1
		}
	}
	p.closeWriteEnds()
}

// captured returns the buffer st captured into, nil for a stream passed to a
// file.
func (st *loopStream) captured() *backend.CappedBuffer {
	if st == nil {
		return nil
	}
	return st.buf
}

// runLoop is Run for the common case on Linux, done by the calling
// goroutine alone: one poll(2) waits for the command's exit (its pidfd),
// its output, the timeout and the context at once. Run's other path spends
// a goroutine per stream and one for the exit, and each hand-off between
// them is a wake-up that a loaded machine delays; for a short command they
// were a fifth of the round trip. The guarantees are Run's: what differs is
// only who waits.
func runLoop(ctx context.Context, s *Spec, tr *tracker, cmd *exec.Cmd, timeout time.Duration, outCap int64) (*backend.Result, error) {
	var pipes loopPipes
	defer pipes.close()
	outS, err := pipes.add(s.Stdout, &cmd.Stdout, outCap)
	if err != nil {
		return nil, err
	}
	errS, err := pipes.add(s.Stderr, &cmd.Stderr, outCap)
	if err != nil {
		return nil, err
	}
	pidfd := -1
	cmd.SysProcAttr.PidFD = &pidfd
	begin, err := start(s, tr, cmd)
	pipes.closeWriteEnds()
	if err != nil && pidfd >= 0 {
		unix.Close(pidfd) // the clone succeeded, and startLimited reaped it
	}
	if err == errRetry {
		pipes.close()
		return Run(ctx, s)
	}
	if err != nil {
		return nil, err
	}
	if pidfd < 0 {
		// No pidfd (a kernel before 5.3 would have failed the clone3):
		// wait on the pid instead, still in this goroutine.
		return nil, fmt.Errorf("proc: no pidfd for pid %d", cmd.Process.Pid)
	}
	defer unix.Close(pidfd)
	tr.started(cmd.Process.Pid)
	if s.Started != nil {
		s.Started(cmd.Process.Pid)
	}

	efd, release, err := cancelFD(ctx)
	if err != nil {
		tr.kill()
		_ = cmd.Wait()
		_ = tr.waitGone(KillTimeout)
		return nil, err
	}
	defer release()

	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	l := &loop{ctx: ctx, tr: tr, cmd: cmd, pidfd: pidfd, efd: efd, streams: pipes.streams,
		buf: *bp, deadline: begin.Add(timeout), fds: make([]unix.PollFd, 0, 4)}
	l.run()
	return result(tr, cmd, l.waitErr, l.goneErr, l.ctxErr, l.timedOut, outS.captured(), errS.captured(), begin)
}

// cancelFD returns an eventfd that becomes readable when ctx is done, so
// that cancellation wakes the poll, and the function that releases it; -1
// when ctx cannot be cancelled.
func cancelFD(ctx context.Context) (efd int, release func(), err error) {
	if ctx.Done() == nil {
		return -1, func() {}, nil
	}
	efd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return -1, nil, fmt.Errorf("proc: eventfd: %w", err)
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(fired)
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		_, _ = unix.Write(efd, one[:])
	})
	return efd, func() {
		if !stop() {
			<-fired // it runs or ran: let it finish before efd is closed
		}
		unix.Close(efd)
	}, nil
}

// loop is the state of runLoop's poll loop over one started command.
type loop struct {
	ctx        context.Context
	tr         *tracker
	cmd        *exec.Cmd
	pidfd, efd int // efd is -1 for a context that cannot be cancelled
	streams    []*loopStream
	buf        []byte // what the streams are read with
	fds        []unix.PollFd

	deadline, graceEnd       time.Time
	timedOut, exited         bool
	ctxErr, waitErr, goneErr error
}

// run polls until the command has exited and its output has ended (or
// [PipeGrace] has passed since it exited), and leaves the tree killed and
// reaped.
func (l *loop) run() {
	for {
		wait, more := l.next(time.Now())
		if !more {
			break
		}
		first := l.pollSet()
		if _, err := unix.Poll(l.fds, wait); err != nil && !errors.Is(err, unix.EINTR) {
			// poll fails only for a bad set (EFAULT, EINVAL, ENOMEM):
			// kill the tree and collect what there is.
			l.ctxErr = fmt.Errorf("proc: poll: %w", err)
			l.tr.kill()
			break
		}
		for _, pfd := range l.fds[first:] {
			if pfd.Revents != 0 {
				l.drain(int(pfd.Fd))
			}
		}
		if !l.exited && pidfdExited(l.fds) {
			l.mainExited()
			continue
		}
		if l.efd >= 0 && l.ctxErr == nil && l.ctx.Err() != nil {
			l.ctxErr = l.ctx.Err()
			l.tr.kill()
		}
	}
	if !l.exited {
		// Only a failed poll leaves the loop early.
		l.tr.kill()
		l.waitErr = l.tr.reap(l.cmd)
		l.goneErr = l.tr.waitGone(KillTimeout)
	}
}

// next decides, at now, whether the loop goes on and how long its next
// poll may block, in milliseconds (-1: until something happens). It kills
// the tree when the timeout has passed. Once the command exited the loop
// ends with its output, or when the grace for it is over: a process
// outside the tree holds a pipe (it was handed the descriptor somehow).
func (l *loop) next(now time.Time) (wait int, more bool) {
	if l.exited {
		if l.open() == 0 || !now.Before(l.graceEnd) {
			return 0, false
		}
		return ceilMillis(l.graceEnd.Sub(now)), true
	}
	if l.timedOut || l.ctxErr != nil {
		return -1, true // killed: wait for the exit
	}
	if !now.Before(l.deadline) {
		l.timedOut = true
		l.tr.kill()
		return -1, true
	}
	return ceilMillis(l.deadline.Sub(now)), true
}

// ceilMillis is d in whole milliseconds, rounded up.
func ceilMillis(d time.Duration) int { return int((d + time.Millisecond - 1) / time.Millisecond) }

// open counts the streams not yet at their end.
func (l *loop) open() int {
	n := 0
	for _, st := range l.streams {
		if st.fd >= 0 {
			n++
		}
	}
	return n
}

// pollSet fills l.fds with what the next poll waits for: the pidfd
// (first) until the command exited, the eventfd until the context is done,
// and then the open streams, whose first index it returns.
func (l *loop) pollSet() (first int) {
	l.fds = l.fds[:0]
	if !l.exited {
		l.fds = append(l.fds, unix.PollFd{Fd: int32(l.pidfd), Events: unix.POLLIN})
	}
	if l.efd >= 0 && l.ctxErr == nil && !l.exited {
		l.fds = append(l.fds, unix.PollFd{Fd: int32(l.efd), Events: unix.POLLIN})
	}
	first = len(l.fds)
	for _, st := range l.streams {
		if st.fd >= 0 {
			l.fds = append(l.fds, unix.PollFd{Fd: int32(st.fd), Events: unix.POLLIN})
		}
	}
	return first
}

// drain reads the stream whose read end is fd until it would block, and
// closes it at its end.
func (l *loop) drain(fd int) {
	for _, st := range l.streams {
		for st.fd == fd && st.fd >= 0 {
			n, err := unix.Read(st.fd, l.buf)
			if n > 0 {
				_, _ = st.buf.Write(l.buf[:n])
				continue
			}
			if err == unix.EINTR {
				continue
			}
			if err == unix.EAGAIN {
				return
			}
			unix.Close(st.fd) // end of file, or an error: nothing more to read
			st.fd = -1
		}
	}
}

// mainExited handles the exit of the command's main process. It is a
// zombie now: its process group cannot be reused until it is reaped, so
// killing the rest of the tree by group is safe. Background children die
// with it. The output then has [PipeGrace] to end.
func (l *loop) mainExited() {
	l.exited = true
	l.tr.kill()
	l.waitErr = l.tr.reap(l.cmd)
	l.goneErr = l.tr.waitGone(KillTimeout)
	l.graceEnd = time.Now().Add(PipeGrace)
}

// pidfdExited reports whether the pidfd, first in fds, became readable.
func pidfdExited(fds []unix.PollFd) bool {
	return len(fds) > 0 && fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0
}
