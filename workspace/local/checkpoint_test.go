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
func newCkWorkspace(t testing.TB, name string, opts *local.CheckpointOptions) (*local.Workspace, string) {
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

func TestCheckpointStoreBounds(t *testing.T) {
	ws, store := newCkWorkspace(t, "host", &local.CheckpointOptions{MaxCheckpoints: 2, MaxBytes: 1000})
	write := func(name, data string) {
		if err := os.WriteFile(filepath.Join(ws.Dir(), name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	for i, data := range []string{"one", "two", "three"} {
		write("f", data)
		c, err := ws.Checkpoint(t.Context(), data)
		if err != nil {
			t.Fatalf("checkpoint %d: %v", i, err)
		}
		ids = append(ids, c.ID)
	}
	list, err := ws.Checkpoints(t.Context())
	if err != nil || len(list) != 2 || list[0].ID != ids[1] {
		t.Fatalf("with MaxCheckpoints 2 the store keeps %+v (%v), want the last two", list, err)
	}
	objects := 0
	filepath.WalkDir(filepath.Join(store, "objects"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			objects++
		}
		return nil
	})
	if objects != 2 {
		t.Errorf("the store holds %d objects, want 2: the dropped checkpoint's content is not removed", objects)
	}
	write("big", string(make([]byte, 2000)))
	_, err = ws.Checkpoint(t.Context(), "big")
	if !errors.Is(err, workspace.ErrCheckpointLimit) {
		t.Fatalf("a checkpoint beyond MaxBytes: %v, want ErrCheckpointLimit", err)
	}
	if list2, _ := ws.Checkpoints(t.Context()); len(list2) != 2 {
		t.Fatalf("a refused checkpoint was kept: %+v", list2)
	}
}

// A process holding a file open while a restore replaces it keeps the
// old file; the tree gets the checkpoint's.
func TestRestoreReplacesFilesHeldOpen(t *testing.T) {
	ws, _ := newCkWorkspace(t, "host", nil)
	p := filepath.Join(ws.Dir(), "log")
	os.WriteFile(p, []byte("checkpointed\n"), 0o644)
	c, err := ws.Checkpoint(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString("later\n")
	if err := ws.Restore(t.Context(), c.ID); err != nil {
		t.Fatal(err)
	}
	f.WriteString("after the restore\n")
	if b, _ := os.ReadFile(p); string(b) != "checkpointed\n" {
		t.Fatalf("after the restore the file holds %q", b)
	}
}

// A sandboxed command can neither read nor change the checkpoint store in
// the user's home directory (its default place).
func TestSandboxedCommandsCannotReachTheStore(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	if err := os.MkdirAll(filepath.Join(home, ".cache"), 0o755); err != nil {
		t.Skip(err)
	}
	store, err := os.MkdirTemp(filepath.Join(home, ".cache"), "helikon-ckpt-test-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(store) })
	ws, _ := newCkWorkspace(t, "ossandbox", &local.CheckpointOptions{Dir: store})
	os.WriteFile(filepath.Join(ws.Dir(), "f"), []byte("recorded"), 0o644)
	c, err := ws.Checkpoint(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(store, "manifests", c.ID+".jsonl")
	for _, cmd := range []string{"cat " + manifest, "echo x >> " + manifest, "rm -f " + manifest, "ls " + store} {
		res, err := ws.Run(t.Context(), &backend.Request{Command: cmd})
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode != nil && *res.ExitCode == 0 {
			t.Errorf("a sandboxed command reached the store: %q succeeded (%s)", cmd, res.Stdout)
		}
	}
	if err := ws.Restore(t.Context(), c.ID); err != nil {
		t.Fatalf("the store was changed: %v", err)
	}
}
