package webfetch

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/ssrf"
	"github.com/paigasus/helikon/ssrf/ssrftest"
)

// publicAddr is the loopback address the tests treat as the public
// internet: testCheck lets it through and judges every other address as
// ssrf.Check does.
var publicAddr = netip.MustParseAddr("127.0.0.2")

func testCheck(a netip.Addr) error {
	if a.WithZone("").Unmap() == publicAddr {
		return nil
	}
	return ssrf.Check(a)
}

// publicServer starts an HTTP server on 127.0.0.2 and counts its requests.
type publicServer struct {
	*httptest.Server
	requests atomic.Int64
}

func newPublicServer(t *testing.T, h http.Handler) *publicServer {
	t.Helper()
	ln, err := net.Listen("tcp", publicAddr.String()+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", publicAddr, err)
	}
	ps := &publicServer{}
	ps.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	ps.Listener.Close()
	ps.Listener = ln
	ps.Start()
	t.Cleanup(ps.Close)
	return ps
}

func (ps *publicServer) port() uint16 {
	return ps.Listener.Addr().(*net.TCPAddr).AddrPort().Port()
}

// env is a fetch test environment: a resolver that maps public.test to the
// public server, tripwires on 127.0.0.1 and ::1, and a base-dialer tripwire
// for addresses that are not on this machine.
type env struct {
	t        *testing.T
	res      *ssrftest.Resolver
	srv      *publicServer
	trip4    *ssrftest.Tripwire
	trip6    *ssrftest.Tripwire
	blockedN int
}

func newEnv(t *testing.T, h http.Handler) *env {
	e := &env{t: t, res: &ssrftest.Resolver{}}
	if h == nil {
		h = http.NotFoundHandler()
	}
	e.srv = newPublicServer(t, h)
	e.trip4 = ssrftest.NewTripwire(t, "127.0.0.1:0")
	e.trip6 = ssrftest.NewTripwire(t, "[::1]:0")
	e.res.Set("public.test", publicAddr.String())
	e.res.Set("www.public.test", publicAddr.String())
	e.res.Set("other.test", publicAddr.String())
	e.res.Set("internal.test", "127.0.0.1")
	e.res.Set("internal6.test", "::1")
	e.res.Set("mapped.test", "::ffff:127.0.0.1")
	e.res.Set("localhost", "127.0.0.1,::1")
	e.res.Set("multi.test", publicAddr.String()+",127.0.0.1")
	e.res.Set("metadata.test", "169.254.169.254")
	e.res.Set("ula.test", "fd00:ec2::254")
	e.res.Set("rfc1918.test", "10.1.2.3")
	return e
}

// opts returns options with the test resolver, classifier and tripwire.
func (e *env) opts(o Options) *Options {
	o.Resolver = e.res
	if o.check == nil {
		o.check = testCheck
	}
	o.control = onlyPublic(e.t)
	return &o
}

// onlyPublic is a base-dialer Control that lets connections to publicAddr
// through and stops (and reports) any other: it stands behind the guard, so
// a broken guard cannot send a packet to 10.0.0.1 or 169.254.169.254.
func onlyPublic(t *testing.T) func(string, string, syscall.RawConn) error {
	trip := ssrftest.NoConnect(t)
	return func(network, address string, c syscall.RawConn) error {
		if ap, err := netip.ParseAddrPort(address); err == nil && ap.Addr().Unmap() == publicAddr {
			return nil
		}
		return trip(network, address, c)
	}
}

func (e *env) url(path string) string {
	return fmt.Sprintf("http://public.test:%d%s", e.srv.port(), path)
}

func (e *env) assertTripwiresUntouched() {
	e.t.Helper()
	e.trip4.AssertUntouched(e.t)
	e.trip6.AssertUntouched(e.t)
}

