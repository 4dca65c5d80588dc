package local_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
	"github.com/paigasus/helikon/workspace/workspacetest"
)

// backends are the command backends a local workspace is built with.
var backends = map[string]func(dir string) (backend.Backend, error){
	"host":      func(dir string) (backend.Backend, error) { return host.New(dir, nil) },
	"ossandbox": func(dir string) (backend.Backend, error) { return ossandbox.New(dir, nil) },
}

// newEngine returns a local engine on a new directory with the backend
// called name, skipping the test when that backend cannot run here.
func newEngine(t *testing.T, name string) *local.Engine {
	t.Helper()
	dir := t.TempDir()
	b, err := backends[name](dir)
	if errors.Is(err, backend.ErrUnavailable) {
		t.Skipf("%s is unavailable here: %v", name, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	e, err := local.New(dir, b)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestConformance(t *testing.T) {
	for name := range backends {
		t.Run(name, func(t *testing.T) {
			newEngine(t, name) // skip early when the backend is unavailable
			workspacetest.Run(t, func(t *testing.T) workspace.Workspace {
				ws, err := newEngine(t, name).Create(t.Context(), "conformance")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ws.Close(context.Background()) })
				return ws
			}, &workspacetest.Options{Engine: local.EngineName, Session: "conformance"})
		})
	}
}

// Locally, Create fails only while the engine holds the session open;
// Attach always finds the directory, with the files an earlier workspace of
// the session left; List reports the open ones; Remove closes and deletes
// nothing.
func TestEngineLifecycleKeepsTheDirectory(t *testing.T) {
	e := newEngine(t, "host")
	ctx := t.Context()
	ws, err := e.Create(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Create(ctx, "s1"); err == nil {
		t.Error("a second Create of an open session succeeded")
	}
	if _, err := e.Create(ctx, "bad id!"); err == nil {
		t.Error("Create accepted an invalid session id")
	}
	if _, err := ws.WriteFile(ctx, "kept.txt", []byte("kept\n")); err != nil {
		t.Fatal(err)
	}
	infos, err := e.List(ctx)
	if err != nil || len(infos) != 1 || infos[0].Session != "s1" || infos[0].Attached {
		t.Fatalf("List = %+v, %v; want the one created workspace of s1", infos, err)
	}
	if err := ws.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if infos, _ := e.List(ctx); len(infos) != 0 {
		t.Errorf("List after Close = %+v, want none", infos)
	}
	if b, err := os.ReadFile(filepath.Join(e.Dir(), "kept.txt")); err != nil || string(b) != "kept\n" {
		t.Errorf("after Close the project holds %q, %v; the directory must stay", b, err)
	}
	again, err := e.Attach(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !again.Info().Attached {
		t.Error("Info().Attached is false after Attach")
	}
	if _, err := again.Stat(ctx, "kept.txt"); err != nil {
		t.Errorf("the attached workspace does not see the session's file: %v", err)
	}
	if _, err := e.Create(ctx, "s2"); err != nil {
		t.Errorf("Create of another session while s1 is open: %v", err)
	}
	if err := e.Remove(ctx, again.Info().ID); err != nil {
		t.Fatal(err)
	}
	if _, err := again.Stat(ctx, "kept.txt"); !errors.Is(err, workspace.ErrGone) {
		t.Errorf("Stat after Remove: %v, want ErrGone", err)
	}
	if _, err := os.Stat(filepath.Join(e.Dir(), "kept.txt")); err != nil {
		t.Errorf("Remove deleted the project's file: %v", err)
	}
	if err := e.Remove(ctx, "no-such-id"); err != nil {
		t.Errorf("Remove of an unknown id: %v, want nil", err)
	}
}

// A backend that runs commands in another directory than the workspace's
// is refused: the file tools and the commands would disagree about where
// the files are.
func TestNewRefusesABackendOfAnotherDirectory(t *testing.T) {
	b, err := host.New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := local.New(t.TempDir(), b); err == nil {
		t.Error("New accepted a backend running commands elsewhere")
	}
	if _, err := local.New(t.TempDir(), nil); err == nil {
		t.Error("New accepted a nil backend")
	}
}

// The workspace keeps the backend's time limit visible, so that the Bash
// tool can tell the model.
func TestWorkspaceReportsTheBackendTimeout(t *testing.T) {
	ws, err := newEngine(t, "host").Create(t.Context(), "t")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close(t.Context())
	tl, ok := ws.(backend.TimeLimited)
	if !ok || tl.Timeout() != backend.DefaultTimeout {
		t.Errorf("the workspace reports no timeout or another one than the host backend's default")
	}
	if wd, ok := ws.(backend.WorkingDir); !ok || wd.Dir() != ws.Dir() {
		t.Error("the workspace is not a backend.WorkingDir of its root")
	}
}
