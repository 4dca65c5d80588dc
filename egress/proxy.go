package egress

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paigasus/helikon/ssrf"
)

// Defaults of the [Proxy] limits. Each is used when the field is zero.
const (
	// DefaultMaxHeaderBytes bounds a request head. Real clients send well
	// under 8 KiB; 16 KiB leaves room for long cookies on plain HTTP.
	DefaultMaxHeaderBytes = 16 << 10
	// DefaultMaxConns bounds concurrently open client connections (tunnels
	// included). Further clients wait in the listen backlog.
	DefaultMaxConns = 1024
	// DefaultHeaderTimeout is how long a client has to send its request head.
	DefaultHeaderTimeout = 5 * time.Second
	// DefaultIdleTimeout closes keep-alive connections and tunnels that
	// carry no data for this long.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultDialTimeout bounds the DNS lookup and the connection to the
	// upstream, each.
	DefaultDialTimeout = 10 * time.Second
)

// DeniedHeader is the response header that carries the short reason of a 403.
const DeniedHeader = "X-Egress-Denied"

// Resolver looks up the addresses of a host name. [*net.Resolver]
// implements it; tests inject one that counts lookups.
type Resolver interface {
	// LookupNetIP returns the addresses of host, as
	// [net.Resolver.LookupNetIP] does; the proxy asks with network "ip".
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// ErrUnreachable matches errors about an upstream the proxy could not reach
// (answered with 502).
var ErrUnreachable = errors.New("upstream unreachable")

// Proxy is an HTTP forward proxy that enforces a [Filter]: HTTP CONNECT
// tunnels (what clients use for https://) and absolute-form plain HTTP
// requests (GET http://host/path), nothing else.
//
// For every request, and for every request of a kept-alive connection on
// its own, the proxy:
//
//  1. checks Proxy-Authorization when Credentials is set (407 otherwise);
//  2. parses the authority strictly with [ParseAuthority] (400 when
//     malformed, and for an origin-form request such as GET / HTTP/1.1: the
//     proxy never serves itself);
//  3. checks the filter on the names alone with [Filter.CheckHost], so a
//     refused name is never resolved (403 with an [DeniedHeader] reason);
//  4. resolves the name, refuses the destination when any resolved address
//     fails the address check (403), and connects only to checked
//     addresses, re-checking each one in the dialer just before connect(2);
//  5. tunnels bytes (CONNECT) or forwards the request with the Host header
//     rewritten to the checked authority and hop-by-hop headers (including
//     Proxy-Authorization) removed. An unreachable upstream is a 502.
//
// Bounds: request head size, concurrent client connections, time to send a
// request head (a client that is too slow is dropped), idle time of
// keep-alive connections and tunnels.
//
// What the proxy does NOT do: it does not look inside tunnels (TLS is end to
// end, so it cannot see the SNI or Host a client sends inside, only the
// CONNECT authority it checked); it does not handle https:// absolute-form
// requests, WebSocket upgrades of tunnels or HTTP/2 to the proxy; and it
// cannot stop a process that ignores HTTP_PROXY from connecting directly.
// Only a network layer that forces all traffic through it (a network
// namespace with default-deny, Landlock TCP rules) makes the filter
// unavoidable; see backend/microvm and backend/ossandbox.
//
// The exported fields configure the proxy; their zero values mean the
// defaults. They must not be changed after [Proxy.Serve] is called.
type Proxy struct {
	// Filter is enforced on every request.
	Filter Filter
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
	// CheckAddr vets every resolved address before the proxy connects; a
	// non-nil error refuses the destination. Nil means the SSRF classifier
	// (package ssrf: public unicast only). It is not called when
	// Filter.AllowPrivate is set: then only cloud metadata endpoints are
	// refused ([ssrf.CheckMetadata]).
	CheckAddr func(netip.Addr) error
	// Credentials, when set, are required in Proxy-Authorization (Basic),
	// so that other local processes cannot use the proxy.
	Credentials *Credentials
	// MaxHeaderBytes bounds a request head; 0 means DefaultMaxHeaderBytes.
	MaxHeaderBytes int
	// MaxConns bounds concurrent client connections; 0 means
	// DefaultMaxConns.
	MaxConns int
	// HeaderTimeout bounds the time to read a request head; 0 means
	// DefaultHeaderTimeout.
	HeaderTimeout time.Duration
	// IdleTimeout closes idle keep-alive connections and tunnels; 0 means
	// DefaultIdleTimeout. A tunnel is closed when neither direction has
	// carried data for between one and two IdleTimeouts.
	IdleTimeout time.Duration
	// DialTimeout bounds the lookup and the connection to an upstream,
	// each; 0 means DefaultDialTimeout.
	DialTimeout time.Duration
	// Logger receives one record per refused or failed request; nil means
	// slog.Default(). Credentials are never logged.
	Logger *slog.Logger

	mu        sync.Mutex
	srv       *http.Server
	closing   bool
	tunnels   map[*tunnel]struct{}
	transport *http.Transport
	// dialControl runs in the upstream dialer's Control after the address
	// check, for allowed addresses only; tests put a tripwire there.
	dialControl func(network, address string, c syscall.RawConn) error
}

// Credentials are the user name and password clients must present in
// Proxy-Authorization. Their String and Format methods do not reveal the
// password.
type Credentials struct {
	User     string // the Basic user name
	Password string // the Basic password; a secret, never logged
}

// NewCredentials returns random per-session credentials.
func NewCredentials() (*Credentials, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("generate proxy credentials: %w", err)
	}
	return &Credentials{User: "helikon", Password: hex.EncodeToString(b[:])}, nil
}

