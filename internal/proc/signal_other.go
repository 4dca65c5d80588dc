//go:build unix && !linux

package proc

// signalGroup is pid: the reaper is Linux's.
func signalGroup(pid int) int { return pid }
