package egress_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paigasus/helikon/egress"
	"github.com/paigasus/helikon/ssrf"
)

// countingResolver answers from a fixed table and counts lookups per name.
type countingResolver struct {
	mu      sync.Mutex
	table   map[string][]netip.Addr
	lookups map[string]int
}

func newResolver(table map[string]string) *countingResolver {
	r := &countingResolver{table: map[string][]netip.Addr{}, lookups: map[string]int{}}
	for name, addrs := range table {
		for _, a := range strings.Split(addrs, ",") {
			r.table[name] = append(r.table[name], netip.MustParseAddr(a))
		}
	}
	return r
}

func (r *countingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups[host]++
	if a, ok := r.table[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func (r *countingResolver) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.lookups {
		n += c
	}
	return n
}

func (r *countingResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[host]
}

// countingListener counts accepted connections.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

func listen(t testing.TB) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return &countingListener{Listener: ln}
}

func portOf(t testing.TB, ln net.Listener) int {
	t.Helper()
	return ln.Addr().(*net.TCPAddr).Port
}

// echoServer echoes every connection back.
func echoServer(t testing.TB) *countingListener {
	ln := listen(t)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	return ln
}

// seenRequest is what the plain-HTTP upstream saw.
type seenRequest struct {
	Host, URI, ProxyAuth, ProxyConn string
}

func httpUpstream(t testing.TB) (*countingListener, chan seenRequest) {
	ln := listen(t)
	seen := make(chan seenRequest, 16)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- seenRequest{r.Host, r.RequestURI, r.Header.Get("Proxy-Authorization"), r.Header.Get("Proxy-Connection")}
		fmt.Fprint(w, "hello from upstream")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln, seen
}

// allowLoopback lets test upstreams on 127.0.0.1 through while keeping the
// real classifier for everything else.
func allowLoopback(a netip.Addr) error {
	if a == netip.MustParseAddr("127.0.0.1") {
		return nil
	}
	return ssrf.Check(a)
}

func startProxy(t testing.TB, p *egress.Proxy) string {
	t.Helper()
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- p.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Shutdown(ctx)
		if err := <-errc; !errors.Is(err, egress.ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return ln.Addr().String()
}

// rawClient speaks HTTP/1.1 to the proxy by hand.
type rawClient struct {
	c net.Conn
	r *bufio.Reader
}

func dialProxy(t testing.TB, addr string) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawClient{c: c, r: bufio.NewReader(c)}
}

func (rc *rawClient) do(t testing.TB, head string) *http.Response {
	t.Helper()
	if _, err := io.WriteString(rc.c, head); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(rc.r, nil)
	if err != nil {
		t.Fatalf("reading response to %q: %v", head, err)
	}
	return resp
}

func connectHead(authority string) string {
	return "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n"
}

func checkEcho(t testing.TB, rc *rawClient, msg string) {
	t.Helper()
	if _, err := io.WriteString(rc.c, msg); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(rc.r, buf); err != nil {
		t.Fatalf("reading echo: %v", err)
	}
	if string(buf) != msg {
		t.Fatalf("echo = %q, want %q", buf, msg)
	}
}

func TestConnectAllowedVariants(t *testing.T) {
	up := echoServer(t)
	port := portOf(t, up)
	res := newResolver(map[string]string{"allowed.test": "127.0.0.1", "api.allowed.test": "127.0.0.1", "a.wild.test": "127.0.0.1"})
	p := &egress.Proxy{
		Filter:    egress.DenyAll().AllowDomains("allowed.test", "*.wild.test").WithPorts(port),
		Resolver:  res,
		CheckAddr: allowLoopback,
	}
	addr := startProxy(t, p)
	for _, host := range []string{"allowed.test", "ALLOWED.Test", "allowed.test.", "api.allowed.test", "a.wild.test", "A.WILD.TEST."} {
		t.Run(host, func(t *testing.T) {
			rc := dialProxy(t, addr)
			resp := rc.do(t, connectHead(net.JoinHostPort(host, strconv.Itoa(port))))
			if resp.StatusCode != 200 {
				t.Fatalf("CONNECT %s: status %d (%s), want 200", host, resp.StatusCode, resp.Header.Get(egress.DeniedHeader))
			}
			checkEcho(t, rc, "ping through "+host)
		})
	}
}

