// Package proctest holds helpers for tests that check which processes are
// alive, such as "no process started by the call survives it".
package proctest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// PidsWith returns the pids (as named under /proc) of the live processes
// whose command line, arguments joined by spaces, contains s. Only processes
// visible in the caller's pid namespace are seen.
func PidsWith(s string) []string {
	ents, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// WaitFor polls cond until it holds and fails t if it does not within 30 s.
// The deadline is a failure timeout, not a speed check: what a test waits
// for (a process to die, a session to end) takes milliseconds.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
