package agentcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/policyfile"
	"github.com/paigasus/helikon/session"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/docker"
	wsforkd "github.com/paigasus/helikon/workspace/forkd"
	"github.com/paigasus/helikon/workspace/local"
)

// engineFactory builds the workspace engine of a remote backend from the
// command's flags.
type engineFactory func(te *ToolEnv, f *cli.BackendFlags) (workspace.Engine, error)

// engines are the backends whose workspaces live elsewhere: a session's
// files and commands are in one container or microVM.
var engines = map[string]engineFactory{
	docker.EngineName:  dockerEngine,
	wsforkd.EngineName: forkdEngine,
}

// EngineFactory builds the workspace engine of a backend registered with
// [RegisterEngine], from the environment (its configuration) and the
// backend flags. It is also called by helikon workspaces list|reap, with
// an empty root and zero flags, to list and remove.
type EngineFactory func(ctx context.Context, env *cli.Env, root string, f *cli.BackendFlags) (workspace.Engine, error)

// RegisterEngine adds a remote workspace engine under name, for --backend
// of the agent commands and for helikon workspaces: a command built with
// other engines (helikon-k8s, with workspace/agentsandbox) registers them
// from an init function. It panics on a name already taken.
func RegisterEngine(name string, f EngineFactory) {
	if _, dup := engines[name]; dup || name == local.EngineName {
		panic("agentcli: duplicate workspace engine " + name)
	}
	engines[name] = func(te *ToolEnv, bf *cli.BackendFlags) (workspace.Engine, error) {
		return f(te.Ctx, te.Env, te.Root, bf)
	}
	listers[name] = func(ctx context.Context, env *cli.Env) (workspace.Engine, error) {
		return f(ctx, env, "", &cli.BackendFlags{})
	}
}

func dockerEngine(te *ToolEnv, f *cli.BackendFlags) (workspace.Engine, error) {
	w := te.workspaceFlags()
	if w.Image == "" {
		return nil, fmt.Errorf("%w: --backend docker needs --image IMAGE (an image present in the daemon: docker pull, build or import it first)", backend.ErrUnavailable)
	}
	if err := f.NoLoopback("docker"); err != nil {
		return nil, err
	}
	if f.EgressAllow != nil && len(*f.EgressAllow) > 0 {
		return nil, fmt.Errorf("%w: --egress-allow is not supported with --backend docker; its containers have no network unless --allow-network", backend.ErrUnavailable)
	}
	opts := &docker.Options{
		Image: w.Image, Root: te.Root, Isolate: w.Isolate, Runtime: w.Runtime,
		AllowNetwork: f.AllowNetwork, Memory: w.Memory, CPUs: w.CPUs,
		Timeout: f.Timeout, Limits: f.Limits(), Logger: te.logger(),
		ReadOnlyPaths: policyfile.Dirs(),
	}
	if f.Env != nil {
		opts.EnvAllowlist = *f.Env
	}
	if f.Caches != "session" {
		opts.Caches = f.Caches // --caches, sandbox.caches: a volume per project or user
	}
	e, err := docker.New(te.Ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", backend.ErrUnavailable, err)
	}
	return e, nil
}

func forkdEngine(te *ToolEnv, f *cli.BackendFlags) (workspace.Engine, error) {
	if err := f.NoLoopback("forkd"); err != nil {
		return nil, err
	}
	bo, err := cli.ForkdOptions(te.Env)
	if err != nil {
		return nil, err
	}
	bo.Timeout = f.Timeout
	if f.EgressAllow != nil && len(*f.EgressAllow) > 0 {
		return nil, fmt.Errorf("%w: --egress-allow with --backend forkd is set by the operator's proxy (FORKD_PROXY); run helikon exec --backend forkd for per-command egress policies", backend.ErrUnavailable)
	}
	bo.Logger = te.logger()
	e, err := wsforkd.New(te.Ctx, &wsforkd.Options{Options: bo})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", backend.ErrUnavailable, err)
	}
	return e, nil
}

func (te *ToolEnv) workspaceFlags() *cli.WorkspaceFlags {
	if te.wsFlags == nil {
		return &cli.WorkspaceFlags{}
	}
	return te.wsFlags
}

