package ossandbox

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
)

// TestRootStandbyServesOneCommand: a root caller's backend confines the
// next command's thread ahead of it; every command still gets a temporary
// directory and a pid namespace of its own, the tmpfs size its request
// asks for, and a pids cgroup of its own (not readable from inside: its
// cap is held by the standby's key, with the tmpfs size), also when
// consecutive requests ask for different ones.
func TestRootStandbyServesOneCommand(t *testing.T) {
	b, _ := tmpfsBackend(t, Options{})
	if !b.privileged {
		t.Skip("root callers only (the launcher's standby: TestStandbyServesOneCommand)")
	}
	t.Cleanup(func() { b.Close() })
	type want struct{ size, procs int64 }
	runs := []want{{4 << 20, 50}, {4 << 20, 50}, {4 << 20, 50}, {8 << 20, 50}, {8 << 20, 60}, {4 << 20, 50}, {4 << 20, 50}}
	cgroups := map[string]bool{}
	for i, w := range runs {
		res, err := b.Run(context.Background(), &backend.Request{
			Command: `ls -A "$TMPDIR" | wc -l; touch "$TMPDIR/left"; echo $$; stat -f -c '%b %S' "$TMPDIR"; ` +
				`echo "cg=$(grep '^[0-9]*:pids:' /proc/self/cgroup | cut -d: -f3)"`,
			Limits: &backend.ResourceLimits{FileSize: w.size, Processes: w.procs},
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
		if f[0] != "0" || f[1] != "1" || blocks*bsize != w.size {
			t.Errorf("command %d (tmpfs of %d bytes): %s entries left in its temporary directory, pid %s, a tmpfs of %d bytes; want 0, pid 1 and %d bytes",
				i, w.size, f[0], f[1], blocks*bsize, w.size)
		}
		if b.pids == "" {
			continue
		}
		cg := strings.TrimPrefix(f[4], "cg=")
		if cg == "/" || cgroups[cg] {
			t.Errorf("command %d ran in pids cgroup %q, not one of its own (earlier: %v)", i, cg, cgroups)
		}
		cgroups[cg] = true
	}
	b.standby.mu.Lock()
	defer b.standby.mu.Unlock()
	if b.standby.cur == nil {
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
	b.standby.mu.Lock()
	w := b.standby.cur
	b.standby.mu.Unlock()
	if w == nil {
		t.Fatal("no standby after two commands")
	}
	if w.confined() != nil {
		t.Fatalf("the standby's confinement failed: %v", w.confined())
	}
	tid := int(w.tid.Load())
	if _, ok := standbyThreads.Load(tid); !ok || tid == 0 {
		t.Fatalf("the standby's thread %d is not registered", tid)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Run(ctx, &backend.Request{Command: "true"}); err == nil {
		t.Fatal("a command with a cancelled context ran")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, ok := standbyThreads.Load(tid); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the standby taken by a command that never started still waits 5 s later")
		}
		time.Sleep(time.Millisecond)
	}
}
