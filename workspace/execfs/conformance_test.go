package execfs_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/execfs"
	"github.com/paigasus/helikon/workspace/workspacetest"
)

// hostWorkspace is a workspace whose files are an execfs.FS over a local
// runner and whose commands run on the host backend in the same
// directory: what a remote engine builds, with this machine standing in
// for the container.
type hostWorkspace struct {
	*execfs.FS
	b      *host.Backend
	dir    string
	closed *atomic.Bool
}

func (w *hostWorkspace) Dir() string { return w.FS.Dir() }

func (w *hostWorkspace) Run(ctx context.Context, req *backend.Request) (*backend.Result, error) {
	if w.closed.Load() {
		return nil, workspace.ErrGone
	}
	return w.b.Run(ctx, req)
}

func (w *hostWorkspace) Guarantees() backend.Guarantees { return w.b.Guarantees() }

func (w *hostWorkspace) Info() workspace.Info {
	return workspace.Info{ID: w.dir, Engine: "execfs-test", Session: "conformance"}
}

func (w *hostWorkspace) Close(context.Context) error {
	w.closed.Store(true)
	return nil
}

// goneRunner answers ErrGone once its workspace is closed, as an engine's
// runner does once the container is removed.
type goneRunner struct {
	execfs.Runner
	closed *atomic.Bool
}

func (r goneRunner) Exec(ctx context.Context, argv []string, stdin []byte, maxStdout int64) ([]byte, []byte, int, error) {
	if r.closed.Load() {
		return nil, nil, 0, workspace.ErrGone
	}
	return r.Runner.Exec(ctx, argv, stdin, maxStdout)
}

// The conformance suite of package workspacetest, in every shell world.
func TestConformance(t *testing.T) {
	for _, sh := range shells(t) {
		t.Run(sh.name, func(t *testing.T) {
			workspacetest.Run(t, func(t *testing.T) workspace.Workspace {
				dir := t.TempDir()
				closed := new(atomic.Bool)
				f, err := execfs.New(t.Context(), goneRunner{sh.r, closed}, dir, &sh.opts)
				if err != nil {
					t.Fatal(err)
				}
				b, err := host.New(dir, nil)
				if err != nil {
					t.Fatal(err)
				}
				return &hostWorkspace{FS: f, b: b, dir: dir, closed: closed}
			}, &workspacetest.Options{Engine: "execfs-test", Session: "conformance"})
		})
	}
}