func (te *ToolEnv) logger() *slog.Logger {
	if te.Env != nil && te.Env.Stderr != nil {
		return slog.New(slog.NewTextHandler(te.Env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return slog.New(slog.DiscardHandler)
}

// Workspace returns the command's workspace, opened once and shared by every
// tool, so that the file tools and Bash act on the same files: on this
// machine (--backend os or host) a view of --root, elsewhere (docker,
// forkd) the container or microVM of the session (--session, else a new
// one), removed when the command ends unless --keep-workspace.
func (te *ToolEnv) Workspace() (workspace.Workspace, error) {
	te.wsOnce.Do(func() { te.ws, te.wsErr = te.openWorkspace() })
	return te.ws, te.wsErr
}

func (te *ToolEnv) openWorkspace() (workspace.Workspace, error) {
	f := te.backendFlags()
	var eng workspace.Engine
	if factory, ok := engines[f.Name]; ok && !te.DryRun {
		e, err := factory(te, f)
		if err != nil {
			return nil, err
		}
		eng = e
	} else {
		b, err := te.Backend()
		if err != nil {
			return nil, err
		}
		if eng, err = local.New(te.Root, b); err != nil {
			return nil, err
		}
	}
	id, explicit := te.Session, te.Session != ""
	if !explicit {
		id = session.NewID()
	}
	id = workspace.SessionFor(id)
	te.sessions = &workspace.Sessions{Engine: eng, Logger: te.logger()}
	if eng.Name() != local.EngineName && te.Env != nil {
		stderr := te.Env.Stderr
		te.sessions.Notify = func(i workspace.Info) {
			switch {
			case i.Attached:
				fmt.Fprintf(stderr, "helikon: attached to the %s workspace %s of session %s\n", i.Engine, i.ID, i.Session)
			case explicit:
				fmt.Fprintf(stderr, "helikon: session %s has no %s workspace (it is gone, or was never made): created a fresh one, %s\n", i.Session, i.Engine, i.ID)
			case !te.quietCreate:
				fmt.Fprintf(stderr, "helikon: created the %s workspace %s for session %s\n", i.Engine, i.ID, i.Session)
			}
		}
	}
	if _, ok := workspace.Describe(eng); ok && te.PerSession && eng.Name() != local.EngineName {
		te.perSession = true
		return te.sessions.ByContext(id)
	}
	return te.sessions.Open(te.Ctx, id)
}

// ClientSessions returns the sessions an MCP server gives each client its
// own workspace from (mcptools.ServerOptions.Sessions): set when PerSession
// was asked for and the engine allows it, nil otherwise (every client then
// shares the command's workspace). Call it after the tools are built.
func (te *ToolEnv) ClientSessions() *workspace.Sessions {
	if !te.perSession {
		return nil
	}
	return te.sessions
}

// backendFlags are the backend flags with the policy files' settings
// applied where the flags are silent.
func (te *ToolEnv) backendFlags() *cli.BackendFlags {
	f := te.BackendFlags
	if f == nil {
		f = &cli.BackendFlags{}
	}
	switch {
	case te.DryRun:
		f = &cli.BackendFlags{Name: "host"}
	case te.Common != nil:
		f = te.Common.WithFileSettings(f)
	}
	return f
}

// closeTimeout bounds the removal of a remote workspace at exit, which runs
// after the command's context may have been cancelled by a signal.
const closeTimeout = 60 * time.Second

// Close ends the command's workspaces: it removes remote ones (unless
// --keep-workspace, then it says how to attach again) and releases local
// ones. The command's context may be cancelled (SIGINT, SIGTERM): Close
// gets a bounded context of its own.
func (te *ToolEnv) Close() error {
	if te.procs != nil {
		// The processes end before their workspace.
		_ = te.procs.CloseAll()
	}
	if c, ok := te.backend.(io.Closer); ok {
		// Last: the OS sandbox's session home goes with its backend.
		defer c.Close()
	}
	if te.sessions == nil {
		return nil
	}
	if te.workspaceFlags().Keep && te.sessions.Engine.Name() != local.EngineName {
		if te.ws != nil && te.Env != nil && !te.perSession {
			i := te.ws.Info()
			fmt.Fprintf(te.Env.Stderr, "helikon: kept the %s workspace %s of session %s: --session %s attaches to it, helikon workspaces reap removes it\n", i.Engine, i.ID, i.Session, i.Session)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(te.Ctx), closeTimeout)
	defer cancel()
	err := te.sessions.CloseAll(ctx)
	if c, ok := te.sessions.Engine.(io.Closer); ok {
		err = errors.Join(err, c.Close())
	}
	if err != nil && te.Env != nil {
		fmt.Fprintf(te.Env.Stderr, "helikon: closing the workspace: %v (helikon workspaces reap removes what is left)\n", err)
	}
	return err
}

// validWorkspaceSession checks a --session of a command that names only a
// workspace ("" is a new one).
func validWorkspaceSession(id string) error {
	if id == "" {
		return nil
	}
	return workspace.ValidSession(id)
}
