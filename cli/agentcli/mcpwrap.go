package agentcli

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/tool/mcptools"
)

const mcpWrapUsage = `mcp wrap [flags] -- COMMAND [ARGS...]

Runs COMMAND, a stdio MCP server, inside the OS sandbox and relays its tools
to the MCP host on stdin/stdout: put "helikon mcp wrap [flags] -- COMMAND..."
in the host's configuration in place of the bare command. The server may read
and write only --root (default: a new empty directory, removed at exit), read
the system directories, your PATH's tool trees and --read-path; it sees none
of your home directory, credentials or environment (only PATH and the names
given with --env), has no network unless --allow-network or --egress-allow
(root), and everything it starts dies with it. Run as root, it cannot read
the machine's secrets (/etc/shadow, SSH host keys).

Every call goes through the permission pipeline as mcp__NAME__TOOL (--name,
default the command's base name): --deny, --ask, --allow, --mode and the
policy files apply; "ask" goes to the host by elicitation, and where the
host cannot ask it is refused with the rule that would allow it (helikon
policy check --wrap mcp__NAME__TOOL ARGS shows what decides a call). Each tool's definition is pinned when first seen
(in --pins FILE across runs); a tool the server changes or adds afterwards
(a "rug pull") is offered with a neutral description and refused until its
new definition is approved. Diagnostics go to stderr.`

// wrapFlags are the flags of helikon-agent mcp wrap.
type wrapFlags struct {
	fs                *flag.FlagSet
	common            *cli.CommonFlags
	backendFlags      *cli.BackendFlags
	name              string
	pins              string
	ignoreAnnotations bool
	verbose           bool
}

// runMCPWrap is helikon-agent mcp wrap.
func runMCPWrap(ctx context.Context, env *cli.Env, args []string) int {
	fs := cli.NewFlagSet("mcp wrap", mcpWrapUsage, env.Stderr)
	f := &wrapFlags{fs: fs, common: cli.AddCommonFlags(fs), backendFlags: cli.AddBackendFlags(fs)}
	fs.StringVar(&f.name, "name", "", "the server's `NAME` in permission rules, mcp__NAME__TOOL (default: the command's base name)")
	fs.StringVar(&f.pins, "pins", "", "keep the approved tool definitions in `FILE` (JSON), so that a change between runs is held too (default: in memory)")
	fs.BoolVar(&f.ignoreAnnotations, "ignore-annotations", false, "treat every tool as a side effect, whatever its annotations claim")
	fs.BoolVar(&f.verbose, "verbose", false, "log every relayed call to stderr")
	// The command is everything after "--", so that its own flags are not
	// taken for ours.
	i := slices.Index(args, "--")
	if i < 0 {
		if slices.ContainsFunc(args, func(a string) bool { return a == "-h" || a == "-help" || a == "--help" }) {
			_, _, status := cli.ParseArgs(fs, env, args)
			return status
		}
		return cli.UsageFailf(env, fs, "mcp wrap: give the server's command after --, as in: helikon mcp wrap --root DIR -- npx -y SERVER")
	}
	pos, done, status := cli.ParseArgs(fs, env, args[:i])
	if done {
		return status
	}
	argv := args[i+1:]
	if len(pos) > 0 {
		return cli.UsageFailf(env, fs, "mcp wrap: unexpected arguments %q before --", pos)
	}
	if len(argv) == 0 {
		return cli.UsageFailf(env, fs, "mcp wrap: no command after --")
	}
	if n := f.backendFlags.Name; n != "" && n != "os" && n != "local" {
		return cli.Failf(env, cli.ExitUsage, "mcp wrap: the server runs in the OS sandbox; --backend %s is not supported", n)
	}
	f.backendFlags.Name = "os"
	rootSet := false
	fs.Visit(func(fl *flag.Flag) { rootSet = rootSet || fl.Name == "root" })
	if !rootSet {
		dir, err := os.MkdirTemp("", "helikon-mcp-wrap-")
		if err != nil {
			return cli.Failf(env, cli.ExitOther, "mcp wrap: %v", err)
		}
		defer os.RemoveAll(dir)
		f.common.Root = dir
	}
	return f.run(ctx, env, argv)
}

func (f *wrapFlags) run(ctx context.Context, env *cli.Env, argv []string) int {
	root, err := f.common.RootDir()
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp wrap: %v", err)
	}
	perms, mode, err := f.common.Permissions()
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp wrap: %v", err)
	}
	pins := &mcptools.Pins{}
	if f.pins != "" {
		if pins, err = mcptools.LoadPins(f.pins); err != nil {
			return cli.Failf(env, cli.ExitUsage, "mcp wrap: %v", err)
		}
	}
	if f.backendFlags.Timeout == 0 {
		// A server lives as long as its host keeps it: the backend's
		// timeout is its lifetime.
		f.backendFlags.Timeout = backend.MaxLifetime
	}
	b, err := cli.BuildBackend(ctx, env, root, f.backendFlags)
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp wrap: %v", err)
	}
	if c, ok := b.(io.Closer); ok {
		defer c.Close()
	}
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level}))
	name := f.name
	if name == "" {
		name = filepath.Base(argv[0])
	}
	w, err := mcptools.Wrap(ctx, mcptools.Contained(b, argv, &mcptools.ContainedOptions{Stderr: env.Stderr}), &mcptools.WrapOptions{
		Name:              name,
		Permissions:       perms,
		Mode:              mode,
		IgnoreAnnotations: f.ignoreAnnotations,
		Pins:              pins,
		Logger:            logger,
	})
	if err != nil {
		return cli.Failf(env, cli.ExitOther, "mcp wrap: %v", err)
	}
	err = w.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}})
	if err != nil && ctx.Err() == nil && !isClosedStream(err) {
		return cli.Failf(env, cli.ExitOther, "mcp wrap: %v", err)
	}
	return cli.ExitOK
}