func TestConnectDenied(t *testing.T) {
	up := echoServer(t)
	port := portOf(t, up)
	res := newResolver(map[string]string{
		"allowed.test": "127.0.0.1", "bad.allowed.test": "127.0.0.1", "wild.test": "127.0.0.1",
		"other.test": "127.0.0.1", "allowed.test.evil.test": "127.0.0.1", "notallowed.test": "127.0.0.1",
	})
	p := &egress.Proxy{
		Filter: egress.DenyAll().
			AllowDomains("allowed.test", "*.wild.test", "127.0.0.2").
			DenyDomains("bad.allowed.test").
			WithPorts(port),
		Resolver:  res,
		CheckAddr: allowLoopback,
	}
	addr := startProxy(t, p)
	ps := strconv.Itoa(port)
	tests := []struct {
		name, authority, reason string
	}{
		{"not in allow list", "other.test:" + ps, egress.ReasonNotAllowed},
		{"suffix trick", "allowed.test.evil.test:" + ps, egress.ReasonNotAllowed},
		{"prefix trick", "notallowed.test:" + ps, egress.ReasonNotAllowed},
		{"deny wins over allow", "bad.allowed.test:" + ps, egress.ReasonDenied},
		{"deny wins case and dot", "BAD.allowed.TEST.:" + ps, egress.ReasonDenied},
		{"subdomain of denied", "x.bad.allowed.test:" + ps, egress.ReasonDenied},
		{"wildcard excludes apex", "wild.test:" + ps, egress.ReasonNotAllowed},
		{"port not allowed", "allowed.test:443", egress.ReasonPort},
		{"ip literal not matched by domain", "127.0.0.1:" + ps, egress.ReasonNotAllowed},
		{"ipv6 literal", "[::1]:" + ps, egress.ReasonNotAllowed},
		{"allowed ip literal but loopback", "127.0.0.2:" + ps, egress.ReasonAddress},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := res.total()
			rc := dialProxy(t, addr)
			resp := rc.do(t, connectHead(tt.authority))
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("status %d, want 403", resp.StatusCode)
			}
			if got := resp.Header.Get(egress.DeniedHeader); got != tt.reason {
				t.Errorf("reason %q, want %q", got, tt.reason)
			}
			if n := res.total() - before; n != 0 {
				t.Errorf("denied name was resolved %d times; the filter must be checked before DNS", n)
			}
		})
	}
	if n := up.accepted.Load(); n != 0 {
		t.Errorf("upstream accepted %d connections for denied requests", n)
	}
}

// TestConnectNameResolvingToBlockedAddress uses the real SSRF classifier: an
// allowed name that resolves to loopback, metadata or a mix must be refused
// with no connection made.
func TestConnectNameResolvingToBlockedAddress(t *testing.T) {
	up := echoServer(t)
	port := portOf(t, up)
	res := newResolver(map[string]string{
		"loop.test":   "127.0.0.1",
		"meta.test":   "169.254.169.254",
		"meta6.test":  "fd00:ec2::254",
		"mixed.test":  "93.184.215.14,127.0.0.1",
		"mapped.test": "::ffff:127.0.0.1",
	})
	p := &egress.Proxy{
		Filter:   egress.AllowAll().WithPorts(port),
		Resolver: res,
	}
	// Behind the guard: were it broken, mixed.test would be dialled at its
	// public address; the tripwire stops and reports that instead.
	egress.SetDialTripwire(p, loopbackOnly(t))
	addr := startProxy(t, p)
	for _, host := range []string{"loop.test", "meta.test", "meta6.test", "mixed.test", "mapped.test"} {
		t.Run(host, func(t *testing.T) {
			rc := dialProxy(t, addr)
			resp := rc.do(t, connectHead(net.JoinHostPort(host, strconv.Itoa(port))))
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get(egress.DeniedHeader) != egress.ReasonAddress {
				t.Fatalf("status %d reason %q, want 403 %q", resp.StatusCode, resp.Header.Get(egress.DeniedHeader), egress.ReasonAddress)
			}
			if res.count(host) != 1 {
				t.Errorf("%s resolved %d times, want 1", host, res.count(host))
			}
		})
	}
	if n := up.accepted.Load(); n != 0 {
		t.Errorf("loopback upstream accepted %d connections; blocked addresses must never be dialled", n)
	}
}

