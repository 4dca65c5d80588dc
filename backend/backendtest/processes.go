package backendtest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
)

// ProcessOptions tunes [RunProcesses] to what a backend can do.
type ProcessOptions struct {
	// NoSignals says that the backend's processes can be killed but not
	// sent other signals ([backend.ErrUnsupported]), nor interrupted by
	// Ctrl-C typed into their terminal; the suite checks that Signal
	// says so.
	NoSignals bool
	// NoTTY skips the terminal cases.
	NoTTY bool
}

// RunProcesses runs the conformance suite of [backend.Starter] against b
// as subtests of t: output that arrives as it is written, input, exit
// status, kill, signals, the lifetime, a bounded ring that says what a
// reader missed, a terminal and its size. opts may be nil.
func RunProcesses(t *testing.T, b backend.Starter, opts *ProcessOptions) {
	t.Helper()
	if opts == nil {
		opts = &ProcessOptions{}
	}
	start := func(t *testing.T, req *backend.StartRequest) backend.Process {
		t.Helper()
		p, err := b.Start(t.Context(), req)
		if err != nil {
			t.Fatalf("Start(%q): %v", req.Command, err)
		}
		t.Cleanup(func() { _ = p.Signal(os.Kill); <-p.Done() })
		return p
	}
	// until reads p's output from cursor until it holds want, and
	// returns the cursor just after it (not after the rest of the chunk
	// it came in, which the next call reads again).
	until := func(t *testing.T, p backend.Process, cursor int64, want string) int64 {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		var seen []byte
		base := int64(-1) // the number of seen's first byte
		for {
			c, err := p.Output().Wait(ctx, cursor, 0)
			if base < 0 || c.Missed > 0 {
				seen, base = nil, c.Next-int64(len(c.Data))
			}
			seen = append(seen, c.Data...)
			cursor = c.Next
			if i := bytes.Index(seen, []byte(want)); i >= 0 {
				return base + int64(i+len(want))
			}
			if err != nil || c.Closed && c.Next == c.Total {
				t.Fatalf("output %q never held %q (err %v)", seen, want, err)
			}
		}
	}
	wait := func(t *testing.T, p backend.Process) *backend.Result {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		defer cancel()
		res, err := p.Wait(ctx)
		if err != nil {
			t.Fatalf("Wait: %v", err)
		}
		return res
	}

	t.Run("OutputAsItComesAndInput", func(t *testing.T) {
		p := start(t, &backend.StartRequest{Request: backend.Request{
			Command: `echo first; echo err >&2; read line; echo "got $line"; exit 4`}})
		// The process is blocked on its input: what it printed so far
		// must arrive before it ends.
		cur := until(t, p, 0, "first\nerr\n")
		if _, err := p.Input().Write([]byte("hello\n")); err != nil {
			t.Fatal(err)
		}
		until(t, p, cur, "got hello\n")
		res := wait(t, p)
		if res.ExitCode == nil || *res.ExitCode != 4 {
			t.Errorf("exit code %v, want 4", ptr(res.ExitCode))
		}
		if c := p.Output().Read(0, 0); !c.Closed {
			t.Errorf("output not closed after the end: %+v", c)
		}
		if err := p.Signal(os.Kill); !errors.Is(err, os.ErrProcessDone) {
			t.Errorf("Signal after the end = %v, want os.ErrProcessDone", err)
		}
	})

	t.Run("InputEndOfFile", func(t *testing.T) {
		p := start(t, &backend.StartRequest{Request: backend.Request{Command: `cat; echo done`}})
		p.Input().Write([]byte("abc"))
		p.Input().Close()
		until(t, p, 0, "abcdone\n")
		wait(t, p)
	})

	t.Run("KillEndsTheTree", func(t *testing.T) {
		p := start(t, &backend.StartRequest{Request: backend.Request{Command: `sleep 300 & echo started; wait`}})
		until(t, p, 0, "started")
		if err := p.Signal(os.Kill); err != nil {
			t.Fatal(err)
		}
		res := wait(t, p)
		if res.ExitCode != nil {
			t.Errorf("a killed process has exit code %d", *res.ExitCode)
		}
		if c := p.Output().Read(0, 0); !c.Closed {
			t.Errorf("output still open after a kill: a process of the tree survived")
		}
	})

	t.Run("Signal", func(t *testing.T) {
		p := start(t, &backend.StartRequest{Request: backend.Request{
			Command: `trap 'echo interrupted; exit 5' INT; echo ready; while :; do sleep 0.05; done`}})
		until(t, p, 0, "ready")
		if opts.NoSignals {
			if err := p.Signal(os.Interrupt); !errors.Is(err, backend.ErrUnsupported) {
				t.Errorf("Signal on a backend that only kills = %v, want ErrUnsupported", err)
			}
			return
		}
		if err := p.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		res := wait(t, p)
		if res.ExitCode == nil || *res.ExitCode != 5 {
			t.Errorf("exit code %v, want 5 from the trap", ptr(res.ExitCode))
		}
	})

	t.Run("Lifetime", func(t *testing.T) {
		p := start(t, &backend.StartRequest{Request: backend.Request{Command: `sleep 300`}, Lifetime: 300 * time.Millisecond})
		res := wait(t, p)
		if !res.TimedOut || res.ExitCode != nil {
			t.Errorf("TimedOut %v exit %v, want a timed-out process without exit code", res.TimedOut, ptr(res.ExitCode))
		}
	})

	t.Run("ContextEndKills", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		p, err := b.Start(ctx, &backend.StartRequest{Request: backend.Request{Command: `sleep 300`}})
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		select {
		case <-p.Done():
		case <-time.After(20 * time.Second):
			t.Fatal("the process outlived its context")
		}
	})

	t.Run("RingBoundsOutputAndCountsWhatWasMissed", func(t *testing.T) {
		const size, lines = 4096, 20000 // 20000 lines of 6 bytes
		p := start(t, &backend.StartRequest{Request: backend.Request{
			Command: `i=0; while [ $i -lt 20000 ]; do echo xxxxx; i=$((i+1)); done`}, RingSize: size})
		wait(t, p)
		c := p.Output().Read(0, 0)
		if c.Total != 6*lines || int64(len(c.Data)) != size || c.Missed != c.Total-size || !c.Closed {
			t.Errorf("total %d kept %d missed %d closed %v; want total %d kept %d missed %d closed",
				c.Total, len(c.Data), c.Missed, c.Closed, 6*lines, size, 6*lines-size)
		}
	})

	t.Run("NoTerminalNoResize", func(t *testing.T) {
		p := start(t, &backend.StartRequest{Request: backend.Request{Command: `test -t 0 || echo notty; sleep 300`}})
		until(t, p, 0, "notty")
		if err := p.Resize(backend.TermSize{Rows: 1, Cols: 1}); !errors.Is(err, backend.ErrNoTTY) {
			t.Errorf("Resize without a terminal = %v, want ErrNoTTY", err)
		}
	})

	t.Run("Terminal", func(t *testing.T) {
		if opts.NoTTY {
			t.Skip("no terminals")
		}
		p := start(t, &backend.StartRequest{Request: backend.Request{
			Command: `test -t 0 && test -t 1 && echo onatty; stty size; read x; stty size; exit 0`},
			TTY: &backend.TermSize{Rows: 24, Cols: 80}})
		cur := until(t, p, 0, "onatty")
		cur = until(t, p, cur, "24 80")
		if err := p.Resize(backend.TermSize{Rows: 40, Cols: 100}); err != nil {
			t.Fatal(err)
		}
		p.Input().Write([]byte("typed\n"))
		cur = until(t, p, cur, "typed") // the terminal echoes
		until(t, p, cur, "40 100")
		wait(t, p)
	})

	t.Run("TerminalInterrupt", func(t *testing.T) {
		if opts.NoTTY || opts.NoSignals {
			t.Skip("no terminals, or no signals")
		}
		p := start(t, &backend.StartRequest{Request: backend.Request{
			Command: `trap 'echo caught; exit 6' INT; echo ready; while :; do sleep 0.05; done`},
			TTY: &backend.TermSize{Rows: 24, Cols: 80}})
		until(t, p, 0, "ready")
		p.Input().Write([]byte{3}) // Ctrl-C: the terminal interrupts its foreground group
		until(t, p, 0, "caught")
		res := wait(t, p)
		if res.ExitCode == nil || *res.ExitCode != 6 {
			t.Errorf("exit code %v, want 6 from the trap", ptr(res.ExitCode))
		}
	})
}
