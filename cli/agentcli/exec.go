package agentcli

import (
	"context"
	"maps"
	"slices"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/cli"
)

func init() { cli.RegisterWorkspaceExec(engineNames, execInWorkspace) }

// engineNames are the remote workspace engines of this binary, for
// helikon exec --backend.
func engineNames() []string { return slices.Sorted(maps.Keys(engines)) }

// execInWorkspace runs helikon exec's program in the workspace of the
// session w names (a new one when none), as the agent commands' tools do,
// and closes it (removes it unless --keep-workspace) before returning.
func execInWorkspace(ctx context.Context, env *cli.Env, w *cli.WorkspaceRun) (*backend.Result, error) {
	te := &ToolEnv{Ctx: ctx, Env: env, Root: w.Root, Common: w.Common, BackendFlags: w.Backend, Session: w.Session, wsFlags: w.Workspace, quietCreate: true}
	defer te.Close()
	ws, err := te.Workspace()
	if err != nil {
		return nil, err
	}
	if w.TTY {
		return cli.RunOnTerminal(ctx, env, ws, w.Request, cli.Lifetime(ws))
	}
	return ws.Run(ctx, w.Request)
}
