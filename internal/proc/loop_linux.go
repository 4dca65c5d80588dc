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
	if s.Start != nil || tr.mode == TrackReaper {
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

// runLoop is Run for the common case on Linux, done by the calling
// goroutine alone: one poll(2) waits for the command's exit (its pidfd),
// its output, the timeout and the context at once. Run's other path spends
// a goroutine per stream and one for the exit, and each hand-off between
// them is a wake-up that a loaded machine delays; for a short command they
// were a fifth of the round trip. The guarantees are Run's: what differs is
// only who waits.
func runLoop(ctx context.Context, s *Spec, tr *tracker, cmd *exec.Cmd, timeout time.Duration, outCap int64) (res *backend.Result, err error) {
	var streams []*loopStream
	var writeEnds []*os.File
	defer func() {
		for _, st := range streams {
			if st.fd >= 0 {
				unix.Close(st.fd)
			}
		}
		for _, f := range writeEnds {
			f.Close()
		}
	}()
	stream := func(w any, dst *io.Writer) (*loopStream, error) {
		if f, ok := w.(*os.File); ok {
			*dst = f
			return nil, nil
		}
		var p [2]int
		if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			return nil, fmt.Errorf("proc: output pipe: %w", err)
		}
		st := &loopStream{fd: p[0], buf: backend.NewCappedBuffer(outCap)}
		streams = append(streams, st)
		// A blocking descriptor: os.NewFile leaves it out of the
		// runtime's poller, and the command writes to it as to any pipe.
		wf := os.NewFile(uintptr(p[1]), "|1")
		writeEnds = append(writeEnds, wf)
		*dst = wf
		if err := unix.SetNonblock(p[0], true); err != nil {
			return nil, fmt.Errorf("proc: output pipe: %w", err)
		}
		return st, nil
	}
	outS, err := stream(s.Stdout, &cmd.Stdout)
	if err != nil {
		return nil, err
	}
	errS, err := stream(s.Stderr, &cmd.Stderr)
	if err != nil {
		return nil, err
	}
	if err := prepare(s, tr, cmd); err != nil {
		return nil, err
	}
	pidfd := -1
	cmd.SysProcAttr.PidFD = &pidfd
	begin := time.Now()
	err = startCommand(s, cmd)
	for _, f := range writeEnds {
		f.Close()
	}
	writeEnds = nil
	if err != nil && pidfd >= 0 {
		unix.Close(pidfd) // the clone succeeded, and startLimited reaped it
	}
	if err != nil {
		if startFailed(s, tr, err) != nil {
			for _, st := range streams {
				unix.Close(st.fd)
				st.fd = -1
			}
			return Run(ctx, s)
		}
		return nil, &StartError{Program: s.Argv[0], Err: err}
	}
	if pidfd < 0 {
		// No pidfd (a kernel before 5.3 would have failed the clone3):
		// wait on the pid instead, still in this goroutine.
		return nil, fmt.Errorf("proc: no pidfd for pid %d", cmd.Process.Pid)
	}
	defer unix.Close(pidfd)
	tr.started(cmd.Process.Pid)

	// Cancellation wakes the poll through an eventfd.
	efd := -1
	if ctx.Done() != nil {
		efd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			tr.kill()
			_ = cmd.Wait()
			_ = tr.waitGone(KillTimeout)
			return nil, fmt.Errorf("proc: eventfd: %w", err)
		}
		fired := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			defer close(fired)
			var one [8]byte
			binary.NativeEndian.PutUint64(one[:], 1)
			_, _ = unix.Write(efd, one[:])
		})
		defer func() {
			if !stop() {
				<-fired // it runs or ran: let it finish before efd is closed
			}
			unix.Close(efd)
		}()
	}

	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	drain := func(st *loopStream) {
		for st.fd >= 0 {
			n, err := unix.Read(st.fd, buf)
			if n > 0 {
				_, _ = st.buf.Write(buf[:n])
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

	deadline := begin.Add(timeout)
	var (
		timedOut, exited         bool
		ctxErr, waitErr, goneErr error
		graceEnd                 time.Time
		fds                      = make([]unix.PollFd, 0, 4)
	)
	for {
		open := 0
		for _, st := range streams {
			if st.fd >= 0 {
				open++
			}
		}
		if exited && open == 0 {
			break
		}
		now := time.Now()
		wait := -1 // milliseconds; -1 blocks
		switch {
		case exited:
			if !now.Before(graceEnd) {
				// A process outside the tree holds a pipe (it was
				// handed the descriptor somehow); stop reading.
				break
			}
			wait = int((graceEnd.Sub(now) + time.Millisecond - 1) / time.Millisecond)
		case !timedOut && ctxErr == nil:
			if !now.Before(deadline) {
				timedOut = true
				tr.kill()
				continue
			}
			wait = int((deadline.Sub(now) + time.Millisecond - 1) / time.Millisecond)
		}
		if exited && !now.Before(graceEnd) {
			break
		}
		fds = fds[:0]
		if !exited {
			fds = append(fds, unix.PollFd{Fd: int32(pidfd), Events: unix.POLLIN})
		}
		if efd >= 0 && ctxErr == nil && !exited {
			fds = append(fds, unix.PollFd{Fd: int32(efd), Events: unix.POLLIN})
		}
		first := len(fds) // the streams' entries follow
		for _, st := range streams {
			if st.fd >= 0 {
				fds = append(fds, unix.PollFd{Fd: int32(st.fd), Events: unix.POLLIN})
			}
		}
		if _, err := unix.Poll(fds, wait); err != nil && !errors.Is(err, unix.EINTR) {
			// poll fails only for a bad set (EFAULT, EINVAL, ENOMEM):
			// kill the tree and collect what there is.
			ctxErr = fmt.Errorf("proc: poll: %w", err)
			tr.kill()
			break
		}
		for _, pfd := range fds[first:] {
			if pfd.Revents != 0 {
				for _, st := range streams {
					if st.fd == int(pfd.Fd) {
						drain(st)
					}
				}
			}
		}
		if !exited && pidfdExited(fds) {
			// The main process is a zombie now: its process group
			// cannot be reused until it is reaped, so killing the rest
			// of the tree by group is safe. Background children die
			// with it.
			exited = true
			tr.kill()
			waitErr = tr.reap(cmd)
			goneErr = tr.waitGone(KillTimeout)
			graceEnd = time.Now().Add(PipeGrace)
			continue
		}
		if efd >= 0 && ctxErr == nil && ctx.Err() != nil {
			ctxErr = ctx.Err()
			tr.kill()
		}
	}
	if !exited {
		// Only a failed poll leaves the loop early.
		tr.kill()
		waitErr = tr.reap(cmd)
		goneErr = tr.waitGone(KillTimeout)
	}
	var outBuf, errBuf *backend.CappedBuffer
	if outS != nil {
		outBuf = outS.buf
	}
	if errS != nil {
		errBuf = errS.buf
	}
	return result(tr, cmd, waitErr, goneErr, ctxErr, timedOut, outBuf, errBuf, begin)
}

// pidfdExited reports whether the pidfd, first in fds, became readable.
func pidfdExited(fds []unix.PollFd) bool {
	return len(fds) > 0 && fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) != 0
}
