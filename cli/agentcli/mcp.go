package agentcli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/paigasus/helikon/cli"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/mcptools"
)

func init() {
	cli.RegisterAgent("mcp", runMCP)
}

// mcpTokenEnv names the environment variable holding the HTTP bearer token.
// It is read from the environment rather than a flag so that the token does
// not show in process listings.
const mcpTokenEnv = "HELIKON_MCP_TOKEN"

const mcpUsage = "mcp [flags]\n\nServes the built-in tools over the Model Context Protocol: on stdin/stdout by\ndefault, or over streamable HTTP with --http. Every call goes through the\npermission pipeline (--mode, --deny, --allow, guards); a call that needs\napproval is asked of the client by elicitation when it supports it, and\ndenied otherwise. In the default mode a call runs unless a rule, a guard or\nthe policy files stop it: the client is the one asking (most confirm tool\ncalls with their user); --ask RULE makes helikon ask the client too.\n(helikon run, where a model asks, asks you before anything not read-only.)\nDiagnostics go to stderr.\n\nWith --http, the server listens on loopback unless told otherwise; a\nnon-loopback address needs a bearer token in $" + mcpTokenEnv + " (clients send\n\"Authorization: Bearer TOKEN\") or tenants: --http-tenants FILE gives one token per\ntenant (lines of NAME TOKEN); a tenant's sessions are its own (another tenant's\ntoken gets 404), and its name labels its log records and workspaces. Requests whose Host is not loopback or the\nlisten address, or that carry a browser Origin not given with --http-allow-origin,\nare refused. A client that disconnects during a call, or ends its session,\ncancels the call and kills the processes it started. Sessions idle for\n--http-session-timeout end; beyond --http-max-sessions live sessions, a new\nclient is refused with 503 until one ends. /healthz and /readyz answer\nwithout the token (/readyz is 503 at the session cap); /metrics serves\nPrometheus metrics (sessions, calls by tool and outcome, decisions by\nstage, calls running) to a client with the token.\n\nhelikon mcp wrap [flags] -- COMMAND runs a stdio MCP server in the OS sandbox\nand relays its tools through the permission pipeline (helikon mcp wrap --help)."

// runMCP is helikon-agent mcp. The workspace its tools act on is closed
// when it returns (ToolEnv.Close, on a context of its own: the command's
// may have been cancelled by a signal).
func runMCP(ctx context.Context, env *cli.Env, args []string) int {
	if len(args) > 0 && args[0] == "wrap" {
		return runMCPWrap(ctx, env, args[1:])
	}
	f, pos, done, status := parseMCPFlags(env, args)
	if done {
		return status
	}
	if len(pos) > 0 {
		return cli.UsageFailf(env, f.fs, "mcp: unexpected arguments %q", pos)
	}
	if f.sessionTimeout < 0 || f.maxSessions < 0 {
		return cli.Failf(env, cli.ExitUsage, "mcp: --http-session-timeout and --http-max-sessions cannot be negative (0 means never and no cap)")
	}
	root, err := f.common.RootDir()
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp: %v", err)
	}
	perms, mode, err := f.common.Permissions()
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp: %v", err)
	}
	if err := f.common.CheckRules(perms, f.toolFlags.Names(true), false); err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp: %v", err)
	}
	if err := validWorkspaceSession(f.wsSession); err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp: %v", err)
	}
	// Over HTTP, each client session gets a remote workspace of its own
	// where the engine allows it (docker); stdio is one session.
	te := &ToolEnv{Ctx: ctx, Env: env, Root: root, Common: f.common, BackendFlags: f.backendFlags, Session: f.wsSession, PerSession: f.httpAddr != ""}
	defer te.Close()
	set, status := f.buildTools(env, te)
	if status != cli.ExitOK {
		return status
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var metrics *mcptools.Metrics // served at /metrics over HTTP
	if f.httpAddr != "" {
		metrics = mcptools.NewMetrics()
	}
	srv, err := mcptools.NewServer(set, &mcptools.ServerOptions[App]{
		Instructions:     fmt.Sprintf("helikon tools confined to %s, permission mode %s.", root, mode),
		Permissions:      perms,
		Mode:             mode,
		ProgressInterval: f.progress,
		Logger:           logger,
		Sessions:         te.ClientSessions(),
		Metrics:          metrics,
		SessionEnded:     te.sessionEnded(),
	})
	if err != nil {
		return cli.Failf(env, cli.ExitOther, "mcp: %v", err)
	}
	if f.httpAddr == "" {
		return serveStdio(ctx, env, srv)
	}
	return f.serveHTTP(ctx, env, srv, logger, metrics, set.Len())
}

// mcpFlags are the flags of helikon-agent mcp.
type mcpFlags struct {
	fs             *flag.FlagSet // for the synopsis of a usage error
	common         *cli.CommonFlags
	backendFlags   *cli.BackendFlags
	toolFlags      *ToolFlags
	toolList       string
	httpAddr       string
	origins        *[]string
	hosts          *[]string
	sessionTimeout time.Duration
	maxSessions    int
	tenantsFile    string
	wsSession      string
	progress       time.Duration
}

