package mcptools

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultHTTPAddr is the address [ServeHTTP] listens on when none is given:
// loopback only, on the port MCP examples commonly use.
const DefaultHTTPAddr = "127.0.0.1:8080"

// HTTPOptions configures the streamable HTTP transport. The zero value (or
// nil) listens on [DefaultHTTPAddr] with no token, accepts Host headers that
// name a loopback address, and refuses every request that carries an Origin
// header (browsers).
type HTTPOptions struct {
	// Addr is the listen address; "" means DefaultHTTPAddr. Any address
	// that is not loopback (including ":8080", every interface) needs a
	// Token.
	Addr string
	// Token, when set, is the bearer token every request must carry in
	// "Authorization: Bearer TOKEN".
	Token string
	// AllowedHosts are further Host header values (host or host:port) to
	// accept, for a server reached under a name. Loopback names and the
	// listen address itself are always accepted.
	AllowedHosts []string
	// AllowedOrigins are the browser origins (scheme://host[:port]) whose
	// requests are accepted. A request without an Origin header (any
	// non-browser client) is not affected.
	AllowedOrigins []string
	// SessionTimeout closes a session idle for that long; 0 means
	// DefaultSessionTimeout.
	SessionTimeout time.Duration
	// Logger receives refused requests; nil means slog.Default.
	Logger *slog.Logger
}

// DefaultSessionTimeout is how long an idle HTTP session is kept: long enough
// for a person to come back to an editor, short enough that abandoned
// sessions do not accumulate for the server's lifetime.
const DefaultSessionTimeout = time.Hour

// ErrInsecureListen is returned by [ServeHTTP] for a non-loopback address
// without a bearer token.
var ErrInsecureListen = errors.New("refusing to serve MCP on a non-loopback address without a bearer token")

// HTTPHandler returns an http.Handler serving srv over the streamable HTTP
// transport behind the Host, Origin and bearer-token checks of opts. listen
// is the address the handler is served on (its host is accepted in Host
// headers); it may be "". Without a token it serves only requests from
// loopback peers, wherever it is mounted: the Host check stops browsers
// (DNS rebinding), not a remote client that writes Host: 127.0.0.1.
func HTTPHandler(srv *mcp.Server, listen string, opts *HTTPOptions) http.Handler {
	if opts == nil {
		opts = &HTTPOptions{}
	}
	timeout := opts.SessionTimeout
	if timeout == 0 {
		timeout = DefaultSessionTimeout
	}
	g := &httpGuard{
		next:    mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{SessionTimeout: timeout}),
		token:   opts.Token,
		hosts:   map[string]bool{},
		origins: map[string]bool{},
		log:     opts.Logger,
	}
	if g.log == nil {
		g.log = slog.Default()
	}
	if h, _, err := net.SplitHostPort(listen); err == nil && h != "" {
		g.hosts[strings.ToLower(h)] = true
	}
	for _, h := range opts.AllowedHosts {
		g.hosts[strings.ToLower(hostOnly(h))] = true
	}
	for _, o := range opts.AllowedOrigins {
		g.origins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	return g
}

// ServeHTTP serves srv over streamable HTTP on opts.Addr until ctx is done.
// ready, when not nil, is called with the bound address once the listener is
// open (useful with port 0).
func ServeHTTP(ctx context.Context, srv *mcp.Server, opts *HTTPOptions, ready func(net.Addr)) error {
	if opts == nil {
		opts = &HTTPOptions{}
	}
	addr := opts.Addr
	if addr == "" {
		addr = DefaultHTTPAddr
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("mcptools: listen address %q: %w", addr, err)
	}
	if !isLoopbackHost(host) && opts.Token == "" {
		return fmt.Errorf("mcptools: %s: %w; set a token or listen on 127.0.0.1", addr, ErrInsecureListen)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("mcptools: %w", err)
	}
	hs := &http.Server{
		Handler:           HTTPHandler(srv, ln.Addr().String(), opts),
		ReadHeaderTimeout: 10 * time.Second,
	}
	if ready != nil {
		ready(ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("mcptools: %w", err)
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(shut)
		return nil
	}
}

type httpGuard struct {
	next    http.Handler
	token   string
	hosts   map[string]bool
	origins map[string]bool
	log     *slog.Logger
}

func (g *httpGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Host first: a DNS-rebinding page reaches a loopback server under
	// its own domain name, which is never one of ours.
	host := strings.ToLower(hostOnly(r.Host))
	if !isLoopbackHost(host) && !g.hosts[host] {
		g.refuse(w, r, http.StatusForbidden, "host not allowed")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !g.originOK(o) {
		g.refuse(w, r, http.StatusForbidden, "origin not allowed")
		return
	}
	if g.token == "" && !isLoopbackPeer(r.RemoteAddr) {
		g.refuse(w, r, http.StatusForbidden, "remote peer not allowed without a bearer token")
		return
	}
	if g.token != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(g.token)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="helikon"`)
			g.refuse(w, r, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

func (g *httpGuard) originOK(o string) bool {
	// An Origin is scheme://host[:port] and nothing else; compare it whole.
	return g.origins[strings.ToLower(strings.TrimSuffix(o, "/"))]
}

func (g *httpGuard) refuse(w http.ResponseWriter, r *http.Request, status int, why string) {
	g.log.Warn("mcp http request refused", slog.String("reason", why), slog.String("remote", r.RemoteAddr), slog.String("host", r.Host))
	http.Error(w, why, status)
}

// isLoopbackPeer reports whether addr, a request's RemoteAddr, is a loopback
// address.
func isLoopbackPeer(addr string) bool {
	ip := net.ParseIP(hostOnly(addr))
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips a port (and IPv6 brackets) from a Host header value.
func hostOnly(h string) string {
	if host, _, err := net.SplitHostPort(h); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
}

// isLoopbackHost reports whether h is "localhost" or a loopback IP.
func isLoopbackHost(h string) bool {
	h = strings.ToLower(strings.TrimSuffix(h, "."))
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