func TestMalformedRequests(t *testing.T) {
	res := newResolver(map[string]string{"allowed.test": "127.0.0.1"})
	p := &egress.Proxy{Filter: egress.AllowAll(), Resolver: res, CheckAddr: allowLoopback}
	addr := startProxy(t, p)
	tests := []struct {
		name, head string
		status     int
	}{
		{"no port", connectHead("allowed.test"), 400},
		{"empty port", connectHead("allowed.test:"), 400},
		{"port 0", connectHead("allowed.test:0"), 400},
		{"port 65536", connectHead("allowed.test:65536"), 400},
		{"port with sign", connectHead("allowed.test:+443"), 400},
		{"port leading zero", connectHead("allowed.test:0443"), 400},
		{"userinfo", connectHead("user@allowed.test:443"), 400},
		{"userinfo with password", connectHead("user:pw@allowed.test:443"), 400},
		{"bracketed name", connectHead("[allowed.test]:443"), 400},
		{"bracketed ipv4", connectHead("[127.0.0.1]:443"), 400},
		{"unbracketed ipv6", connectHead("::1:443"), 400},
		{"ipv6 zone", "CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"no host", connectHead(":443"), 400},
		{"path", connectHead("/allowed.test:443"), 400},
		{"wildcard host", connectHead("*.allowed.test:443"), 400},
		{"empty label", connectHead("a..allowed.test:443"), 400},
		{"numeric decimal", connectHead("2130706433:443"), 403},
		{"numeric hex", connectHead("0x7f000001:443"), 403},
		{"numeric octal", connectHead("0177.0.0.1:443"), 403},
		{"numeric short", connectHead("127.1:443"), 403},
		{"origin form", "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400},
		{"https absolute form", "GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400},
		{"ftp absolute form", "GET ftp://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400},
		{"absolute form userinfo", "GET http://u:p@allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400},
		{"absolute form bad port", "GET http://allowed.test:99999/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400},
		{"options star", "OPTIONS * HTTP/1.1\r\nHost: allowed.test\r\n\r\n", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rc := dialProxy(t, addr)
			resp := rc.do(t, tt.head)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
	if n := res.total(); n != 0 {
		t.Errorf("%d lookups for malformed requests, want none", n)
	}
}

func TestPlainHTTPForwarding(t *testing.T) {
	up, seen := httpUpstream(t)
	port := portOf(t, up)
	res := newResolver(map[string]string{"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1"})
	creds := &egress.Credentials{User: "agent", Password: "s3cret"}
	p := &egress.Proxy{
		Filter:      egress.DenyAll().AllowDomains("allowed.test").WithPorts(port),
		Resolver:    res,
		CheckAddr:   allowLoopback,
		Credentials: creds,
	}
	addr := startProxy(t, p)
	auth := "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("agent:s3cret")) + "\r\n"
	ps := strconv.Itoa(port)
	rc := dialProxy(t, addr)

	// An allowed request whose Host header lies: the upstream must see the
	// checked authority, and no proxy credentials.
	resp := rc.do(t, "GET http://Allowed.Test.:"+ps+"/path?q=1 HTTP/1.1\r\nHost: evil.test\r\n"+auth+"Proxy-Connection: keep-alive\r\n\r\n")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "hello from upstream" {
		t.Fatalf("allowed request: %d %q", resp.StatusCode, body)
	}
	got := <-seen
	if want := (seenRequest{Host: "allowed.test:" + ps, URI: "/path?q=1"}); got != want {
		t.Errorf("upstream saw %+v, want %+v", got, want)
	}

	// The second request on the same kept-alive connection is checked on
	// its own, and the denied name is never resolved.
	resp = rc.do(t, "GET http://denied.test:"+ps+"/ HTTP/1.1\r\nHost: denied.test\r\n"+auth+"\r\n")
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get(egress.DeniedHeader) != egress.ReasonNotAllowed {
		t.Fatalf("second request to denied host: %d %q", resp.StatusCode, resp.Header.Get(egress.DeniedHeader))
	}
	if n := res.count("denied.test"); n != 0 {
		t.Errorf("denied.test resolved %d times", n)
	}

	// A third request, now a CONNECT to a denied host on the same
	// connection, is refused too.
	resp = rc.do(t, "CONNECT denied.test:"+ps+" HTTP/1.1\r\nHost: denied.test\r\n"+auth+"\r\n")
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("CONNECT after keep-alive: %d", resp.StatusCode)
	}
	if n := up.accepted.Load(); n != 1 {
		t.Errorf("upstream accepted %d connections, want 1", n)
	}
}

func TestCredentialsRequired(t *testing.T) {
	up := echoServer(t)
	port := portOf(t, up)
	creds, err := egress.NewCredentials()
	if err != nil {
		t.Fatal(err)
	}
	p := &egress.Proxy{
		Filter:      egress.AllowAll().WithPorts(port),
		Resolver:    newResolver(map[string]string{"allowed.test": "127.0.0.1"}),
		CheckAddr:   allowLoopback,
		Credentials: creds,
	}
	addr := startProxy(t, p)
	target := "allowed.test:" + strconv.Itoa(port)
	basic := func(s string) string {
		return "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(s)) + "\r\n"
	}
	for _, tt := range []struct {
		name, header string
		status       int
	}{
		{"missing", "", 407},
		{"wrong password", basic(creds.User + ":nope"), 407},
		{"wrong scheme", "Proxy-Authorization: Bearer " + creds.Password + "\r\n", 407},
		{"garbage", "Proxy-Authorization: Basic !!!\r\n", 407},
		{"right", basic(creds.User + ":" + creds.Password), 200},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rc := dialProxy(t, addr)
			resp := rc.do(t, "CONNECT "+target+" HTTP/1.1\r\nHost: "+target+"\r\n"+tt.header+"\r\n")
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if tt.status == 407 && resp.Header.Get("Proxy-Authenticate") == "" {
				t.Error("407 without Proxy-Authenticate")
			}
			if tt.status == 200 {
				// A round trip through the tunnel: the upstream has
				// accepted by the time its echo arrives, so the count
				// below does not race its accept loop.
				io.WriteString(rc.c, "ping")
				buf := make([]byte, 4)
				if _, err := io.ReadFull(rc.r, buf); err != nil || string(buf) != "ping" {
					t.Fatalf("echo through the tunnel: %q %v", buf, err)
				}
			}
		})
	}
	if s := fmt.Sprintf("%v %+v %#v %s", *creds, *creds, *creds, creds); strings.Contains(s, creds.Password) {
		t.Errorf("formatted credentials leak the password: %s", s)
	}
	if n := up.accepted.Load(); n != 1 {
		t.Errorf("upstream accepted %d connections, want 1 (only the authorized one)", n)
	}
}

func TestUnreachableUpstreamIs502(t *testing.T) {
	ln := listen(t)
	port := portOf(t, ln)
	ln.Close() // nothing listens there any more
	p := &egress.Proxy{
		Filter:   egress.AllowAll().WithPorts(port).WithPrivate(true),
		Resolver: newResolver(map[string]string{"gone.test": "127.0.0.1"}),
	}
	addr := startProxy(t, p)
	for _, head := range []string{
		connectHead("gone.test:" + strconv.Itoa(port)),
		connectHead("nxdomain.test:" + strconv.Itoa(port)),
		"GET http://gone.test:" + strconv.Itoa(port) + "/ HTTP/1.1\r\nHost: gone.test\r\n\r\n",
	} {
		rc := dialProxy(t, addr)
		if resp := rc.do(t, head); resp.StatusCode != http.StatusBadGateway {
			t.Errorf("%q: status %d, want 502", head, resp.StatusCode)
		}
	}
}

func TestSlowHeaderClientIsDropped(t *testing.T) {
	p := &egress.Proxy{Filter: egress.AllowAll(), HeaderTimeout: 100 * time.Millisecond}
	addr := startProxy(t, p)
	rc := dialProxy(t, addr)
	io.WriteString(rc.c, "CONNECT allowed.te")
	rc.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err := rc.r.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("proxy kept a client that never finished its request head")
	}
	if err == nil {
		// Go's server may answer 408 before closing; then EOF must follow.
		if _, err := io.ReadAll(rc.r); err != nil {
			t.Fatalf("after response: %v", err)
		}
	}
}

func TestHeaderTooLarge(t *testing.T) {
	p := &egress.Proxy{Filter: egress.AllowAll(), MaxHeaderBytes: 1024}
	addr := startProxy(t, p)
	rc := dialProxy(t, addr)
	resp := rc.do(t, "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test\r\nX-Big: "+strings.Repeat("a", 64<<10)+"\r\n\r\n")
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d, want 431", resp.StatusCode)
	}
}

func TestPipelinedBytesAfterConnectReachUpstream(t *testing.T) {
	up := echoServer(t)
	port := portOf(t, up)
	p := &egress.Proxy{Filter: egress.AllowAll().WithPorts(port), Resolver: newResolver(map[string]string{"a.test": "127.0.0.1"}), CheckAddr: allowLoopback}
	addr := startProxy(t, p)
	rc := dialProxy(t, addr)
	// The client sends its first tunnel bytes before the 200 arrives.
	resp := rc.do(t, connectHead("a.test:"+strconv.Itoa(port))+"early bytes")
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	buf := make([]byte, len("early bytes"))
	if _, err := io.ReadFull(rc.r, buf); err != nil || string(buf) != "early bytes" {
		t.Fatalf("early bytes: %q %v", buf, err)
	}
}

func TestTunnelHalfCloseAndIdle(t *testing.T) {
	up := echoServer(t)
	port := portOf(t, up)
	newProxy := func(idle time.Duration) string {
		return startProxy(t, &egress.Proxy{
			Filter:      egress.AllowAll().WithPorts(port),
			Resolver:    newResolver(map[string]string{"a.test": "127.0.0.1"}),
			CheckAddr:   allowLoopback,
			IdleTimeout: idle,
		})
	}

	// Half-close: the client finishes sending and still gets the echo.
	rc := dialProxy(t, newProxy(0))
	if resp := rc.do(t, connectHead("a.test:"+strconv.Itoa(port))); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	io.WriteString(rc.c, "last words")
	rc.c.(*net.TCPConn).CloseWrite()
	got, err := io.ReadAll(rc.r)
	if err != nil || string(got) != "last words" {
		t.Fatalf("after half-close: %q %v", got, err)
	}

	// Idle: a silent tunnel is closed by the proxy.
	rc = dialProxy(t, newProxy(200*time.Millisecond))
	if resp := rc.do(t, connectHead("a.test:"+strconv.Itoa(port))); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	rc.c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := rc.r.ReadByte(); err != io.EOF {
		t.Fatalf("idle tunnel: read returned %v, want EOF from the proxy closing it", err)
	}
}

func TestShutdownClosesTunnels(t *testing.T) {
	up := echoServer(t)
	port := portOf(t, up)
	p := &egress.Proxy{
		Filter:    egress.AllowAll().WithPorts(port),
		Resolver:  newResolver(map[string]string{"a.test": "127.0.0.1"}),
		CheckAddr: allowLoopback,
		Logger:    slog.New(slog.DiscardHandler),
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	errc := make(chan error, 1)
	go func() { errc <- p.Serve(ln) }()
	rc := dialProxy(t, ln.Addr().String())
	if resp := rc.do(t, connectHead("a.test:"+strconv.Itoa(port))); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	checkEcho(t, rc, "before shutdown")
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace: close everything now
	if err := p.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown = %v, want context.Canceled", err)
	}
	if err := <-errc; !errors.Is(err, egress.ErrServerClosed) {
		t.Errorf("Serve = %v", err)
	}
	if _, err := rc.r.ReadByte(); err == nil {
		t.Error("tunnel still open after Shutdown")
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("proxy still accepts after Shutdown")
	}
}

func TestThousandConcurrentTunnels(t *testing.T) {
	const n = 1000
	up := echoServer(t)
	port := portOf(t, up)
	p := &egress.Proxy{
		Filter:    egress.DenyAll().AllowDomains("a.test").WithPorts(port),
		Resolver:  newResolver(map[string]string{"a.test": "127.0.0.1"}),
		CheckAddr: allowLoopback,
		MaxConns:  n + 10,
	}
	addr := startProxy(t, p)
	clients := make([]*rawClient, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 64) // bound the dial burst, not the tunnels
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			c.SetDeadline(time.Now().Add(60 * time.Second))
			rc := &rawClient{c: c, r: bufio.NewReader(c)}
			io.WriteString(c, connectHead("a.test:"+strconv.Itoa(port)))
			resp, err := http.ReadResponse(rc.r, nil)
			if err != nil || resp.StatusCode != 200 {
				errs <- fmt.Errorf("tunnel %d: %v %v", i, resp, err)
				c.Close()
				return
			}
			clients[i] = rc
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// All n tunnels are open at once; now each carries data.
	for i, rc := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rc.c.Close()
			msg := "tunnel " + strconv.Itoa(i)
			io.WriteString(rc.c, msg)
			buf := make([]byte, len(msg))
			if _, err := io.ReadFull(rc.r, buf); err != nil || string(buf) != msg {
				t.Errorf("tunnel %d: %q %v", i, buf, err)
			}
		}()
	}
	wg.Wait()
	if got := up.accepted.Load(); got != n {
		t.Errorf("upstream accepted %d, want %d", got, n)
	}
}

func TestInvalidFilterRefusesToServe(t *testing.T) {
	p := &egress.Proxy{Filter: egress.DenyAll().AllowDomains("exa mple.com").WithPorts(70000)}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	err := p.Serve(ln)
	if err == nil || !strings.Contains(err.Error(), "exa mple.com") || !strings.Contains(err.Error(), "70000") {
		t.Fatalf("Serve = %v, want both problems reported", err)
	}
}
