package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
	"github.com/paigasus/helikon/workspace/workspacetest"
)

// newCkWorkspace returns a workspace of a new directory with the backend
// called name, its checkpoint store in another new directory (returned).
func newCkWorkspace(t *testing.T, name string, opts *local.CheckpointOptions) (*local.Workspace, string) {
	t.Helper()
	dir := t.TempDir()
	b, err := backends[name](dir)
	if err != nil {
		t.Skipf("%s: %v", name, err)
	}
	o := local.CheckpointOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	e, err := local.NewWithOptions(dir, b, &local.Options{Checkpoints: o})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := e.Create(t.Context(), "ckpt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close(context.Background()) })
	return ws.(*local.Workspace), o.Dir
}

func TestCheckpointerConformance(t *testing.T) {
	for name := range backends {
		t.Run(name, func(t *testing.T) {
			workspacetest.RunCheckpointer(t, func(t *testing.T) workspace.Workspace {
				ws, _ := newCkWorkspace(t, name, nil)
				return ws
			})
		})
	}
}

var _ backend.Backend = (*local.Workspace)(nil)

func TestCheckpointStoreInsideTheRootIsRefused(t *testing.T) {
	dir := t.TempDir()
	b, err := backends["host"](dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := local.NewWithOptions(dir, b, &local.Options{Checkpoints: local.CheckpointOptions{Dir: filepath.Join(dir, ".ckpt")}})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := e.Create(t.Context(), "s")
	if err != nil {
		t.Fatalf("a workspace must open even where it cannot checkpoint: %v", err)
	}
	defer ws.Close(t.Context())
	_, err = ws.(workspace.Checkpointer).Checkpoint(t.Context(), "")
	if !errorsIs(err, workspace.ErrOutside) {
		t.Fatalf("Checkpoint with the store inside the root: %v, want ErrOutside", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".ckpt")); err == nil {
		t.Fatal("the store was created inside the root")
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