// blockedURLs are URLs that must be refused, each pointing at a tripwire
// where the address is on this machine.
func (e *env) blockedURLs() []string {
	p4, p6 := e.trip4.Port(), e.trip6.Port()
	u := []string{
		fmt.Sprintf("http://127.0.0.1:%d/", p4),
		fmt.Sprintf("http://127.0.0.1.:%d/", p4),
		fmt.Sprintf("http://0.0.0.0:%d/", p4),
		fmt.Sprintf("http://[::1]:%d/", p6),
		fmt.Sprintf("http://[::1%%25lo]:%d/", p6),
		fmt.Sprintf("http://[::]:%d/", p6),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", p4),
		fmt.Sprintf("http://[::ffff:7f00:1]:%d/", p4),
		fmt.Sprintf("http://[fe80::1%%25lo]:%d/", p6),
		fmt.Sprintf("http://internal.test:%d/", p4),
		fmt.Sprintf("http://INTERNAL.test.:%d/", p4),
		fmt.Sprintf("http://internal6.test:%d/", p6),
		fmt.Sprintf("http://mapped.test:%d/", p4),
		fmt.Sprintf("http://localhost:%d/", p4),
		fmt.Sprintf("http://multi.test:%d/", p4),
		fmt.Sprintf("http://user:pw@public.test:%d/", e.srv.port()),
		fmt.Sprintf("http://public.test:%d@127.0.0.1:%d/", e.srv.port(), p4),
		fmt.Sprintf("http://127.0.0.1:%d#@public.test/", p4),
		fmt.Sprintf("http://127.0.0.1:%d?@public.test/", p4),
		"http://169.254.169.254/latest/meta-data/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://metadata.test/latest/meta-data/",
		"http://ula.test/",
		"http://rfc1918.test/",
		"http://10.0.0.1/",
		"http://100.64.0.1/",
		"http://[64:ff9b::a9fe:a9fe]/",
		"http://[2002:7f00:1::1]/",
		"http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
		"file:///etc/passwd",
		"gopher://127.0.0.1:70/_GET",
		"ftp://public.test/",
		"dict://127.0.0.1:11211/stats",
	}
	for _, s := range []string{"2130706433", "0x7f000001", "0177.0.0.1", "127.1", "0x7f.1", "017700000001", "0"} {
		u = append(u, fmt.Sprintf("http://%s:%d/", s, p4))
	}
	return u
}

func TestFetchRefusesBlockedTargetsWithoutConnecting(t *testing.T) {
	e := newEnv(t, nil)
	tool, err := New[struct{}](e.opts(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range e.blockedURLs() {
		_, err := invoke(tool, Args{URL: u})
		if helikon.KindOf(err) != helikon.KindDenied {
			t.Errorf("fetch %s: %v, want a denied error", u, err)
		}
	}
	if n := e.srv.requests.Load(); n != 0 {
		t.Errorf("the public server got %d requests; refused URLs must not be fetched at all", n)
	}
	e.assertTripwiresUntouched()
}

func TestFetchRefusesRedirectIntoBlockedTargets(t *testing.T) {
	secret := "SECRET-BODY-7d1f"
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(http.StatusFound)
		fmt.Fprint(w, secret)
	}))
	tool, err := New[struct{}](e.opts(Options{}))
	if err != nil {
		t.Fatal(err)
	}
	targets := e.blockedURLs()
	for _, target := range targets {
		_, err := invoke(tool, Args{URL: e.url("/r?token=hunter2&to=" + url.QueryEscape(target))})
		if helikon.KindOf(err) != helikon.KindDenied {
			t.Errorf("redirect to %s: %v, want a denied error", target, err)
			continue
		}
		if msg := err.Error(); strings.Contains(msg, secret) || strings.Contains(msg, "hunter2") {
			t.Errorf("redirect to %s: the error leaks the body or the query: %s", target, msg)
		}
	}
	if n := e.srv.requests.Load(); n != int64(len(targets)) {
		t.Errorf("the public server got %d requests, want %d (one per redirect)", n, len(targets))
	}
	e.assertTripwiresUntouched()
}

