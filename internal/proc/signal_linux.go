package proc

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/paigasus/helikon/internal/proc/reaper"
)

// signalGroup returns the process group a signal for the process led by
// pid goes to: pid's own, or, when pid is the reaper (the host backend's
// tracking for callers without cgroups), the group of the command the
// reaper started, which runs in a group of its own: the reaper's group
// holds only the reaper, which ends the whole tree on SIGINT, SIGTERM and
// SIGHUP. The command is the reaper's oldest child (orphans re-parented to
// the reaper come later). Read from /proc; any failure falls back to pid.
func signalGroup(pid int) int {
	self := "/proc/" + strconv.Itoa(pid)
	b, err := os.ReadFile(self + "/cmdline")
	if err != nil || !bytes.HasPrefix(b, []byte(reaper.Arg0+"\x00")) {
		return pid
	}
	tasks, _ := filepath.Glob(self + "/task/*/children")
	best, bestStart := 0, int64(-1)
	for _, f := range tasks {
		kids, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, k := range strings.Fields(string(kids)) {
			child, err := strconv.Atoi(k)
			if err != nil {
				continue
			}
			st, err := os.ReadFile("/proc/" + k + "/stat")
			if err != nil {
				continue
			}
			i := bytes.LastIndexByte(st, ')')
			if i < 0 {
				continue
			}
			// After "pid (comm) ": state ppid pgrp ... starttime (field 22).
			fields := strings.Fields(string(st[i+1:]))
			if len(fields) < 20 {
				continue
			}
			start, _ := strconv.ParseInt(fields[19], 10, 64)
			if bestStart < 0 || start < bestStart {
				best, bestStart = child, start
			}
		}
	}
	if best == 0 {
		return pid
	}
	return best
}
