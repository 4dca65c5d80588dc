//go:build !unix

package proc

import (
	"context"
	"fmt"
	"time"

	"github.com/paigasus/helikon/backend"
)

// Job is how a local backend runs one command for StartProcess.
type Job struct {
	Timeout time.Duration
	Started func(pid int)
}

// RunFunc runs req to its end as a backend's Run does.
type RunFunc func(ctx context.Context, req *backend.Request, j Job) (*backend.Result, error)

// StartProcess is not available on this system.
func StartProcess(context.Context, *backend.StartRequest, RunFunc) (backend.Process, error) {
	return nil, fmt.Errorf("proc: %w", backend.ErrNoProcesses)
}
