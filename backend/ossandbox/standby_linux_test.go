package ossandbox

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
)

// standbyRequest is one command of the standby tests: the tmpfs size and the
// process cap it asks for.
type standbyRequest struct{ size, procs int64 }

// checkStandbys runs reqs on b one after the other, from the third on
// through threads confined ahead, and checks that every command still gets
// an empty temporary directory, pid 1 of a pid namespace of its own and a
// tmpfs of the size it asks for; it returns each command's pids cgroup
// (empty where there is none).
func checkStandbys(t *testing.T, b *Backend, reqs []standbyRequest) []string {
	t.Helper()
	var cgroups []string
	for i, r := range reqs {
		res, err := b.Run(context.Background(), &backend.Request{
			Command: `ls -A "$TMPDIR" | wc -l; touch "$TMPDIR/left"; echo $$; stat -f -c '%b %S' "$TMPDIR"; ` +
				`echo "cg=$(grep '^[0-9]*:pids:' /proc/self/cgroup | cut -d: -f3)"`,
			Limits: &backend.ResourceLimits{FileSize: r.size, Processes: r.procs},
		})
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(string(res.Stdout))
		if len(f) != 5 {
			t.Fatalf("command %d: %q, stderr %q", i, res.Stdout, res.Stderr)
		}
		blocks, _ := strconv.ParseInt(f[2], 10, 64)
		bsize, _ := strconv.ParseInt(f[3], 10, 64)
		if f[0] != "0" || f[1] != "1" || blocks*bsize != r.size {
			t.Errorf("command %d (tmpfs of %d bytes): %s entries left in its temporary directory, pid %s, a tmpfs of %d bytes; want 0, pid 1 and %d bytes",
				i, r.size, f[0], f[1], blocks*bsize, r.size)
		}
		cgroups = append(cgroups, strings.TrimPrefix(f[4], "cg="))
	}
	return cgroups
}

// TestStandbyServesOneCommand: the launcher confines the next command's
// thread ahead of it; every command still gets a temporary directory and a
// pid namespace of its own, and a tmpfs of the size its request asks for,
// also when consecutive requests ask for different sizes.
func TestStandbyServesOneCommand(t *testing.T) {
	b := serverBackend(t)
	checkStandbys(t, b, []standbyRequest{{4 << 20, 0}, {4 << 20, 0}, {4 << 20, 0}, {8 << 20, 0}, {8 << 20, 0}, {4 << 20, 0}})
}

// TestRootStandbyServesOneCommand: a root caller's backend does the same in
// its own process, and each command also gets a pids cgroup of its own (not
// readable from inside: its cap is held by the standby's key, with the
// tmpfs size), also when consecutive requests ask for different ones.
func TestRootStandbyServesOneCommand(t *testing.T) {
	b, _ := tmpfsBackend(t, Options{})
	if !b.privileged {
		t.Skip("root callers only (the launcher's standby: TestStandbyServesOneCommand)")
	}
	t.Cleanup(func() { b.Close() })
	cgroups := checkStandbys(t, b, []standbyRequest{{4 << 20, 50}, {4 << 20, 50}, {4 << 20, 50}, {8 << 20, 50}, {8 << 20, 60}, {4 << 20, 50}, {4 << 20, 50}})
	if b.pids != "" {
		seen := map[string]bool{}
		for i, cg := range cgroups {
			if cg == "/" || seen[cg] {
				t.Errorf("command %d ran in pids cgroup %q, not one of its own (all: %q)", i, cg, cgroups)
			}
			seen[cg] = true
		}
	}
	if b.standby.Current() == nil {
		t.Error("no standby was prepared after the commands")
	}
}

// TestRootStandbyLetGoWithoutStart: a standby taken by a command that never
// starts (its context already cancelled) lets its thread go instead of
// waiting for it.
func TestRootStandbyLetGoWithoutStart(t *testing.T) {
	b, _ := tmpfsBackend(t, Options{})
	if !b.privileged {
		t.Skip("root callers only")
	}
	t.Cleanup(func() { b.Close() })
	for range 2 {
		runOK(t, b, "true")
	}
	tid := standbyThread(t, b, "after two commands")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Run(ctx, &backend.Request{Command: "true"}); err == nil {
		t.Fatal("a command with a cancelled context ran")
	}
	waitThreadGone(t, tid, "the standby taken by a command that never started")
}

// standbyThread returns the thread of b's standby, failing t unless there
// is one (when, says when), confined and registered as a worker's.
func standbyThread(t *testing.T, b *Backend, when string) int {
	t.Helper()
	w := b.standby.Current()
	if w == nil {
		t.Fatal("no standby " + when)
	}
	if err := w.Confined(); err != nil {
		t.Fatalf("the standby's confinement (%s) failed: %v", when, err)
	}
	tid := w.Tid()
	if tid == 0 || !launcher.IsWorkerThread(tid) {
		t.Fatalf("the standby's thread %d (%s) is not registered", tid, when)
	}
	return tid
}

// waitThreadGone fails t unless the worker thread tid is gone within 5 s.
func waitThreadGone(t *testing.T, tid int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for launcher.IsWorkerThread(tid) {
		if time.Now().After(deadline) {
			t.Fatal(what + " still waits 5 s later")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestRootProbeServesFirstCommand: a root caller's backend confines its
// first command's thread in New, as its probe, and a command asking for no
// limits of its own takes it: one confinement, not two, for a program that
// runs one command (helikon exec). That command still gets an empty
// temporary directory, pid 1 of a pid namespace of its own and a pids
// cgroup of its own.
func TestRootProbeServesFirstCommand(t *testing.T) {
	b, _ := tmpfsBackend(t, Options{})
	if !b.privileged {
		t.Skip("root callers only")
	}
	t.Cleanup(func() { b.Close() })
	tid := standbyThread(t, b, "after New")
	res, err := b.Run(context.Background(), &backend.Request{
		Command: `echo $$; ls -A "$TMPDIR" | wc -l; echo "cg=$(grep '^[0-9]*:pids:' /proc/self/cgroup | cut -d: -f3)"`,
	})
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(res.Stdout))
	if len(f) != 3 || f[0] != "1" || f[1] != "0" {
		t.Fatalf("the first command: %q (stderr %q); want pid 1 and an empty temporary directory", res.Stdout, res.Stderr)
	}
	if b.pids != "" && (f[2] == "cg=" || f[2] == "cg=/") {
		t.Errorf("the first command ran in pids cgroup %q, not one of its own", f[2])
	}
	if b.standby.Current() != nil {
		t.Fatal("the first command did not take the thread New confined for it")
	}
	waitThreadGone(t, tid, "the thread New confined, after the first command,")
}
