package mcptools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon/workspace"
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
	// Tenants are further bearer tokens, each naming the tenant whose
	// sessions it opens: a request must carry Token or one of theirs. Each
	// session belongs to the tenant that opened it (a request with another
	// tenant's token is answered 404, as for a session that does not
	// exist); the tenant labels its log records and its workspaces
	// ([workspace.LabelTenant]). See [Tenant].
	Tenants []Tenant
	// AllowedHosts are further Host header values (host or host:port) to
	// accept, for a server reached under a name. Loopback names and the
	// listen address itself are always accepted.
	AllowedHosts []string
	// AllowedOrigins are the browser origins (scheme://host[:port]) whose
	// requests are accepted. A request without an Origin header (any
	// non-browser client) is not affected.
	AllowedOrigins []string
	// SessionTimeout ends a session that has received no message (no
	// POST) for that long; a running call keeps its session alive, an open
	// GET stream does not. 0 means [DefaultSessionTimeout] and a negative
	// value keeps idle sessions until the client ends them.
	SessionTimeout time.Duration
	// MaxSessions caps the live sessions; 0 means [DefaultMaxSessions] and
	// a negative value sets no cap. An initialize request beyond the cap is
	// refused with 503 Service Unavailable and a JSON-RPC error that says
	// what to do.
	MaxSessions int
	// Logger receives refused requests; nil means slog.Default.
	Logger *slog.Logger
	// Metrics, when set, counts the live sessions and is served at
	// /metrics (see [MetricsPath]); give the same Metrics to
	// [ServerOptions].Metrics for the calls and decisions.
	Metrics *Metrics
}

// The paths the HTTP handler answers itself; every other path is MCP.
//
// /healthz and /readyz are answered before the Host, Origin, peer and
// token checks: a kubelet's probe carries no token and names the pod's
// address in its Host header, and the answers hold nothing but "ok" or
// why the server is not ready. /metrics is answered after the Origin,
// peer and token checks (a scraper sends the bearer token like any
// client) but not the Host check, which a scraper reaching the pod by its
// address would fail; without [HTTPOptions].Metrics it is 404.
const (
	// HealthPath answers 200 while the process serves HTTP (liveness).
	HealthPath = "/healthz"
	// ReadyPath answers 200 when a new MCP session would be accepted, and
	// 503 with the reason when the server is at [HTTPOptions].MaxSessions
	// or shutting down (readiness: take it out of the load balancer).
	ReadyPath = "/readyz"
	// MetricsPath serves [Metrics] in the Prometheus exposition format.
	MetricsPath = "/metrics"
)

// DefaultSessionTimeout is how long an idle HTTP session is kept. Clients
// start a new session when theirs has ended (the specification requires it
// on 404), so a short timeout costs an idle client one initialize; a long
// one lets abandoned sessions hold slots under [DefaultMaxSessions].
const DefaultSessionTimeout = 10 * time.Minute

// DefaultMaxSessions is the default cap on live HTTP sessions: far more than
// the clients one person runs at once (an editor, a few agents), and at
// about 12 KB a session (issue 18: 5,000 abandoned sessions grew the server
// by 61 MB) a bound of some 12 MB on what abandoned sessions can hold.
const DefaultMaxSessions = 1000

// MaxRequestBytes is the largest request body the HTTP transport reads;
// a larger one is answered 413. It is the go-sdk's default (4 MiB): a tool
// call's arguments are far smaller.
const MaxRequestBytes = mcp.DefaultMaxRequestBodyBytes

// ErrInsecureListen is returned by [ServeHTTP] for a non-loopback address
// without a bearer token.
var ErrInsecureListen = errors.New("refusing to serve MCP on a non-loopback address without a bearer token")

// HTTPHandler returns an http.Handler serving srv over the streamable HTTP
// transport behind the Host, Origin and bearer-token checks of opts. listen
// is the address the handler is served on (its host is accepted in Host
// headers); it may be "". Without a token it serves only requests from
// loopback peers, wherever it is mounted: the Host check stops browsers
// (DNS rebinding), not a remote client that writes Host: 127.0.0.1.
//
// The calls of a POST whose client disconnects before they are answered are
// cancelled (there is no event store to resume the stream from), and so are
// the calls of a session ended by DELETE. Sessions idle for
// opts.SessionTimeout end; at most opts.MaxSessions live at once. Ending
// every session when the server stops is [ServeHTTP]'s: a handler mounted
// elsewhere leaves its sessions to the SDK (and their calls running) when
// its http.Server shuts down.
func HTTPHandler(srv *mcp.Server, listen string, opts *HTTPOptions) http.Handler {
	return newHTTPGuard(srv, listen, opts)
}