func TestFetchRebindingOnSecondConnectionRefused(t *testing.T) {
	var res ssrftest.Resolver
	var trip *ssrftest.Tripwire
	var srv *publicServer
	// The rebinding target must listen on the same port as the server,
	// on 127.0.0.1; retry until a port free on both is found.
	for i := 0; i < 20 && trip == nil; i++ {
		srv = newPublicServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/first" {
				w.Header().Set("Connection", "close")
				http.Redirect(w, r, "/second", http.StatusFound)
				return
			}
			fmt.Fprint(w, "rebinding worked: this must never be read")
		}))
		if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", srv.port())); err == nil {
			ln.Close()
			trip = ssrftest.NewTripwire(t, fmt.Sprintf("127.0.0.1:%d", srv.port()))
		}
	}
	if trip == nil {
		t.Skip("no port free on both 127.0.0.1 and 127.0.0.2")
	}
	res.Set("rebind.test", publicAddr.String(), "127.0.0.1")
	tool, err := New[struct{}](&Options{Resolver: &res, check: testCheck, control: onlyPublic(t)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = invoke(tool, Args{URL: fmt.Sprintf("http://rebind.test:%d/first", srv.port())})
	if !errors.Is(err, ssrf.ErrBlocked) || helikon.KindOf(err) != helikon.KindDenied {
		t.Fatalf("fetch after rebinding: %v, want denied and blocked", err)
	}
	if res.Calls("rebind.test") != 2 {
		t.Errorf("rebind.test looked up %d times, want 2 (the test did not exercise rebinding)", res.Calls("rebind.test"))
	}
	trip.AssertUntouched(t)
}

func TestFetchTooManyRedirects(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop/"+fmt.Sprint(time.Now().UnixNano()), http.StatusMovedPermanently)
	}))
	tool, _ := New[struct{}](e.opts(Options{}))
	_, err := invoke(tool, Args{URL: e.url("/loop")})
	if !errors.Is(err, ErrTooManyRedirects) || helikon.KindOf(err) != helikon.KindDenied {
		t.Fatalf("redirect loop: %v, want denied with ErrTooManyRedirects", err)
	}
	if want := "starting at " + e.url("/loop"); !strings.HasSuffix(err.Error(), want) {
		t.Errorf("redirect loop: %q, want it to name the first URL (%q)", err, want)
	}
	if n := e.srv.requests.Load(); n != MaxRedirects+1 {
		t.Errorf("server got %d requests, want %d", n, MaxRedirects+1)
	}
}

func TestFetchFollowsRedirects(t *testing.T) {
	e := newEnv(t, nil)
	e.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, fmt.Sprintf("http://www.public.test:%d/b", e.srv.port()), http.StatusMovedPermanently)
		case "/b":
			http.Redirect(w, r, "/c#frag", http.StatusTemporaryRedirect)
		default:
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "arrived at ", r.URL.Path)
		}
	})
	tool, _ := New[struct{}](e.opts(Options{}))
	out, err := invoke(tool, Args{URL: e.url("/a")})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("http://www.public.test:%d/c", e.srv.port())
	if out.URL != want || out.Content != "arrived at /c" || out.Format != FormatText {
		t.Errorf("got %+v, want url %s and the text of /c", out, want)
	}
}

