//go:build !linux

package prelaunch

import "syscall"

// Spawn returns [ErrUnsupported]: the launcher runs on Linux only.
func Spawn(string, bool) (*Process, error) { return nil, ErrUnsupported }

// Signal returns [ErrUnsupported]: no launcher starts here.
func (p *Process) Signal(syscall.Signal) error { return ErrUnsupported }

// Wait returns [ErrUnsupported]: no launcher starts here.
func (p *Process) Wait() (syscall.WaitStatus, error) { return 0, ErrUnsupported }
