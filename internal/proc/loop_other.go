//go:build !linux

package proc

import (
	"context"
	"os/exec"
	"time"

	"github.com/paigasus/helikon/backend"
)

// loopSupported reports false: runLoop is Linux only.
func loopSupported(*Spec, *tracker) bool { return false }

func runLoop(context.Context, *Spec, *tracker, *exec.Cmd, time.Duration, int64) (*backend.Result, error) {
	panic("unreachable")
}