func TestFetchHostLists(t *testing.T) {
	e := newEnv(t, nil)
	e.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "ok")
	})
	p := e.srv.port()
	cases := []struct {
		name  string
		opts  Options
		url   string
		allow bool
	}{
		{"allowed host", Options{AllowedHosts: []string{"public.test"}}, e.url("/"), true},
		{"allowed subdomain", Options{AllowedHosts: []string{"public.test"}}, fmt.Sprintf("http://www.public.test:%d/", p), true},
		{"wildcard excludes apex", Options{AllowedHosts: []string{"*.public.test"}}, e.url("/"), false},
		{"wildcard subdomain", Options{AllowedHosts: []string{"*.public.test"}}, fmt.Sprintf("http://www.public.test:%d/", p), true},
		{"not on allow list", Options{AllowedHosts: []string{"example.com"}}, e.url("/"), false},
		{"deny wins", Options{AllowedHosts: []string{"public.test"}, DeniedHosts: []string{"www.public.test"}}, fmt.Sprintf("http://www.public.test:%d/", p), false},
		{"denied host", Options{DeniedHosts: []string{"PUBLIC.TEST."}}, e.url("/"), false},
		{"redirect off the allow list", Options{AllowedHosts: []string{"public.test"}}, e.url("/?to=" + url.QueryEscape(fmt.Sprintf("http://other.test:%d/", p))), false},
		{"redirect to a denied host", Options{DeniedHosts: []string{"other.test"}}, e.url("/?to=" + url.QueryEscape(fmt.Sprintf("http://other.test:%d/", p))), false},
	}
	for _, tc := range cases {
		tool, err := New[struct{}](e.opts(tc.opts))
		if err != nil {
			t.Fatal(err)
		}
		_, err = invoke(tool, Args{URL: tc.url})
		switch {
		case tc.allow && err != nil:
			t.Errorf("%s: %v, want success", tc.name, err)
		case !tc.allow && (!errors.Is(err, ErrHostDenied) || helikon.KindOf(err) != helikon.KindDenied):
			t.Errorf("%s: %v, want denied with ErrHostDenied", tc.name, err)
		}
	}
	if _, err := New[struct{}](&Options{AllowedHosts: []string{"exa mple.com"}}); err == nil {
		t.Error("an invalid host pattern was accepted")
	}
}

func TestFetchDripServerHitsTimeout(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := 0; i < 60; i++ { // one byte a second, for at most a minute
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
			}
		}
	}))
	tool, _ := New[struct{}](e.opts(Options{Timeout: 1500 * time.Millisecond}))
	_, err := invoke(tool, Args{URL: e.url("/drip")})
	if !errors.Is(err, context.DeadlineExceeded) || helikon.KindOf(err) != helikon.KindOther {
		t.Fatalf("drip: %v, want an other error wrapping context.DeadlineExceeded", err)
	}
}

// gzipBomb returns a gzip stream that expands to n bytes of 'a': one member
// compressing 1 MiB, repeated (gzip readers, Go's included, read
// concatenated members as one stream), so building it stays cheap.
func gzipBomb(n int) []byte {
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(bytes.Repeat([]byte("a"), 1<<20))
	zw.Close()
	return bytes.Repeat(member.Bytes(), n>>20)
}

// TestFetchGzipBombStopsAtCapWithBoundedMemory: the cap counts the bytes
// after every coding is undone, so a gzip bomb, and gzip over a gzip bomb,
// stop at the cap with memory bounded by it.
func TestFetchGzipBombStopsAtCapWithBoundedMemory(t *testing.T) {
	const expanded = 256 << 20
	const limit = 1 << 20
	bomb := gzipBomb(expanded)
	for _, tt := range []struct {
		encoding string
		body     []byte
	}{
		{"gzip", bomb},
		{"gzip, gzip", gzipped(t, bomb)},
	} {
		t.Run(tt.encoding, func(t *testing.T) {
			e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/plain")
				w.Header().Set("Content-Encoding", tt.encoding)
				w.Write(tt.body)
			}))
			tool, _ := New[struct{}](e.opts(Options{MaxBytes: limit}))
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			res, err := tool.Fetcher().Fetch(context.Background(), e.url("/bomb"), 0)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Truncated || len(res.Content) != limit {
				t.Errorf("Fetch: truncated=%v content=%d bytes, want truncated at %d", res.Truncated, len(res.Content), limit)
			}
			out, err := invoke(tool, Args{URL: e.url("/bomb")})
			if err != nil {
				t.Fatal(err)
			}
			if !out.Truncated || len(out.Content) != limit {
				t.Errorf("truncated=%v content=%d bytes, want truncated at %d", out.Truncated, len(out.Content), limit)
			}
			// The whole process allocated far less than the bomb's expanded
			// size: the body was read through the cap, never inflated in full.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("fetching a %d MiB bomb (%s) with a %d MiB cap allocated %d MiB", expanded>>20, tt.encoding, limit>>20, alloc>>20)
			}
			t.Logf("compressed %d KiB, expanded %d MiB", len(tt.body)>>10, expanded>>20)
		})
	}
}

