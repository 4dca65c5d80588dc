//go:build !linux

package proc

import "os/exec"

// startLimited is Linux only: elsewhere a direct start is refused and the
// command runs through the shell.
func startLimited(*exec.Cmd, []rlimit) error { return ErrNoDirectStart }
