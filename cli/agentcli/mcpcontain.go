package agentcli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"mvdan.cc/sh/v3/shell"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/tool/mcptools"
)

// errMCPUncontained is wrapped by the error of an --mcp server that cannot
// be contained here.
var errMCPUncontained = errors.New("the MCP server cannot be contained here (the OS sandbox is unavailable); pass --mcp-unsandboxed to run your --mcp servers without containment, trusted servers only")

// mcpServer is how a run starts one --mcp server.
type mcpServer struct {
	dial mcptools.Dialer
	// containment says in words where the server runs, for doctor and
	// the log.
	containment string
	backend     backend.Backend // nil unsandboxed
}

// Close releases the server's sandbox.
func (s *mcpServer) Close() error {
	if c, ok := s.backend.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// newMCPServer prepares cmdline (a command line, split as a POSIX shell
// would, $VAR from this environment) to run contained in the OS sandbox
// over root: it reads and writes beneath root only, reads the system and
// the PATH's tool trees, sees none of the home directory, credentials or
// environment (PATH only), has no network, and dies with everything it
// started when the run ends. Unsandboxed, it runs as before: with this
// process's environment and privileges. Where the OS sandbox is
// unavailable it fails (closed), wrapping errMCPUncontained and
// backend.ErrUnavailable.
//
// The run's --read-path directories and --env names are the server's too.
func newMCPServer(ctx context.Context, env *cli.Env, root, cmdline string, unsandboxed bool, run *cli.BackendFlags) (*mcpServer, error) {
	if unsandboxed {
		return &mcpServer{dial: mcptools.Command(cmdline), containment: "unsandboxed (--mcp-unsandboxed): your environment and privileges"}, nil
	}
	argv, err := shell.Fields(cmdline, env.Var)
	if err != nil {
		return nil, fmt.Errorf("mcp server command %q: %w", cmdline, err)
	}
	if len(argv) == 0 {
		return nil, errors.New("mcp server command is empty")
	}
	// The server lives as long as the run: the backend's timeout is its
	// lifetime.
	b, err := cli.BuildBackend(ctx, env, root, &cli.BackendFlags{Name: "os", Timeout: backend.MaxLifetime, ReadPaths: run.ReadPaths, Env: run.Env})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errMCPUncontained, err)
	}
	return &mcpServer{
		dial:        mcptools.Contained(b, argv, &mcptools.ContainedOptions{Stderr: env.Stderr}),
		containment: fmt.Sprintf("contained in the OS sandbox: reads and writes %s only (reads too: the system, PATH, --read-path %q), no network, no home directory or credentials, environment PATH and --env %q", root, deref(run.ReadPaths), deref(run.Env)),
		backend:     b,
	}, nil
}

func deref(p *[]string) []string {
	if p == nil {
		return nil
	}
	return *p
}
