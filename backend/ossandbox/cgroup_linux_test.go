//go:build linux

package ossandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
)

// TestCgroupsRemoved: a command's pids cgroup is gone soon after Run
// returns, and New removes those that exited programs left behind while
// keeping recent ones of live programs.
func TestCgroupsRemoved(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	if b.pids == "" {
		t.Skip("no writable cgroup v1 pids hierarchy here (or not root): commands get no pids cgroup")
	}
	res, err := b.Run(context.Background(), &backend.Request{Argv: []string{"grep", "^[0-9]*:pids:", "/proc/self/cgroup"}})
	if err != nil {
		t.Fatal(err)
	}
	// The command's own cgroup, as /proc names it: "N:pids:/helikon-…".
	name := strings.TrimSpace(string(res.Stdout))
	if _, after, ok := strings.Cut(name, ":pids:/"); !ok || !strings.HasPrefix(after, "helikon-") {
		t.Fatalf("the command's pids cgroup is %q, stderr %q; want one of its own", name, res.Stderr)
	} else {
		name = after
	}
	cg := filepath.Join(b.pids, name)
	// Removed at once, or in the background once the confining thread
	// has exited: wait for that, bounded.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(cg); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cgroup %s still exists 10 s after its command", cg)
		}
		time.Sleep(time.Millisecond)
	}

	// A program that has exited (its pid is free) left a cgroup; pid 1 and
	// this program are alive.
	dead := exec.Command("/bin/true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if unix.Kill(dead.Process.Pid, 0) != unix.ESRCH {
		t.Skip("the exited program's pid is already in use again")
	}
	stale := filepath.Join(b.pids, cgroupName(dead.Process.Pid, 7))
	live := []string{filepath.Join(b.pids, cgroupName(1, 7)), filepath.Join(b.pids, cgroupName(os.Getpid(), 1<<40))}
	for _, d := range append([]string{stale}, live...) {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		defer unix.Rmdir(d)
	}
	newTestBackend(t, Options{})
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the cgroup of an exited program survived New: %v", err)
	}
	for _, d := range live {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("the cgroup of a live program was removed: %v", err)
		}
	}
}

// TestSweepCgroupsByAge runs the sweep over a plain directory (the real
// hierarchy is shared with other programs): entries of live programs go
// once older than [staleCgroupAge] (their pid was reused), other names
// never.
func TestSweepCgroupsByAge(t *testing.T) {
	dir := t.TempDir()
	names := []string{cgroupName(1, 8), cgroupName(os.Getpid(), 9), "helikon-x-1", "other-1-1", "helikon-1-2-3"}
	for _, n := range names {
		if err := os.Mkdir(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sweepCgroupsAt(dir, time.Now())
	if ents, _ := os.ReadDir(dir); len(ents) != len(names) {
		t.Fatalf("recent entries of live programs were removed: %v left", ents)
	}
	sweepCgroupsAt(dir, time.Now().Add(staleCgroupAge+time.Second))
	var left []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if want := []string{"helikon-1-2-3", "helikon-x-1", "other-1-1"}; !slices.Equal(left, want) {
		t.Errorf("after the sweep %v are left, want %v", left, want)
	}
}
