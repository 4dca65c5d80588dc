//go:build !linux

package host

import (
	"context"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/proc"
)

// envCache is used by the direct path, which is Linux only.
type envCache struct{}

// runDirect never runs anything here: the direct path needs Linux (see
// direct_linux.go), and every command runs through the shell.
func (b *Backend) runDirect(context.Context, *backend.Request, *proc.Spec, backend.ResourceLimits) (*backend.Result, error, bool) {
	return nil, nil, false
}
