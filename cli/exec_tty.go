package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/paigasus/helikon/backend"
)

// defaultTermSize is the terminal's size when this process's standard
// input is no terminal whose size it could read.
var defaultTermSize = backend.TermSize{Rows: 24, Cols: 80}

// RunOnTerminal runs req on a new pseudo-terminal through b (which must be
// a [backend.Starter]; the error wraps [backend.ErrNoProcesses] otherwise)
// for at most lifetime: env.Stdin is typed into the terminal (put in raw
// mode for the time, when it is one, so that keys such as Ctrl-C reach the
// program rather than helikon), and what the terminal shows is written to
// env.Stdout as it comes. The terminal has the size of env.Stdin's and
// follows its changes (SIGWINCH), or 24×80. A stdin that ends types end of
// file (Ctrl-D). The result is the program's, as Run's would be.
func RunOnTerminal(ctx context.Context, env *Env, b backend.Backend, req *backend.Request, lifetime time.Duration) (*backend.Result, error) {
	size := defaultTermSize
	in, _ := env.Stdin.(*os.File)
	isTerm := in != nil && term.IsTerminal(int(in.Fd()))
	if isTerm {
		if cols, rows, err := term.GetSize(int(in.Fd())); err == nil && rows > 0 && cols > 0 {
			size = backend.TermSize{Rows: uint16(min(rows, 0xffff)), Cols: uint16(min(cols, 0xffff))}
		}
	}
	r := *req
	r.Stdin, r.Stdout, r.Stderr = nil, nil, nil
	p, err := backend.Start(ctx, b, &backend.StartRequest{Request: r, Lifetime: lifetime, TTY: &size})
	if err != nil {
		return nil, err
	}
	defer func() {
		_ = p.Signal(os.Kill)
		<-p.Done()
	}()
	if isTerm {
		state, err := term.MakeRaw(int(in.Fd()))
		if err != nil {
			return nil, fmt.Errorf("put this terminal in raw mode: %w", err)
		}
		defer term.Restore(int(in.Fd()), state)
		stop := followSize(in, p)
		defer stop()
	}
	if env.Stdin != nil {
		// This copy may outlive the program, blocked on a read of a
		// stdin that never ends: it ends with this process.
		go func() {
			_, _ = io.Copy(p.Input(), env.Stdin)
			_ = p.Input().Close()
		}()
	}
	var cursor int64
	for {
		c, err := p.Output().Wait(ctx, cursor, 0)
		if len(c.Data) > 0 {
			if _, werr := env.Stdout.Write(c.Data); werr != nil {
				return nil, fmt.Errorf("write the terminal's output: %w", werr)
			}
		}
		cursor = c.Next
		if err != nil {
			return nil, err
		}
		if c.Closed && c.Next == c.Total {
			break
		}
	}
	res, err := p.Wait(ctx)
	if err != nil && res == nil {
		return nil, err
	}
	if errors.Is(err, context.Canceled) && ctx.Err() == nil {
		err = nil
	}
	return res, err
}
