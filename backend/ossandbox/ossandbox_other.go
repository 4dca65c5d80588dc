//go:build !linux && !darwin

package ossandbox

import (
	"context"
	"fmt"
	"runtime"

	"github.com/paigasus/helikon/backend"
)

// Backend is the OS-sandbox backend. On this platform it cannot be built.
type Backend struct{}

var _ backend.Backend = (*Backend)(nil)

// New fails: the OS sandbox exists on Linux (Landlock and seccomp) and
// macOS (Seatbelt) only. Nothing runs unconfined.
func New(root string, opts *Options) (*Backend, error) {
	return nil, fmt.Errorf("%w: the OS sandbox needs Linux or macOS (this is %s); pass --backend host to run without containment", backend.ErrUnavailable, runtime.GOOS)
}

// Run fails; a Backend cannot be built on this platform.
func (b *Backend) Run(context.Context, *backend.Request) (*backend.Result, error) {
	return nil, fmt.Errorf("%w: the OS sandbox needs Linux or macOS", backend.ErrUnavailable)
}

// Guarantees reports no containment; a Backend cannot be built here.
func (b *Backend) Guarantees() backend.Guarantees {
	return backend.Guarantees{Label: "os-sandbox (unavailable on " + runtime.GOOS + ")"}
}

// Probe reports that the OS sandbox is unavailable on this platform.
func Probe() Support {
	return Support{OS: runtime.GOOS, Reason: "the OS sandbox needs Linux or macOS"}
}

// Launcher is the unprivileged launcher started ahead of its backend
// (Linux only; see [StartLauncher]).
type Launcher struct{}

// StartLauncher returns a launcher no backend uses: there is no OS
// sandbox on this platform.
func StartLauncher(string) *Launcher { return &Launcher{} }

// Close does nothing.
func (*Launcher) Close() error { return nil }

// Close releases what the backend holds; here it holds nothing between
// commands (no session home, launcher or network namespace), so it does
// nothing. It is here so that code closing a backend builds everywhere.
func (*Backend) Close() error { return nil }
