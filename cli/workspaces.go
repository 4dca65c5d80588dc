package cli

import (
	"context"
	"flag"
	"slices"

	"github.com/paigasus/helikon/backend"
)

// WorkspaceFlags are the flags of the workspace engines (--backend docker,
// forkd, and those a command registers), defined by exec and by every
// agent command that builds tools.
type WorkspaceFlags struct {
	Image   string  // --image (docker)
	Isolate bool    // --isolate (docker)
	Runtime string  // --runtime (docker)
	Memory  int64   // --memory (docker)
	CPUs    float64 // --cpus (docker)
	Keep    bool    // --keep-workspace
}

// AddWorkspaceFlags defines the workspace flags on fs.
func AddWorkspaceFlags(fs *flag.FlagSet) *WorkspaceFlags {
	w := &WorkspaceFlags{}
	fs.StringVar(&w.Image, "image", "", "--backend docker: the `IMAGE` of the session's container (present in the daemon; never pulled)")
	fs.BoolVar(&w.Isolate, "isolate", false, "--backend docker: copy --root into the container instead of bind-mounting it (the project stays untouched)")
	fs.StringVar(&w.Runtime, "runtime", "", "--backend docker: the OCI `RUNTIME` (runsc for gVisor; default the daemon's, runc)")
	SizeVar(fs, &w.Memory, "memory", 0, "--backend docker: the container's memory cap, as `SIZE` such as 2GiB (default: none)")
	fs.Float64Var(&w.CPUs, "cpus", 0, "--backend docker: the container's CPU cap in `CORES` (default: none)")
	fs.BoolVar(&w.Keep, "keep-workspace", false, "keep a remote workspace (container, microVM) at exit, for --session ID to attach to it again")
	return w
}

// AgentBackends are the workspace engines only the agent binary links (the
// Docker client, forkd's workspaces): helikon exec with one of them hands
// the command to helikon-agent (forkd only with --session or
// --keep-workspace; otherwise it is this binary's per-command backend). A
// binary that registers [RegisterWorkspaceExec] names its own.
var AgentBackends = []string{"docker", "forkd"}

// WorkspaceRun is one program for exec to run in a workspace engine's
// workspace: the parsed flags and the request with exec's standard
// streams.
type WorkspaceRun struct {
	Root      string // absolute sandbox root
	Common    *CommonFlags
	Backend   *BackendFlags // policy files' settings applied
	Workspace *WorkspaceFlags
	Session   string // --session; "" is a new workspace
	Request   *backend.Request
	TTY       bool // -t: run Request on a new terminal (see [RunOnTerminal])
}

// workspaceExec is what [RegisterWorkspaceExec] registered.
var workspaceExec struct {
	engines func() []string
	run     func(ctx context.Context, env *Env, w *WorkspaceRun) (*backend.Result, error)
}

// RegisterWorkspaceExec lets exec run programs in the workspaces of the
// engines names returns (the agent binary's docker and forkd, and those it
// was built with): run opens the session's workspace, runs the request in
// it and closes it (unless --keep-workspace). A binary without it hands
// [AgentBackends] to helikon-agent.
func RegisterWorkspaceExec(engines func() []string, run func(ctx context.Context, env *Env, w *WorkspaceRun) (*backend.Result, error)) {
	workspaceExec.engines, workspaceExec.run = engines, run
}

// workspaceBackend reports how exec runs under backend name: in a workspace
// of this binary (here), in the agent binary (agent), or neither, with a
// backend of its own. forkd is both a per-command backend and an engine:
// its workspace is taken only when a session is named or kept.
func workspaceBackend(name string, sessionOrKeep bool) (here, agent bool) {
	if _, perCommand := backendFactories[resolveAlias(backendName(name))]; perCommand && !sessionOrKeep {
		return false, false
	}
	if workspaceExec.engines != nil {
		return slices.Contains(workspaceExec.engines(), name), false
	}
	return false, slices.Contains(AgentBackends, name)
}

// remoteBackends names the backends exec can run in a workspace: the
// engines of this binary, or those of the agent binary.
func remoteBackends() []string {
	names := AgentBackends
	if workspaceExec.engines != nil {
		names = workspaceExec.engines()
	}
	return slices.Sorted(slices.Values(names))
}

// backendName is name as the user would write it: the default when empty.
func backendName(name string) string {
	if name == "" {
		return DefaultBackend
	}
	return name
}