// parseMCPFlags defines the flags of mcp and parses args into them. It
// returns the positional arguments, or done with the exit status when
// parsing ended the command (--help, or a usage error, already reported).
func parseMCPFlags(env *cli.Env, args []string) (f *mcpFlags, pos []string, done bool, status int) {
	fs := cli.NewFlagSet("mcp", mcpUsage, env.Stderr)
	f = &mcpFlags{fs: fs, common: cli.AddCommonFlags(fs), backendFlags: cli.AddBackendFlags(fs), toolFlags: AddToolFlags(fs)}
	fs.StringVar(&f.toolList, "tools", "", "comma-separated `NAMES` of the tools to serve (default: every built-in tool, WebSearch only when $BRAVE_API_KEY or $TAVILY_API_KEY is set)")
	fs.StringVar(&f.httpAddr, "http", "", "serve streamable HTTP on `ADDR` (such as 127.0.0.1:8080) instead of stdio")
	f.origins = cli.Multi(fs, "http-allow-origin", "accept browser requests from `ORIGIN` such as https://app.example (repeatable, HTTP only)")
	f.hosts = cli.Multi(fs, "http-allow-host", "accept requests addressed to `HOST` (repeatable, HTTP only)")
	cli.DurationVar(fs, &f.sessionTimeout, "http-session-timeout", mcptools.DefaultSessionTimeout, "end an HTTP session after `DURATION` without requests (0: never)")
	fs.IntVar(&f.maxSessions, "http-max-sessions", mcptools.DefaultMaxSessions, "refuse new HTTP sessions while `N` are live (0: no cap)")
	fs.StringVar(&f.tenantsFile, "http-tenants", "", "with --http: accept the bearer tokens of `FILE`, one tenant per line as NAME TOKEN; each tenant's sessions are its own and labelled with its name (HTTP only)")
	fs.StringVar(&f.wsSession, "session", "", "with a remote --backend (docker, forkd): work in the workspace of session `ID` (attached to when it exists; default: a new one, removed at exit)")
	cli.DurationVar(fs, &f.progress, "progress-interval", mcptools.DefaultProgressInterval, "send progress notifications every `DURATION` while a call runs, to clients that ask for them")
	pos, done, status = cli.ParseArgs(fs, env, args)
	return f, pos, done, status
}

// buildTools builds the tools --tools names (by default those of
// defaultTools) on te's workspace; serving none is a usage error.
func (f *mcpFlags) buildTools(env *cli.Env, te *ToolEnv) (*helikon.Toolset[App], int) {
	var names []string
	for _, n := range strings.Split(f.toolList, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		names = defaultTools(env, f.toolFlags)
	}
	set, err := f.toolFlags.BuildSet(te, names)
	if err != nil {
		return nil, cli.Failf(env, cli.ExitUsage, "mcp: %v", err)
	}
	if set.Len() == 0 {
		return nil, cli.Failf(env, cli.ExitUsage, "mcp: no tools to serve; name them with --tools (available: %s)", strings.Join(f.toolFlags.Names(true), ", "))
	}
	return set, cli.ExitOK
}

// serveStdio serves srv on stdin and stdout until the client closes stdin
// or the command is cancelled, neither of which is a failure.
func serveStdio(ctx context.Context, env *cli.Env, srv *mcp.Server) int {
	err := srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}})
	if err != nil && ctx.Err() == nil && !isClosedStream(err) {
		return cli.Failf(env, cli.ExitOther, "mcp: %v", err)
	}
	return cli.ExitOK
}

// serveHTTP serves srv over streamable HTTP on --http, saying where on
// stderr once it listens, until the command is cancelled.
func (f *mcpFlags) serveHTTP(ctx context.Context, env *cli.Env, srv *mcp.Server, logger *slog.Logger, metrics *mcptools.Metrics, tools int) int {
	var tenants []mcptools.Tenant
	if f.tenantsFile != "" {
		data, err := readBounded(f.tenantsFile, mcptools.MaxTenantsFile)
		if err != nil {
			return cli.Failf(env, cli.ExitUsage, "mcp: --http-tenants: %v", err)
		}
		if tenants, err = mcptools.ParseTenants(data); err != nil {
			return cli.Failf(env, cli.ExitUsage, "mcp: --http-tenants %s: %v", f.tenantsFile, err)
		}
	}
	err := mcptools.ServeHTTP(ctx, srv, &mcptools.HTTPOptions{
		Addr:           f.httpAddr,
		Token:          env.Var(mcpTokenEnv),
		Tenants:        tenants,
		AllowedOrigins: *f.origins,
		AllowedHosts:   *f.hosts,
		SessionTimeout: zeroMeansNone(f.sessionTimeout),
		MaxSessions:    zeroMeansNone(f.maxSessions),
		Logger:         logger,
		Metrics:        metrics,
	}, func(a net.Addr) {
		fmt.Fprintf(env.Stderr, "helikon: serving MCP over streamable HTTP at http://%s/ (%d tools)\n", a, tools)
	})
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp: %v", err)
	}
	return cli.ExitOK
}

// readBounded reads the file at path, refusing one larger than limit.
func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}

// zeroMeansNone maps a flag's 0 ("never", "no cap") to the negative value
// that means it in [mcptools.HTTPOptions], where 0 means the default.
func zeroMeansNone[T int | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// isClosedStream reports the end of a stdio session: the client closed our
// stdin.
func isClosedStream(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed)
}
