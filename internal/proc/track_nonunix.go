//go:build !unix

package proc

import (
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/paigasus/helikon/backend"
)

// On systems without Unix process groups, Run cannot kill a process tree and
// refuses to run anything: every tracking mode is unavailable.
type tracker struct {
	mode   Tracking
	status *exitStatus
}

// Available reports that no tracking is available on this system.
func Available() (Tracking, string) {
	return TrackGroup, "unavailable: process trees can only be tracked on Unix systems"
}

func newTracker(Tracking) (*tracker, error) {
	return nil, fmt.Errorf("proc: %w: process trees can only be tracked and killed on Unix systems", backend.ErrUnavailable)
}

func hardLimit(resource) (uint64, bool) { return 0, false }

func setSession(*syscall.SysProcAttr) {}

func (t *tracker) command([]string) (*exec.Cmd, error) { return nil, backend.ErrUnavailable }
func (t *tracker) prepare(*exec.Cmd) error             { return backend.ErrUnavailable }
func (t *tracker) started(int)                         {}
func (t *tracker) kill()                               {}
func (t *tracker) close()                              {}
func (t *tracker) waitGone(time.Duration) error        { return nil }
func (t *tracker) waitExit(cmd *exec.Cmd)              { _ = cmd.Wait() }
func (t *tracker) reap(*exec.Cmd) error                { return nil }

func (t *tracker) cannotStart(error) bool { return false }
