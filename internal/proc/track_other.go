//go:build unix && !linux

package proc

import (
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/paigasus/helikon/backend"
)

// tracker on Unix systems other than Linux: the session and process group
// only. A process that calls setsid escapes it.
type tracker struct {
	mode    Tracking
	pid     int
	status  *exitStatus
	waitErr error
}

// Available returns the tracking [TrackAuto] chooses on this machine and, in
// words, why a stronger one is not used.
func Available() (Tracking, string) {
	return TrackGroup, "process group only: cgroups and child subreapers are Linux features"
}

func newTracker(mode Tracking) (*tracker, error) {
	switch mode {
	case TrackAuto, TrackGroup:
		return &tracker{mode: TrackGroup}, nil
	}
	return nil, fmt.Errorf("proc: %s tracking: %w on this system", mode, backend.ErrUnavailable)
}

func (t *tracker) command(argv []string) (*exec.Cmd, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	if cmd.Err != nil {
		return nil, fmt.Errorf("proc: %w", cmd.Err)
	}
	return cmd, nil
}

func setSession(a *syscall.SysProcAttr) { a.Setsid = true }

func (t *tracker) prepare(*exec.Cmd) error { return nil }
func (t *tracker) started(pid int)         { t.pid = pid }
func (t *tracker) kill()                   { _ = syscall.Kill(-t.pid, syscall.SIGKILL) }
func (t *tracker) close()                  {}

func (t *tracker) waitGone(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for syscall.Kill(-t.pid, 0) == nil {
		if time.Now().After(deadline) {
			return fmt.Errorf("proc: process group %d still has processes: %w", t.pid, ErrSurvivors)
		}
		_ = syscall.Kill(-t.pid, syscall.SIGKILL)
		time.Sleep(5 * time.Millisecond)
	}
	return nil
}

// waitExit reaps the main process: waiting without reaping is not portable
// outside Linux, so the group is killed after the main process was reaped
// (the group survives as long as one member lives, so its id is not reused
// while there is something to kill).
func (t *tracker) waitExit(cmd *exec.Cmd) { t.waitErr = cmd.Wait() }

func (t *tracker) reap(*exec.Cmd) error { return t.waitErr }

func (t *tracker) cannotStart(error) bool { return false }
