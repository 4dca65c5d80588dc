//go:build !unix

package proc

import (
	"io"
	"syscall"
)

// setTerminal does nothing: there are no terminals to control here.
func setTerminal(*syscall.SysProcAttr, io.Reader) {}
