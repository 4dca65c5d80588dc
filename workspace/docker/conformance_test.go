package docker

import (
	"testing"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
	"github.com/paigasus/helikon/workspace/workspacetest"
)

func TestWorkspaceConformanceIsolated(t *testing.T) {
	e := newEngine(t, Options{Isolate: true})
	workspacetest.Run(t, func(t *testing.T) workspace.Workspace { return create(t, e) }, &workspacetest.Options{Remote: true, Engine: EngineName})
}

func TestWorkspaceConformanceBind(t *testing.T) {
	workspacetest.Run(t, func(t *testing.T) workspace.Workspace {
		// A root of its own per workspace: the suite wants each one empty.
		return create(t, newEngine(t, Options{Root: bindRoot(t)}))
	}, &workspacetest.Options{Engine: EngineName})
}

func TestCheckpointerConformanceIsolated(t *testing.T) {
	e := newEngine(t, Options{Isolate: true, Checkpoints: local.CheckpointOptions{Dir: t.TempDir()}})
	workspacetest.RunCheckpointer(t, func(t *testing.T) workspace.Workspace { return create(t, e) })
}

func TestCheckpointerConformanceBind(t *testing.T) {
	workspacetest.RunCheckpointer(t, func(t *testing.T) workspace.Workspace {
		return create(t, newEngine(t, Options{Root: bindRoot(t), Checkpoints: local.CheckpointOptions{Dir: t.TempDir()}}))
	})
}
