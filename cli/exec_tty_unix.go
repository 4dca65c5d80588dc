//go:build unix

package cli

import (
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/paigasus/helikon/backend"
)

// followSize resizes p's terminal to in's at every SIGWINCH until stop is
// called.
func followSize(in *os.File, p backend.Process) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGWINCH)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ch:
				if cols, rows, err := term.GetSize(int(in.Fd())); err == nil && rows > 0 && cols > 0 {
					_ = p.Resize(backend.TermSize{Rows: uint16(min(rows, 0xffff)), Cols: uint16(min(cols, 0xffff))})
				}
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