func newHTTPGuard(srv *mcp.Server, listen string, opts *HTTPOptions) *httpGuard {
	if opts == nil {
		opts = &HTTPOptions{}
	}
	timeout := opts.SessionTimeout
	switch {
	case timeout == 0:
		timeout = DefaultSessionTimeout
	case timeout < 0:
		timeout = 0 // the SDK's "never"
	}
	limit := opts.MaxSessions
	switch {
	case limit == 0:
		limit = DefaultMaxSessions
	case limit < 0:
		limit = 0
	}
	next := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		SessionTimeout:      timeout,
		MaxRequestBodyBytes: MaxRequestBytes,
	})
	g := &httpGuard{
		next:     next,
		sessions: newSessionTable(srv, next, limit, timeout, opts.Metrics),
		metrics:  opts.Metrics,
		token:    opts.Token,
		tenants:  slices.Clone(opts.Tenants),
		badAuth:  validateTenants(opts.Token, opts.Tenants),
		hosts:    map[string]bool{},
		origins:  map[string]bool{},
		log:      opts.Logger,
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
	if err := validateTenants(opts.Token, opts.Tenants); err != nil {
		return fmt.Errorf("mcptools: %w", err)
	}
	if !isLoopbackHost(host) && opts.Token == "" && len(opts.Tenants) == 0 {
		return fmt.Errorf("mcptools: %s: %w; set a token or listen on 127.0.0.1", addr, ErrInsecureListen)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("mcptools: %w", err)
	}
	g := newHTTPGuard(srv, ln.Addr().String(), opts)
	hs := &http.Server{
		Handler:           g,
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
		// Stop the calls first: Shutdown waits for the POSTs that carry
		// them, and ending a session waits for its calls.
		g.sessions.closeAll()
		shut, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		hs.Shutdown(shut)
		return nil
	}
}

// shutdownGrace bounds how long ServeHTTP waits, once its calls are
// cancelled, for responses still being written.
const shutdownGrace = 5 * time.Second

type httpGuard struct {
	next     http.Handler
	sessions *sessionTable
	metrics  *Metrics
	token    string
	tenants  []Tenant
	badAuth  error // invalid Tenants: every request is refused
	hosts    map[string]bool
	origins  map[string]bool
	log      *slog.Logger
}

