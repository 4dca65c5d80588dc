//go:build unix

package proc

import (
	"io"
	"os"
	"syscall"

	"golang.org/x/term"
)

// setTerminal makes the command's standard input its controlling terminal
// when it is one, as a shell does for the commands it runs on a terminal:
// then Ctrl-C typed into it interrupts the command, and the command can
// read a password from it.
func setTerminal(a *syscall.SysProcAttr, stdin io.Reader) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		a.Setctty = true
		a.Ctty = 0 // the child's descriptor: its standard input
	}
}
