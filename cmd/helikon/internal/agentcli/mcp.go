package agentcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/paigasus/helikon/cmd/helikon/internal/cli"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon/mcptools"
)

func init() {
	cli.RegisterAgent("mcp", runMCP)
}

// mcpTokenEnv names the environment variable holding the HTTP bearer token.
// It is read from the environment rather than a flag so that the token does
// not show in process listings.
const mcpTokenEnv = "HELIKON_MCP_TOKEN"

func runMCP(ctx context.Context, env *cli.Env, args []string) int {
	fs := cli.NewFlagSet("mcp", "mcp [flags]\n\nServes the built-in tools over the Model Context Protocol: on stdin/stdout by\ndefault, or over streamable HTTP with --http. Every call goes through the\npermission pipeline (--mode, --deny, --allow, guards); a call that needs\napproval is asked of the client by elicitation when it supports it, and\ndenied otherwise. Diagnostics go to stderr.\n\nWith --http, the server listens on loopback unless told otherwise; a\nnon-loopback address needs a bearer token in $"+mcpTokenEnv+" (clients send\n\"Authorization: Bearer TOKEN\"). Requests whose Host is not loopback or the\nlisten address, or that carry a browser Origin not given with --http-allow-origin,\nare refused. A client that disconnects during a call, or ends its session,\ncancels the call and kills the processes it started. Sessions idle for\n--http-session-timeout end; beyond --http-max-sessions live sessions, a new\nclient is refused with 503 until one ends.", env.Stderr)
	common := cli.AddCommonFlags(fs)
	bflags := cli.AddBackendFlags(fs)
	tflags := AddToolFlags(fs)
	toolList := fs.String("tools", "", "comma-separated `NAMES` of the tools to serve (default: every built-in tool)")
	httpAddr := fs.String("http", "", "serve streamable HTTP on `ADDR` (such as 127.0.0.1:8080) instead of stdio")
	origins := cli.Multi(fs, "http-allow-origin", "accept browser requests from `ORIGIN` such as https://app.example (repeatable, HTTP only)")
	hosts := cli.Multi(fs, "http-allow-host", "accept requests addressed to `HOST` (repeatable, HTTP only)")
	sessionTimeout := fs.Duration("http-session-timeout", mcptools.DefaultSessionTimeout, "end an HTTP session after `DURATION` without requests (0: never)")
	maxSessions := fs.Int("http-max-sessions", mcptools.DefaultMaxSessions, "refuse new HTTP sessions while `N` are live (0: no cap)")
	wsSession := fs.String("session", "", "with a remote --backend (docker, forkd): work in the workspace of session `ID` (attached to when it exists; default: a new one, removed at exit)")
	progress := fs.Duration("progress-interval", mcptools.DefaultProgressInterval, "send progress notifications every `DURATION` while a call runs, to clients that ask for them")
	pos, done, status := cli.ParseArgs(fs, env, args)
	if done {
		return status
	}
	if len(pos) > 0 {
		return cli.Failf(env, cli.ExitUsage, "mcp: unexpected arguments %q", pos)
	}
	if *sessionTimeout < 0 || *maxSessions < 0 {
		return cli.Failf(env, cli.ExitUsage, "mcp: --http-session-timeout and --http-max-sessions cannot be negative (0 means never and no cap)")
	}
	root, err := common.RootDir()
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp: %v", err)
	}
	perms, mode, err := common.Permissions()
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp: %v", err)
	}
	var names []string
	for _, n := range strings.Split(*toolList, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if err := validWorkspaceSession(*wsSession); err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp: %v", err)
	}
	// Over HTTP, each client session gets a remote workspace of its own
	// where the engine allows it (docker); stdio is one session.
	te := &ToolEnv{Ctx: ctx, Env: env, Root: root, Common: common, BackendFlags: bflags, Session: *wsSession, PerSession: *httpAddr != ""}
	defer te.Close()
	set, err := tflags.BuildSet(te, names)
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp: %v", err)
	}
	if set.Len() == 0 {
		return cli.Failf(env, cli.ExitUsage, "mcp: no tools to serve; name them with --tools (available: %s)", strings.Join(tflags.Names(true), ", "))
	}
	logger := slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := mcptools.NewServer(set, &mcptools.ServerOptions[App]{
		Instructions:     fmt.Sprintf("helikon tools confined to %s, permission mode %s.", root, mode),
		Permissions:      perms,
		Mode:             mode,
		ProgressInterval: *progress,
		Logger:           logger,
		Sessions:         te.ClientSessions(),
	})
	if err != nil {
		return cli.Failf(env, cli.ExitOther, "mcp: %v", err)
	}
	if *httpAddr == "" {
		err = srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(env.Stdin), Writer: nopWriteCloser{env.Stdout}})
		if err != nil && ctx.Err() == nil && !isClosedStream(err) {
			return cli.Failf(env, cli.ExitOther, "mcp: %v", err)
		}
		return cli.ExitOK
	}
	err = mcptools.ServeHTTP(ctx, srv, &mcptools.HTTPOptions{
		Addr:           *httpAddr,
		Token:          env.Var(mcpTokenEnv),
		AllowedOrigins: *origins,
		AllowedHosts:   *hosts,
		SessionTimeout: zeroMeansNone(*sessionTimeout),
		MaxSessions:    zeroMeansNone(*maxSessions),
		Logger:         logger,
	}, func(a net.Addr) {
		fmt.Fprintf(env.Stderr, "helikon: serving MCP over streamable HTTP at http://%s/ (%d tools)\n", a, set.Len())
	})
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "mcp: %v", err)
	}
	return cli.ExitOK
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