// String returns the user name and a redacted password.
func (c Credentials) String() string { return c.User + ":[REDACTED]" }

// GoString is String, so %#v does not reveal the password either.
func (c Credentials) GoString() string { return c.String() }

// LogValue keeps the password out of structured logs.
func (c Credentials) LogValue() slog.Value { return slog.StringValue(c.String()) }

// ProxyURL returns the URL a client puts in HTTP_PROXY to reach the proxy at
// hostport with these credentials. The result contains the password.
func (c *Credentials) ProxyURL(hostport string) string {
	if c == nil {
		return "http://" + hostport
	}
	return "http://" + urlEscape(c.User) + ":" + urlEscape(c.Password) + "@" + hostport
}

func urlEscape(s string) string {
	// Per-byte percent-encoding of everything but unreserved characters is
	// what userinfo needs; url.UserPassword would do it too but formats a
	// whole URL.
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func (p *Proxy) logger() *slog.Logger {
	if p.Logger != nil {
		return p.Logger
	}
	return slog.Default()
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// ListenAndServe listens on the TCP address addr and calls [Proxy.Serve].
func (p *Proxy) ListenAndServe(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("egress proxy: %w", err)
	}
	return p.Serve(ln)
}

// ErrServerClosed is returned by [Proxy.Serve] after [Proxy.Shutdown].
var ErrServerClosed = http.ErrServerClosed

// Serve accepts client connections on ln until [Proxy.Shutdown] is called,
// and then returns [ErrServerClosed]. It fails at once when the filter is
// invalid. A Proxy serves at most once.
func (p *Proxy) Serve(ln net.Listener) error {
	if err := p.Filter.Validate(); err != nil {
		ln.Close()
		return fmt.Errorf("egress proxy: invalid filter: %w", err)
	}
	var protocols http.Protocols
	protocols.SetHTTP1(true)
	srv := &http.Server{
		Handler:                      p,
		ReadHeaderTimeout:            orDefault(p.HeaderTimeout, DefaultHeaderTimeout),
		IdleTimeout:                  orDefault(p.IdleTimeout, DefaultIdleTimeout),
		MaxHeaderBytes:               orDefault(p.MaxHeaderBytes, DefaultMaxHeaderBytes),
		DisableGeneralOptionsHandler: true,
		Protocols:                    &protocols,
		ErrorLog:                     slog.NewLogLogger(p.logger().Handler(), slog.LevelDebug),
	}
	p.mu.Lock()
	if p.srv != nil || p.closing {
		p.mu.Unlock()
		ln.Close()
		return errors.New("egress proxy: Serve called twice or after Shutdown")
	}
	p.srv = srv
	p.tunnels = make(map[*tunnel]struct{})
	p.transport = p.newTransport()
	p.mu.Unlock()
	return srv.Serve(newLimitListener(ln, orDefault(p.MaxConns, DefaultMaxConns)))
}

// Shutdown stops accepting connections, closes idle ones, and waits for
// in-flight requests and open tunnels to finish until ctx is done; then it
// closes what is left and returns ctx's error.
func (p *Proxy) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	p.closing = true
	srv, tr := p.srv, p.transport
	p.mu.Unlock()
	if srv == nil {
		return nil
	}
	err := srv.Shutdown(ctx)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		p.mu.Lock()
		n := len(p.tunnels)
		if n == 0 || ctx.Err() != nil {
			for t := range p.tunnels {
				t.close()
			}
			p.mu.Unlock()
			break
		}
		p.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	tr.CloseIdleConnections()
	if err == nil {
		err = ctx.Err()
	}
	return err
}

