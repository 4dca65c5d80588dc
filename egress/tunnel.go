package egress

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// tunnelChunk is the most bytes one splice(2) run may move before the pump
// renews its deadlines and records activity (it moves what is queued on the
// socket, up to this). Large enough that the
// per-chunk bookkeeping is invisible in throughput, small enough that a busy
// direction reports activity often.
const tunnelChunk = 1 << 20

var errIdle = errors.New("tunnel idle")

// tunnel is one CONNECT tunnel between a client and an upstream.
type tunnel struct {
	client, upstream net.Conn
	once             sync.Once
}

func (t *tunnel) close() {
	t.once.Do(func() {
		t.client.Close()
		t.upstream.Close()
	})
}

// bare returns the connection under the proxy's limit wrapper, so that
// io.Copy reaches (*net.TCPConn).ReadFrom and splices.
func bare(c net.Conn) net.Conn {
	if lc, ok := c.(*limitConn); ok {
		return lc.Conn
	}
	return c
}

// run copies both directions until both have ended, one fails, or the
// tunnel is idle; then it closes both connections.
func (t *tunnel) run(idle time.Duration) {
	var last atomic.Int64
	last.Store(time.Now().UnixNano())
	client, upstream := bare(t.client), bare(t.upstream)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if pump(upstream, client, idle, &last) != nil {
			t.close()
		}
	}()
	if pump(client, upstream, idle, &last) != nil {
		t.close()
	}
	<-done
	t.close()
}

type closeWriter interface{ CloseWrite() error }

// pump copies src to dst in chunks; see tunnelChunk. A clean end of src is
// passed on as a half-close of dst. It returns errIdle when neither
// direction has moved data for idle (last is shared by both directions).
func pump(dst, src net.Conn, idle time.Duration, last *atomic.Int64) error {
	lr := &io.LimitedReader{R: src}
	for {
		deadline := time.Now().Add(idle)
		_ = src.SetReadDeadline(deadline)
		_ = dst.SetWriteDeadline(deadline)
		var n int64
		queued, err := waitReadable(src)
		if err == nil {
			lr.N = tunnelChunk
			if queued > 0 && queued < tunnelChunk {
				lr.N = queued
			}
			n, err = io.Copy(dst, lr)
		}
		if n > 0 {
			last.Store(time.Now().UnixNano())
		}
		switch {
		case err == nil && lr.N > 0: // src reached EOF before the limit
			if cw, ok := dst.(closeWriter); ok {
				_ = cw.CloseWrite()
			}
			return nil
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded):
			if time.Since(time.Unix(0, last.Load())) < idle {
				continue
			}
			return errIdle
		default:
			return err
		}
	}
}