func (g *httpGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case HealthPath, ReadyPath:
		g.serveProbe(w, r)
		return
	}
	metrics := r.URL.Path == MetricsPath
	// Host first: a DNS-rebinding page reaches a loopback server under
	// its own domain name, which is never one of ours.
	host := strings.ToLower(hostOnly(r.Host))
	if !metrics && !isLoopbackHost(host) && !g.hosts[host] {
		g.refuse(w, r, http.StatusForbidden, "host not allowed")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !g.originOK(o) {
		g.refuse(w, r, http.StatusForbidden, "origin not allowed")
		return
	}
	if g.badAuth != nil {
		g.refuse(w, r, http.StatusInternalServerError, "the server's tenants are misconfigured")
		return
	}
	tokens := g.token != "" || len(g.tenants) > 0
	if !tokens && !isLoopbackPeer(r.RemoteAddr) {
		g.refuse(w, r, http.StatusForbidden, "remote peer not allowed without a bearer token")
		return
	}
	if tokens {
		tenant, ok := g.authenticate(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="helikon"`)
			g.refuse(w, r, http.StatusUnauthorized, "missing or wrong bearer token")
			return
		}
		// A session is its tenant's alone: to any other, as to a client
		// that guesses an id, it does not exist.
		if sid := r.Header.Get(sessionIDHeader); sid != "" && !g.sessions.ownedBy(sid, tenant) {
			g.refuse(w, r, http.StatusNotFound, "session not found")
			return
		}
		r = withTenant(r, tenant)
	}
	if metrics {
		if g.metrics == nil || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			http.NotFound(w, r)
			return
		}
		g.metrics.Handler().ServeHTTP(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		g.servePOST(w, r)
	case http.MethodDelete:
		// Ending a session waits for its calls: stop them first.
		for _, p := range g.sessions.takePosts(r.Header.Get(sessionIDHeader)) {
			g.sessions.cancel(p, "the client ended the session")
		}
		g.next.ServeHTTP(w, r)
	default:
		g.next.ServeHTTP(w, r)
	}
}

// serveProbe answers /healthz and /readyz (GET or HEAD only).
func (g *httpGuard) serveProbe(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if r.URL.Path == ReadyPath {
		if why := g.sessions.notReady(); why != "" {
			http.Error(w, why, http.StatusServiceUnavailable)
			return
		}
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, "ok\n")
}

// servePOST checks a POST's body before the SDK sees it, holds a session
// slot for an initialize, and cancels the POST's calls when its client goes
// away before they are answered.
func (g *httpGuard) servePOST(w http.ResponseWriter, r *http.Request) {
	// One Content-Type (a singleton field, RFC 9110 §5.3): with two, a
	// proxy may judge the body by the other one.
	ct := r.Header.Values("Content-Type")
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); len(ct) != 1 || mt != "application/json" {
		g.refuse(w, r, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			g.refuse(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit))
			return
		}
		g.refuse(w, r, http.StatusBadRequest, "failed to read the request body")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	msgs := scanMessages(body)
	if bad := msgs.invalid; bad != nil {
		writeRPCError(w, http.StatusBadRequest, bad.id, codeInvalidRequest, bad.why)
		return
	}
	sid := r.Header.Get(sessionIDHeader)
	if sid == "" && msgs.initialize {
		// Other requests without a session get one from the SDK that
		// ends with the request; they hold no slot.
		if why := g.sessions.reserve(); why != "" {
			g.log.Warn("mcp http session refused", slog.String("reason", why), slog.String("remote", r.RemoteAddr))
			writeRPCError(w, http.StatusServiceUnavailable, msgs.first, codeServerBusy, why)
			return
		}
		tenant, _ := workspace.TenantFrom(r.Context())
		sw := &settlingWriter{ResponseWriter: w, settle: func(sid string) { g.sessions.settle(sid, tenant) }}
		g.next.ServeHTTP(sw, r)
		sw.settleOnce()
		return
	}
	p := g.sessions.begin(sid, r, msgs.calls)
	g.next.ServeHTTP(w, r)
	g.sessions.end(p)
	if p != nil && r.Context().Err() != nil {
		// The client went away: the answers cannot reach it (no event
		// store keeps them for a resumed stream), so stop the work.
		g.sessions.cancel(p, "the HTTP client disconnected")
	}
}

// settlingWriter settles a session reservation when the initialize answer's
// header is written: before the client can read the session ID and send the
// session's first call, which must find its session in the table.
type settlingWriter struct {
	http.ResponseWriter
	settle func(sid string)
	once   sync.Once
}

func (w *settlingWriter) settleOnce() {
	w.once.Do(func() { w.settle(w.Header().Get(sessionIDHeader)) })
}

func (w *settlingWriter) WriteHeader(code int) {
	w.settleOnce()
	w.ResponseWriter.WriteHeader(code)
}

func (w *settlingWriter) Write(b []byte) (int, error) {
	w.settleOnce()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's Flush.
func (w *settlingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// bearerToken returns the credentials of an Authorization header with the
// Bearer scheme, whose name is case-insensitive (RFC 9110 §11.1).
func bearerToken(h string) (string, bool) {
	scheme, cred, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(cred, " "), true
}

func (g *httpGuard) originOK(o string) bool {
	// An Origin is scheme://host[:port] and nothing else; compare it whole.
	return g.origins[strings.ToLower(strings.TrimSuffix(o, "/"))]
}

func (g *httpGuard) refuse(w http.ResponseWriter, r *http.Request, status int, why string) {
	attrs := []any{slog.String("reason", why), slog.String("remote", r.RemoteAddr), slog.String("host", r.Host)}
	if t, ok := workspace.TenantFrom(r.Context()); ok {
		attrs = append(attrs, slog.String("tenant", t))
	}
	g.log.Warn("mcp http request refused", attrs...)
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