// ServeHTTP handles one proxy request. It is exported so the proxy can be
// mounted in an *http.Server of the caller's; [Proxy.Serve] is the usual
// entry point and the only one that applies MaxConns and tunnels with
// splice(2).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.authorized(r) {
		w.Header().Set("Proxy-Authenticate", `Basic realm="helikon-egress"`)
		p.refuse(w, r, http.StatusProxyAuthRequired, "", "proxy authentication required")
		return
	}
	if r.Method == http.MethodConnect {
		p.serveConnect(w, r)
		return
	}
	p.serveForward(w, r)
}

func (p *Proxy) authorized(r *http.Request) bool {
	if p.Credentials == nil {
		return true
	}
	h := r.Header.Get("Proxy-Authorization")
	scheme, enc, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return false
	}
	want := p.Credentials.User + ":" + p.Credentials.Password
	return subtle.ConstantTimeCompare(raw, []byte(want)) == 1
}

// refuse writes an error response. reason, when set, goes in DeniedHeader.
func (p *Proxy) refuse(w http.ResponseWriter, r *http.Request, status int, reason, msg string) {
	if reason != "" {
		w.Header().Set(DeniedHeader, reason)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	fmt.Fprintln(w, msg)
	p.logger().Info("egress proxy refused request",
		"method", r.Method, "target", logTarget(r.RequestURI), "status", status, "reason", msg)
}

// logTarget is a request target fit for a log: credentials, query and
// fragment are cut, since URLs often carry tokens there. A target that does
// not parse is not logged at all.
func logTarget(target string) string {
	if !strings.Contains(target, "/") { // CONNECT's authority form, host:port
		if strings.ContainsAny(target, "@?#") {
			return "(redacted)"
		}
		return target
	}
	u, err := url.Parse(target)
	if err != nil {
		return "(unparseable)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
	return u.String()
}

// refuseErr maps an error of parsing, filter or dialing to a response.
func (p *Proxy) refuseErr(w http.ResponseWriter, r *http.Request, err error) {
	var de *DeniedError
	switch {
	case errors.As(err, &de):
		p.refuse(w, r, http.StatusForbidden, de.Reason, err.Error())
	case errors.Is(err, ErrMalformed):
		p.refuse(w, r, http.StatusBadRequest, "", err.Error())
	default:
		p.refuse(w, r, http.StatusBadGateway, "", err.Error())
	}
}

// destination parses and checks the target of r on names alone.
func (p *Proxy) destination(authority string, defaultPort int) (string, int, error) {
	host, port, err := ParseAuthority(authority, defaultPort)
	if err != nil {
		return "", 0, err
	}
	if err := p.Filter.CheckHost(host, port); err != nil {
		return "", 0, err
	}
	return host, port, nil
}

func (p *Proxy) serveConnect(w http.ResponseWriter, r *http.Request) {
	host, port, err := p.destination(r.RequestURI, 0)
	if err != nil {
		p.refuseErr(w, r, err)
		return
	}
	up, err := p.dial(r.Context(), host, port)
	if err != nil {
		p.refuseErr(w, r, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		p.refuse(w, r, http.StatusInternalServerError, "", "connection cannot be hijacked for a tunnel")
		return
	}
	client, brw, err := hj.Hijack()
	if err != nil {
		up.Close()
		p.logger().Warn("egress proxy: hijack failed", "err", err)
		return
	}
	t := &tunnel{client: client, upstream: up}
	if !p.track(t) {
		t.close()
		return
	}
	_ = client.SetDeadline(time.Time{})
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		t.close()
		p.untrack(t)
		return
	}
	// Bytes the client sent right after its request head (a TLS
	// ClientHello, typically) are already in the server's buffer.
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			t.close()
			p.untrack(t)
			return
		}
	}
	// The tunnel runs on fresh goroutines and the handler returns, so that
	// the HTTP server's per-connection state (buffers, request, a stack
	// grown while parsing) is freed for the life of the tunnel.
	go func() {
		defer p.untrack(t)
		t.run(orDefault(p.IdleTimeout, DefaultIdleTimeout))
	}()
}

func (p *Proxy) track(t *tunnel) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closing || p.tunnels == nil {
		return false
	}
	p.tunnels[t] = struct{}{}
	return true
}

func (p *Proxy) untrack(t *tunnel) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.tunnels, t)
}

