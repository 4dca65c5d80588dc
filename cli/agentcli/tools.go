package agentcli

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/paigasus/helikon/cli"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/workspace"
)

// App is the application context type of the CLI's tools: the CLI has none.
type App = struct{}

// ToolEnv is what a tool provider gets to build its tools.
type ToolEnv struct {
	Ctx          context.Context // the command's context
	Env          *cli.Env
	Root         string            // absolute sandbox root
	Common       *cli.CommonFlags  // the parsed shared flags
	BackendFlags *cli.BackendFlags // the parsed backend flags, for tools that run commands
	// DryRun builds tools to be checked, never invoked (helikon policy
	// check): commands get the host backend, which is not started.
	DryRun bool

	backendOnce sync.Once
	backend     backend.Backend
	backendErr  error

	// Session names the workspace's session (--session); "" means a new
	// one.
	Session string
	// PerSession asks for a workspace per client session where the engine
	// can describe its workspaces before they exist (see ClientSessions).
	PerSession bool
	// quietCreate leaves out the notice of a new workspace made for no
	// named session (helikon exec: the program's standard error is the
	// user's).
	quietCreate bool
	wsFlags     *cli.WorkspaceFlags
	// maxProcesses is --max-processes: 0 starts no background commands.
	maxProcesses int
	procOnce     sync.Once
	procs        *process.Sessions
	wsOnce       sync.Once
	ws           workspace.Workspace
	wsErr        error
	sessions     *workspace.Sessions
	perSession   bool
}

// Backend returns the execution backend the flags (and, where they are not
// given, the policy files) select, built once and shared by every tool of
// the command.
func (te *ToolEnv) Backend() (backend.Backend, error) {
	te.backendOnce.Do(func() {
		f := te.BackendFlags
		switch {
		case te.DryRun:
			f = &cli.BackendFlags{Name: "host"}
		case te.Common != nil:
			f = te.Common.WithFileSettings(f)
		}
		te.backend, te.backendErr = cli.BuildBackend(te.Ctx, te.Env, te.Root, f)
	})
	return te.backend, te.backendErr
}

// Processes returns the process tables of the command's background
// commands (one per client session: see process.Sessions), on its
// workspace, made once; nil when --max-processes is 0.
func (te *ToolEnv) Processes() (*process.Sessions, error) {
	if te.maxProcesses <= 0 {
		return nil, nil
	}
	ws, err := te.Workspace()
	if err != nil {
		return nil, err
	}
	te.procOnce.Do(func() {
		te.procs = &process.Sessions{Backend: ws, Options: &process.Options{MaxProcesses: te.maxProcesses}}
	})
	return te.procs, nil
}

// ToolBuilder builds the tool called name.
type ToolBuilder func(te *ToolEnv, name string) (helikon.Tool[App], error)

// ToolProvider contributes built-in tools to the CLI.
type ToolProvider struct {
	// Names are the tools the provider builds.
	Names []string
	// Flags defines the provider's own flags on fs (may be nil) and
	// returns a builder bound to them.
	Flags func(fs *flag.FlagSet) ToolBuilder
	// Example marks demonstration tools: `helikon tool` runs them, but they
	// are not part of the toolset served by mcp and used by run.
	Example bool
}

var toolProviders []*ToolProvider

// RegisterTools registers a tool provider.
func RegisterTools(p *ToolProvider) { toolProviders = append(toolProviders, p) }

// ToolFlags holds the providers' flags defined on one flag set.
type ToolFlags struct {
	builders     map[string]ToolBuilder
	example      map[string]bool
	workspace    *cli.WorkspaceFlags
	maxProcesses *int
}

// AddToolFlags defines every provider's flags on fs.
func AddToolFlags(fs *flag.FlagSet) *ToolFlags {
	tf := &ToolFlags{builders: map[string]ToolBuilder{}, example: map[string]bool{}, workspace: cli.AddWorkspaceFlags(fs)}
	tf.maxProcesses = fs.Int("max-processes", 0, "let Bash start up to `N` background commands at once per session (run_in_background), with BashOutput, BashInput, KillShell and BashList (0: none; local, Docker, Podman and Kubernetes workspaces)")
	for _, p := range toolProviders {
		var b ToolBuilder
		if p.Flags != nil {
			b = p.Flags(fs)
		}
		for _, n := range p.Names {
			if _, dup := tf.builders[n]; dup {
				panic("cli: duplicate built-in tool " + n)
			}
			tf.builders[n] = b
			tf.example[n] = p.Example
		}
	}
	return tf
}

// Processes reports whether --max-processes lets Bash start background
// commands, and so whether the process tools are built.
func (tf *ToolFlags) Processes() bool { return tf.maxProcesses != nil && *tf.maxProcesses > 0 }

// Names returns the tool names, sorted; withExamples includes example tools.
func (tf *ToolFlags) Names(withExamples bool) []string {
	var names []string
	for n := range tf.builders {
		if withExamples || !tf.example[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Build builds the tool called name.
func (tf *ToolFlags) Build(te *ToolEnv, name string) (helikon.Tool[App], error) {
	if te.wsFlags == nil {
		te.wsFlags = tf.workspace
	}
	if te.maxProcesses == 0 && tf.maxProcesses != nil {
		te.maxProcesses = *tf.maxProcesses
	}
	b, ok := tf.builders[name]
	if !ok || b == nil {
		names := tf.Names(true)
		if s := helikon.SuggestTool(name, names); s != "" {
			return nil, fmt.Errorf("unknown tool %q; did you mean %s? (available: %s)", name, s, strings.Join(names, ", "))
		}
		return nil, fmt.Errorf("unknown tool %q (available: %s)", name, strings.Join(names, ", "))
	}
	return b(te, name)
}

// BuildSet builds the named tools (all built-in tools when names is empty)
// into a toolset. Tools that need something unavailable make it fail.
func (tf *ToolFlags) BuildSet(te *ToolEnv, names []string) (*helikon.Toolset[App], error) {
	if len(names) == 0 {
		names = tf.Names(false)
	}
	tools := make([]helikon.Tool[App], 0, len(names))
	for _, n := range names {
		t, err := tf.Build(te, n)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", n, err)
		}
		tools = append(tools, t)
	}
	return helikon.NewToolset(tools...)
}

// sessionEnded returns what ends a client session's background commands
// when the session ends (mcptools.ServerOptions.SessionEnded); nil without
// them. Call it after the tools are built.
func (te *ToolEnv) sessionEnded() func(string) {
	if te.procs == nil {
		return nil
	}
	return func(session string) { _ = te.procs.Close(session) }
}
