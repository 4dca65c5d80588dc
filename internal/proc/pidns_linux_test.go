//go:build linux

package proc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon/internal/proctest"
)

// TestPidNamespaceTracking starts the command as the init of a new pid
// namespace and checks that background processes, including ones in a new
// session, are gone when Run returns, on a normal exit, on a timeout and on
// cancellation. The control run without the namespace (same tracking mode)
// leaves them behind, so the test fails if the namespace is not what kills
// them.
func TestPidNamespaceTracking(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a pid namespace needs root")
	}
	newPID := startFunc(func(cmd *exec.Cmd) error {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWPID
		return cmd.Start()
	})
	for _, tc := range []struct {
		name    string
		tail    string
		timeout time.Duration
		cancel  bool
	}{
		{"exit", "echo started", 10 * time.Second, false},
		{"timeout", "echo started; sleep 60", 300 * time.Millisecond, false},
		{"cancel", "echo started; sleep 60", 10 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			marker := fmt.Sprintf("7%d.25", time.Now().UnixNano()%1_000_000)
			command := fmt.Sprintf("sleep %[1]s & setsid sleep %[1]s & (sleep %[1]s &); %s", marker, tc.tail)
			s := spec(t, TrackPidNamespace, command, tc.timeout)
			s.Starter = newPID
			ctx := context.Background()
			if tc.cancel {
				c, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
				defer cancel()
				ctx = c
			}
			start := time.Now()
			res, err := Run(ctx, s)
			if err != nil && !tc.cancel {
				t.Fatal(err)
			}
			if time.Since(start) > hangBound {
				t.Fatalf("Run hung for %v", time.Since(start))
			}
			if !strings.Contains(string(res.Stdout), "started") {
				t.Fatalf("command did not run: %+v", res)
			}
			if left := proctest.PidsWith(marker); len(left) > 0 {
				t.Errorf("processes outlived the command: %v", left)
			}
		})
	}
	// Control: without the namespace the same mode leaves them behind.
	marker := fmt.Sprintf("8%d.25", time.Now().UnixNano()%1_000_000)
	res, err := Run(context.Background(), spec(t, TrackPidNamespace, fmt.Sprintf("setsid sleep %s & echo started", marker), 10*time.Second))
	if err != nil || !strings.Contains(string(res.Stdout), "started") {
		t.Fatalf("control: %v %+v", err, res)
	}
	var left []string
	for deadline := time.Now().Add(5 * time.Second); len(left) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		left = proctest.PidsWith(marker) // the background process may not have started sleep yet
	}
	for _, pid := range left {
		var p int
		fmt.Sscan(pid, &p)
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	if len(left) == 0 {
		t.Error("control: a background process without the namespace did not survive; the test proves nothing")
	}
}

func TestTrackingString(t *testing.T) {
	for m, want := range map[Tracking]string{TrackAuto: "auto", TrackCgroup: "cgroup", TrackReaper: "reaper", TrackGroup: "group", TrackPidNamespace: "pid-namespace", Tracking(99): "Tracking(99)"} {
		if got := m.String(); got != want {
			t.Errorf("%d.String() = %q; want %q", int(m), got, want)
		}
	}
}