func (p *Proxy) serveForward(w http.ResponseWriter, r *http.Request) {
	if !r.URL.IsAbs() {
		p.refuse(w, r, http.StatusBadRequest, "",
			"this is an egress proxy: send absolute-form requests (GET http://host/path) or CONNECT host:port")
		return
	}
	if r.URL.Scheme != "http" {
		p.refuse(w, r, http.StatusBadRequest, "",
			"only http:// URLs are forwarded; use CONNECT for https://")
		return
	}
	if r.URL.User != nil || r.URL.Opaque != "" {
		p.refuse(w, r, http.StatusBadRequest, "", "URLs with userinfo are not forwarded")
		return
	}
	host, port, err := p.destination(r.URL.Host, 80)
	if err != nil {
		p.refuseErr(w, r, err)
		return
	}
	p.mu.Lock()
	tr := p.transport
	p.mu.Unlock()
	if tr == nil { // mounted in a caller's server
		tr = p.lazyTransport()
	}
	hostHeader := host
	if strings.Contains(host, ":") {
		hostHeader = "[" + host + "]"
	}
	if port != 80 {
		hostHeader = joinHostPort(host, port)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme = "http"
			pr.Out.URL.Host = joinHostPort(host, port)
			pr.Out.Host = hostHeader
		},
		Transport:     tr,
		FlushInterval: -1,
		ErrorLog:      slog.NewLogLogger(p.logger().Handler(), slog.LevelDebug),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.refuseErr(w, r, err)
		},
	}
	rp.ServeHTTP(w, r)
}

func (p *Proxy) lazyTransport() *http.Transport {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.transport == nil {
		p.transport = p.newTransport()
	}
	return p.transport
}

func (p *Proxy) newTransport() *http.Transport {
	return &http.Transport{
		Proxy: nil, // never chain to a proxy from the environment
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			host, portStr, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			port, err := strconv.Atoi(portStr)
			if err != nil {
				return nil, err
			}
			return p.dial(ctx, host, port)
		},
		MaxIdleConns:           100,
		IdleConnTimeout:        orDefault(p.IdleTimeout, DefaultIdleTimeout),
		DisableCompression:     true,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// checkAddr vets one address the proxy is about to connect to.
func (p *Proxy) checkAddr(a netip.Addr) error {
	if p.Filter.AllowPrivate {
		return ssrf.CheckMetadata(a)
	}
	if p.CheckAddr != nil {
		return p.CheckAddr(a)
	}
	return defaultCheckAddr(a)
}

// addrDenied is the refusal of a, an address of host, by the address
// check's error err.
func addrDenied(host string, port int, a netip.Addr, err error) *DeniedError {
	de := &DeniedError{Host: host, Port: port, Reason: ReasonAddress, Addr: a.Unmap().String()}
	var be *ssrf.BlockedError
	if errors.As(err, &be) {
		de.Class = be.Reason
	}
	return de
}

// dial resolves host (unless it is an IP literal), refuses the destination
// when any address fails checkAddr, and connects to the first address that
// answers. The dialer's Control re-checks the exact address connect(2) gets.
func (p *Proxy) dial(ctx context.Context, host string, port int) (net.Conn, error) {
	timeout := orDefault(p.DialTimeout, DefaultDialTimeout)
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		var res Resolver = net.DefaultResolver
		if p.Resolver != nil {
			res = p.Resolver
		}
		lctx, cancel := context.WithTimeout(ctx, timeout)
		addrs, err = res.LookupNetIP(lctx, "ip", host)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("%w: look up %s: %w", ErrUnreachable, host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("%w: %s has no addresses", ErrUnreachable, host)
		}
	}
	for _, a := range addrs {
		if err := p.checkAddr(a.Unmap()); err != nil {
			return nil, addrDenied(host, port, a, err)
		}
	}
	d := net.Dialer{
		Timeout: timeout,
		Control: func(network, address string, c syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("dial %s: unexpected address form: %w", address, err)
			}
			if err := p.checkAddr(ap.Addr().Unmap()); err != nil {
				return addrDenied(host, port, ap.Addr(), err)
			}
			if p.dialControl != nil {
				return p.dialControl(network, address, c)
			}
			return nil
		},
	}
	var errs []error
	for _, a := range addrs {
		c, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(a.Unmap(), uint16(port)).String())
		if err == nil {
			return c, nil
		}
		var de *DeniedError
		if errors.As(err, &de) {
			return nil, de
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("%w: %s: %w", ErrUnreachable, joinHostPort(host, port), errors.Join(errs...))
}