func TestFetchMaxBytesArgumentLowersTheCap(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, strings.Repeat("a", 100))
	}))
	tool, _ := New[struct{}](e.opts(Options{MaxBytes: 50}))
	for _, tc := range []struct {
		arg  int64
		want int
		trun bool
	}{{0, 50, true}, {10, 10, true}, {1000, 50, true}} {
		out, err := invoke(tool, Args{URL: e.url("/"), MaxBytes: tc.arg})
		if err != nil || len(out.Content) != tc.want || out.Truncated != tc.trun {
			t.Errorf("max_bytes %d: %d bytes truncated=%v err=%v, want %d", tc.arg, len(out.Content), out.Truncated, err, tc.want)
		}
	}
	tool, _ = New[struct{}](e.opts(Options{MaxBytes: 100}))
	if out, err := invoke(tool, Args{URL: e.url("/")}); err != nil || out.Truncated || len(out.Content) != 100 {
		t.Errorf("a body of exactly the cap: %+v %v, want it whole and not truncated", out, err)
	}
}

func TestFetchContentTypes(t *testing.T) {
	bodies := map[string]struct{ ct, body string }{
		"/json":  {"application/json", `{"a": 1}`},
		"/md":    {"text/markdown; charset=utf-8", "# Title\n\ntext"},
		"/xml":   {"application/atom+xml", "<feed/>"},
		"/png":   {"image/png", "\x89PNG\r\n\x1a\n"},
		"/pdf":   {"application/pdf", "%PDF-1.7"},
		"/zip":   {"application/zip", "PK\x03\x04"},
		"/404":   {"text/html", "<html><head><title>Not here</title></head><body><h1>Page not found</h1><p>Try the search.</p></body></html>"},
		"/500":   {"application/octet-stream", "\x00\x01"},
		"/sniff": {"", "<!DOCTYPE html><html><head><title>Sniffed</title></head><body><p>Hello sniffed world.</p></body></html>"},
	}
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := bodies[r.URL.Path]
		if b.ct != "" {
			w.Header().Set("Content-Type", b.ct)
		} else {
			w.Header()["Content-Type"] = nil // no header, no sniffing by the server
		}
		switch r.URL.Path {
		case "/404":
			w.WriteHeader(404)
		case "/500":
			w.WriteHeader(500)
		}
		fmt.Fprint(w, b.body)
	}))
	tool, _ := New[struct{}](e.opts(Options{}))
	check := func(path, format, contains string, status int) {
		t.Helper()
		out, err := invoke(tool, Args{URL: e.url(path)})
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return
		}
		if out.Format != format || !strings.Contains(out.Content, contains) || out.Status != status {
			t.Errorf("%s: %+v, want format %s, status %d, content with %q", path, out, format, status, contains)
		}
	}
	check("/json", FormatText, `{"a": 1}`, 200)
	check("/md", FormatMarkdown, "# Title", 200)
	check("/xml", FormatText, "<feed/>", 200)
	check("/404", FormatMarkdown, "Page not found", 404)
	check("/500", FormatText, "", 500)
	check("/sniff", FormatMarkdown, "Hello sniffed world.", 200)
	for _, p := range []string{"/png", "/pdf", "/zip"} {
		_, err := invoke(tool, Args{URL: e.url(p)})
		if !errors.Is(err, ErrUnsupportedContent) || helikon.KindOf(err) != helikon.KindOther {
			t.Errorf("%s: %v, want an other error wrapping ErrUnsupportedContent", p, err)
		}
	}
}

