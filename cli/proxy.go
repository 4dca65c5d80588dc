package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/paigasus/helikon/egress"
)

func init() {
	Register(&Command{Name: "proxy", Summary: "run the egress proxy: HTTP CONNECT and plain HTTP filtered by a domain policy", Run: runProxy})
}

// proxyShutdownGrace is how long open tunnels get to finish after SIGTERM.
const proxyShutdownGrace = 5 * time.Second

func runProxy(ctx context.Context, env *Env, args []string) int {
	fs := NewFlagSet("proxy", "proxy --listen ADDR [--allow DOMAIN]... [--deny DOMAIN]... [flags]\n\n"+
		"Runs the egress proxy until SIGTERM or SIGINT. Without --allow or --allow-all it\n"+
		"refuses every destination. A domain matches itself and its subdomains;\n"+
		"*.domain matches subdomains only; --deny wins over --allow. When it listens,\n"+
		"it prints {\"listen\": ADDR, \"policy\": …} on stdout.", env.Stderr)
	listen := fs.String("listen", "127.0.0.1:3128", "listen on `ADDR` (host:port; port 0 picks a free one)")
	allow := Multi(fs, "allow", "allow `DOMAIN` (repeatable)")
	deny := Multi(fs, "deny", "deny `DOMAIN` (repeatable)")
	ports := Multi(fs, "allow-port", "allow destination `PORT` (repeatable; replaces the default 80 and 443)")
	allowAll := fs.Bool("allow-all", false, "allow every domain not denied")
	allowPrivate := fs.Bool("allow-private", false, "let destinations resolve to loopback and private addresses (cloud metadata, incl. all of IPv4 link-local, stays blocked)")
	authEnv := fs.String("auth-env", "", "require Proxy-Authorization credentials USER:PASSWORD read from environment variable `NAME`")
	maxConns := fs.Int("max-conns", egress.DefaultMaxConns, "concurrent client connections `N`")
	idle := fs.Duration("idle-timeout", egress.DefaultIdleTimeout, "close connections and tunnels idle for `DURATION`")
	verbose := fs.Bool("v", false, "log every refused request on stderr")
	pos, done, status := ParseArgs(fs, env, args)
	if done {
		return status
	}
	if len(pos) > 0 {
		return UsageFailf(env, fs, "proxy: unexpected argument %q", pos[0])
	}
	filter := egress.Filter{AllowAll: *allowAll, Allow: *allow, Deny: *deny, AllowPrivate: *allowPrivate}
	for _, s := range *ports {
		n, err := strconv.Atoi(s)
		if err != nil {
			return Failf(env, ExitUsage, "proxy: --allow-port %q is not a number", s)
		}
		filter.Ports = append(filter.Ports, n)
	}
	if err := filter.Validate(); err != nil {
		return Failf(env, ExitUsage, "proxy: %v", err)
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	p := &egress.Proxy{
		Filter:      filter,
		MaxConns:    *maxConns,
		IdleTimeout: *idle,
		Logger:      slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: level})),
	}
	if *authEnv != "" {
		user, pass, ok := strings.Cut(env.Var(*authEnv), ":")
		if !ok || user == "" || pass == "" {
			return Failf(env, ExitUsage, "proxy: --auth-env %s: want USER:PASSWORD in that variable", *authEnv)
		}
		p.Credentials = &egress.Credentials{User: user, Password: pass}
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return Failf(env, ExitUsage, "proxy: %v", err)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- p.Serve(ln) }()
	b, _ := json.Marshal(map[string]string{"listen": ln.Addr().String(), "policy": filter.String()})
	fmt.Fprintf(env.Stdout, "%s\n", b)

	select {
	case err := <-errc:
		return Failf(env, ExitOther, "proxy: %v", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), proxyShutdownGrace)
	defer cancel()
	if err := p.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return Failf(env, ExitOther, "proxy: shutdown: %v", err)
	}
	if err := <-errc; !errors.Is(err, egress.ErrServerClosed) {
		return Failf(env, ExitOther, "proxy: %v", err)
	}
	return ExitOK
}