func TestFetchIgnoresProxyEnvironment(t *testing.T) {
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		fmt.Fprint(w, "from the proxy")
	}))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("ALL_PROXY", proxy.URL)
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "direct")
	}))
	tool, _ := New[struct{}](e.opts(Options{}))
	out, err := invoke(tool, Args{URL: e.url("/")})
	if err != nil || out.Content != "direct" || proxied.Load() != 0 {
		t.Fatalf("got %+v, %v, proxy requests %d; want a direct fetch", out, err, proxied.Load())
	}
	// An explicit proxy is used. It is the operator's choice, so the
	// guard does not refuse it for being on loopback (an egress proxy
	// usually is), and AllowPrivate is not needed.
	pu, _ := url.Parse(proxy.URL)
	tool, _ = New[struct{}](&Options{Proxy: pu, Resolver: e.res})
	out, err = invoke(tool, Args{URL: e.url("/")})
	if err != nil || out.Content != "from the proxy" || proxied.Load() != 1 {
		t.Fatalf("explicit proxy: got %+v, %v, proxy requests %d", out, err, proxied.Load())
	}
	// URL vetting still applies to what is sent through it.
	_, err = invoke(tool, Args{URL: "http://127.0.0.1/"})
	if !errors.Is(err, ssrf.ErrBlocked) || proxied.Load() != 1 {
		t.Fatalf("a loopback URL through the proxy: %v, proxy requests %d; want blocked before the proxy", err, proxied.Load())
	}
}

func TestDefaultOptionsAreStrict(t *testing.T) {
	trip := ssrftest.NewTripwire(t, "127.0.0.1:0")
	tool, err := New[struct{}](nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = invoke(tool, Args{URL: fmt.Sprintf("http://127.0.0.1:%d/", trip.Port())})
	if !errors.Is(err, ssrf.ErrBlocked) || helikon.KindOf(err) != helikon.KindDenied {
		t.Errorf("default options: %v, want denied and blocked", err)
	}
	_, err = invoke(tool, Args{URL: fmt.Sprintf("http://localhost:%d/", trip.Port())})
	if !errors.Is(err, ssrf.ErrBlocked) {
		t.Errorf("default options, localhost: %v, want blocked", err)
	}
	trip.AssertUntouched(t)
	o := tool.Fetcher().Options()
	if o.Timeout != DefaultTimeout || o.MaxBytes != DefaultMaxBytes || o.AllowPrivate || o.UserAgent != DefaultUserAgent {
		t.Errorf("defaults: %+v", o)
	}
}

func TestAllowPrivateReachesLoopbackButNotMetadata(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "dev server")
	}))
	defer srv.Close()
	var res ssrftest.Resolver
	res.Set("metadata.test", "169.254.169.254")
	res.Set("oracle.test", "192.0.0.192")
	res.Set("oracle6.test", "::ffff:192.0.0.192")
	res.Set("nat64.test", "64:ff9b:1::a9fe:a9fe")
	tool, _ := New[struct{}](&Options{AllowPrivate: true, Resolver: &res, control: nil})
	out, err := invoke(tool, Args{URL: srv.URL})
	if err != nil || out.Content != "dev server" {
		t.Fatalf("AllowPrivate fetch of %s: %+v %v", srv.URL, out, err)
	}
	// Only the dev server may be connected to: it redirects to each target.
	trip := ssrftest.NoConnect(t)
	devOnly := func(network, address string, c syscall.RawConn) error {
		if address == srv.Listener.Addr().String() {
			return nil
		}
		return trip(network, address, c)
	}
	tool, _ = New[struct{}](&Options{AllowPrivate: true, Resolver: &res, control: devOnly})
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://metadata.test/", "http://2852039166/",
		"http://169.254.170.2/v2/credentials", "http://169.254.170.23/v1/credentials", "http://[fd00:ec2::23]/", "http://[fd20:ce::254]/",
		"http://100.100.100.200/latest/meta-data/", "http://168.63.129.16/machine?comp=goalstate",
		"http://[::ffff:169.254.169.254]/", "http://[64:ff9b::a9fe:a9fe]/", "http://[2002:a9fe:a9fe::]/",
		"http://192.0.0.192/latest/", "http://[::ffff:192.0.0.192]/", "http://oracle.test/", "http://oracle6.test/",
		"http://[64:ff9b:1::a9fe:a9fe]/", "http://[64:ff9b:1:a9fe:a9:fe00::]/", "http://nat64.test/",
	} {
		if _, err := invoke(tool, Args{URL: u}); !errors.Is(err, ssrf.ErrBlocked) || helikon.KindOf(err) != helikon.KindDenied {
			t.Errorf("AllowPrivate, %s: %v, want blocked", u, err)
		}
		redirect := srv.URL + "/?to=" + url.QueryEscape(u)
		if _, err := invoke(tool, Args{URL: redirect}); !errors.Is(err, ssrf.ErrBlocked) || helikon.KindOf(err) != helikon.KindDenied {
			t.Errorf("AllowPrivate, redirect to %s: %v, want blocked", u, err)
		}
	}
}

func TestMaxUsesIsSharedBySubAgents(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "ok")
	}))
	tool, _ := New[struct{}](e.opts(Options{MaxUses: 2}))
	rc := helikon.NewRunContext(struct{}{}, nil)
	sub, err := rc.SubAgent()
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(Args{URL: e.url("/")})
	call := func(rc *helikon.RunContext[struct{}]) error {
		_, err := tool.Invoke(rc.ToolContext(context.Background(), "c"), args)
		return err
	}
	// A refused URL does not use up the budget.
	if _, err := tool.Invoke(rc.ToolContext(context.Background(), "c"), json.RawMessage(`{"url":"file:///etc/passwd"}`)); helikon.KindOf(err) != helikon.KindDenied {
		t.Fatalf("file URL: %v", err)
	}
	if err := call(rc); err != nil {
		t.Fatal(err)
	}
	if err := call(sub); err != nil {
		t.Fatal(err)
	}
	err = call(sub)
	if helikon.KindOf(err) != helikon.KindDenied || !strings.Contains(err.Error(), "all 2") {
		t.Fatalf("third fetch: %v, want denied for the spent budget", err)
	}
	if err := call(rc); helikon.KindOf(err) != helikon.KindDenied {
		t.Fatalf("fourth fetch from the parent: %v, want denied", err)
	}
	if n := e.srv.requests.Load(); n != 2 {
		t.Errorf("server got %d requests, want 2", n)
	}
}

func TestConcurrentFetches(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		b, _ := os.ReadFile("testdata/news.html")
		w.Write(b)
	}))
	tool, _ := New[struct{}](e.opts(Options{}))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			out, err := invoke(tool, Args{URL: e.url("/")})
			if err != nil || !strings.Contains(out.Content, "floodplain") {
				t.Errorf("concurrent fetch: %v", err)
			}
		})
	}
	wg.Wait()
}

// invoke calls the tool through its JSON interface, as a runner would.
func invoke(tool *Tool[struct{}], a Args) (Result, error) {
	raw, _ := json.Marshal(a)
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	out, err := tool.Invoke(tc, raw)
	if err != nil {
		return Result{}, err
	}
	var r Result
	if err := json.Unmarshal(out, &r); err != nil {
		return Result{}, err
	}
	return r, nil
}
