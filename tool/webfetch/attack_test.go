package webfetch

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/idna"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/ssrf"
	"github.com/paigasus/helikon/ssrf/ssrftest"
)

// TestFetchResponseHeaderFloodIsRefused: a server that answers with
// megabytes of headers is cut off at the transport's limit (1 MiB) instead
// of being buffered whole.
func TestFetchResponseHeaderFloodIsRefused(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/one":
			w.Header().Set("X-Flood", strings.Repeat("a", 2<<20))
		case "/many":
			for i := range 40_000 {
				w.Header().Set(fmt.Sprintf("X-F%d", i), strings.Repeat("b", 40))
			}
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "flooded")
	}))
	tool, _ := New[struct{}](e.opts(Options{}))
	for _, path := range []string{"/one", "/many"} {
		out, err := invoke(tool, Args{URL: e.url(path)})
		if err == nil || helikon.KindOf(err) != helikon.KindOther {
			t.Errorf("%s: %+v, %v; want an other error for 2 MiB of response headers", path, out, err)
		}
	}
}

// TestFetchSendsNoCredentialsAcrossRedirects: nothing a server hands out
// (cookies) and nothing about the previous hop (Referer with its query) is
// sent on a redirect, to the same host or another.
func TestFetchSendsNoCredentialsAcrossRedirects(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	e := newEnv(t, nil)
	e.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		for _, h := range []string{"Cookie", "Authorization", "Proxy-Authorization", "Referer"} {
			if v := r.Header.Get(h); v != "" {
				seen = append(seen, fmt.Sprintf("%s%s: %s: %s", r.Host, r.URL.Path, h, v))
			}
		}
		mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "SECRET-COOKIE", Path: "/"})
		w.Header().Set("WWW-Authenticate", `Basic realm="x"`)
		switch r.URL.Path {
		case "/start":
			http.Redirect(w, r, fmt.Sprintf("http://other.test:%d/hop", e.srv.port()), http.StatusFound)
		case "/hop":
			http.Redirect(w, r, fmt.Sprintf("http://public.test:%d/end", e.srv.port()), http.StatusTemporaryRedirect)
		default:
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "end")
		}
	})
	tool, _ := New[struct{}](e.opts(Options{}))
	out, err := invoke(tool, Args{URL: e.url("/start?token=SECRET-QUERY")})
	if err != nil || out.Content != "end" {
		t.Fatalf("redirect chain: %+v %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) > 0 {
		t.Errorf("credentials or referrers sent along redirects:\n%s", strings.Join(seen, "\n"))
	}
}

// TestFetchSilentServerHitsTimeout: a server that accepts and never
// answers costs the timeout, not forever.
func TestFetchSilentServerHitsTimeout(t *testing.T) {
	release := make(chan struct{})
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer close(release)
	tool, _ := New[struct{}](e.opts(Options{Timeout: time.Second}))
	_, err := invoke(tool, Args{URL: e.url("/silent")})
	if !errors.Is(err, context.DeadlineExceeded) || helikon.KindOf(err) != helikon.KindOther {
		t.Fatalf("silent server: %v, want an other error wrapping context.DeadlineExceeded", err)
	}
}

// TestFetchHostListsSeeHomographs: host lists compare the ASCII (punycode)
// form, so a pattern written in Unicode matches its punycode spelling and a
// look-alike with a Cyrillic letter does not match the Latin name.
func TestFetchHostListsSeeHomographs(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "ok")
	}))
	lookalike, err := idna.Lookup.ToASCII("\u0435xample.test") // Cyrillic е
	if err != nil {
		t.Fatal(err)
	}
	e.res.Set(lookalike, publicAddr.String())
	e.res.Set("example.test", publicAddr.String())
	e.res.Set("xn--bcher-kva.test", publicAddr.String())
	p := e.srv.port()
	cases := []struct {
		allow []string
		url   string
		ok    bool
	}{
		{[]string{"example.test"}, fmt.Sprintf("http://example.test:%d/", p), true},
		{[]string{"example.test"}, fmt.Sprintf("http://\u0435xample.test:%d/", p), false},
		{[]string{"example.test"}, fmt.Sprintf("http://%s:%d/", lookalike, p), false},
		{[]string{"bücher.test"}, fmt.Sprintf("http://xn--bcher-kva.test:%d/", p), true},
		{[]string{"bücher.test"}, fmt.Sprintf("http://BÜCHER.test:%d/", p), true},
		{[]string{"xn--bcher-kva.test"}, fmt.Sprintf("http://bücher.test:%d/", p), true},
	}
	for _, tc := range cases {
		tool, err := New[struct{}](e.opts(Options{AllowedHosts: tc.allow}))
		if err != nil {
			t.Fatal(err)
		}
		_, err = invoke(tool, Args{URL: tc.url})
		if tc.ok && err != nil {
			t.Errorf("allow %v, %s: %v, want success", tc.allow, tc.url, err)
		}
		if !tc.ok && (!errors.Is(err, ErrHostDenied) || helikon.KindOf(err) != helikon.KindDenied) {
			t.Errorf("allow %v, %s: %v, want denied with ErrHostDenied", tc.allow, tc.url, err)
		}
	}
}

// TestFetcherFetchVetsEveryURLItself: Fetcher.Fetch is public (the CLI's
// fetch command calls it without the tool), so it must vet the first URL
// itself: scheme, credentials, numeric spellings, blocked literals and the
// host lists, all refused before any connection.
func TestFetcherFetchVetsEveryURLItself(t *testing.T) {
	e := newEnv(t, nil)
	f, err := NewFetcher(e.opts(Options{DeniedHosts: []string{"other.test"}}))
	if err != nil {
		t.Fatal(err)
	}
	p4, sp := e.trip4.Port(), e.srv.port()
	tricks := []string{
		fmt.Sprintf("http://other.test:%d/", sp), // denied host
		fmt.Sprintf("http://public.test:%d\\@127.0.0.1:%d/", sp, p4),
		fmt.Sprintf("http://127.0.0.1:%d\\@public.test:%d/", p4, sp),
		fmt.Sprintf("http:\\\\127.0.0.1:%d/", p4),
		fmt.Sprintf("http:/127.0.0.1:%d/", p4),
		fmt.Sprintf("http:127.0.0.1:%d/", p4),
		fmt.Sprintf("http://%%31%%32%%37.0.0.1:%d/", p4),
		fmt.Sprintf("http://127.0.0.1%%2f@public.test:%d/", sp),
		fmt.Sprintf("http://127.0.0.1:%d%%2f@public.test/", p4),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", p4),
		fmt.Sprintf("http://\uff11\uff12\uff17.0.0.1:%d/", p4), // fullwidth digits
		fmt.Sprintf("http://127\u30020\u30020\u30021:%d/", p4), // ideographic full stops
		fmt.Sprintf(" http://127.0.0.1:%d/ ", p4),
		fmt.Sprintf("HTTP://127.0.0.1:%d/", p4),
		fmt.Sprintf("http://0x7f.0.0.1:%d/", p4),
		fmt.Sprintf("http://localhost.:%d/", p4),
	}
	for _, u := range append(e.blockedURLs(), tricks...) {
		if _, err := f.Fetch(context.Background(), u, 0); !Refused(err) {
			t.Errorf("Fetch(%s): %v, want a refusal", u, err)
		}
	}
	if n := e.srv.requests.Load(); n != 0 {
		t.Errorf("the public server got %d requests for refused URLs", n)
	}
	e.assertTripwiresUntouched()
}

// TestProxiedFetchVetsURLsBeforeTheProxy: with an explicit proxy, the proxy
// connects to the destination, so URL vetting is the guard on this side:
// blocked literals, numeric spellings, metadata (even with AllowPrivate),
// credentials, other schemes and the host lists must be refused before a
// request reaches the proxy, on the first URL and on every redirect.
func TestProxiedFetchVetsURLsBeforeTheProxy(t *testing.T) {
	var mu sync.Mutex
	var got []string
	proxy := newPublicServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.RequestURI)
		mu.Unlock()
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "via proxy")
	}))
	pu, _ := url.Parse(proxy.URL)
	bad := []string{
		"http://169.254.169.254/latest/meta-data/", "http://[fd00:ec2::254]/", "http://2852039166/",
		"http://[::ffff:169.254.169.254]/", "http://user:pw@public.test/", "ftp://public.test/", "http://denied.test/",
	}
	for _, private := range []bool{false, true} {
		f, err := NewFetcher(&Options{Proxy: pu, AllowPrivate: private, DeniedHosts: []string{"denied.test"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range bad {
			if _, err := f.Fetch(context.Background(), u, 0); !Refused(err) {
				t.Errorf("AllowPrivate=%v, proxied Fetch(%s): %v, want a refusal", private, u, err)
			}
			_, err := f.Fetch(context.Background(), "http://public.test/redirect?to="+url.QueryEscape(u), 0)
			if !Refused(err) {
				t.Errorf("AllowPrivate=%v, proxied redirect to %s: %v, want a refusal", private, u, err)
			}
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range got {
		if !strings.HasPrefix(r, "GET http://public.test/redirect?") {
			t.Errorf("the proxy received %q; refused URLs must not reach it", r)
		}
	}
}

// TestFetchRefusesBadPorts: like browsers (the Fetch standard's "bad ports"),
// WebFetch does not send HTTP to ports of other protocols (SMTP, IRC, SSH,
// ...), where it would probe the service or have request lines read as that
// protocol's commands; on the first URL and on redirects.
func TestFetchRefusesBadPorts(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	tool, _ := New[struct{}](e.opts(Options{}))
	for _, port := range []int{25, 22, 6667, 587, 110, 143, 10080} {
		target := fmt.Sprintf("http://public.test:%d/%%0D%%0AHELO%%20x", port)
		for _, u := range []string{target, e.url("/r?to=" + url.QueryEscape(target))} {
			_, err := invoke(tool, Args{URL: u})
			if !errors.Is(err, ErrPortBlocked) || helikon.KindOf(err) != helikon.KindDenied {
				t.Errorf("%s: %v, want denied with ErrPortBlocked", u, err)
			}
		}
	}
	for _, u := range []string{"http://public.test:80/", "https://public.test:443/", "http://public.test:8080/"} {
		parsed, _ := url.Parse(u)
		if _, err := tool.Fetcher().vet(parsed); err != nil {
			t.Errorf("vet(%s): %v, want allowed", u, err)
		}
	}
}

// TestFetchUnparseableLocationIsRefusedNamingTheHop: a redirect whose
// Location Go cannot parse (a backslash parsers disagree on) is a refusal
// naming the hop, with the parser's reason, under either mode; Go's client
// would fail with a plain error before any redirect hook ran.
func TestFetchUnparseableLocationIsRefusedNamingTheHop(t *testing.T) {
	e := newEnv(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", `http://a.example\@169.254.169.254/latest/meta-data/?token=SECRET`)
		w.WriteHeader(http.StatusFound)
	}))
	for _, private := range []bool{false, true} {
		tool, _ := New[struct{}](e.opts(Options{AllowPrivate: private}))
		_, err := invoke(tool, Args{URL: e.url("/hop?q=1")})
		if helikon.KindOf(err) != helikon.KindDenied || !errors.Is(err, ssrf.ErrInvalidHost) {
			t.Fatalf("AllowPrivate=%v: %v, want denied with ErrInvalidHost", private, err)
		}
		msg := err.Error()
		for _, w := range []string{"redirect from " + e.url("/hop"), `a.example\\@169.254.169.254`, "invalid userinfo", "not followed"} {
			if !strings.Contains(msg, w) {
				t.Errorf("AllowPrivate=%v: %q, want it to say %q", private, msg, w)
			}
		}
		if strings.Contains(msg, "SECRET") || strings.Contains(msg, "q=1") {
			t.Errorf("AllowPrivate=%v: %q repeats a query string", private, msg)
		}
	}
	e.assertTripwiresUntouched()
}

// TestFetchInvalidURLIsRefusedWithTheParsersReason: a string that is not a
// URL is refused (denied, like every parser-confusion trick) and the message
// keeps why it does not parse.
func TestFetchInvalidURLIsRefusedWithTheParsersReason(t *testing.T) {
	tool, _ := New[struct{}](&Options{control: ssrftest.NoConnect(t)})
	for raw, reason := range map[string]string{
		`http://127.1.1.1:80\@127.2.2.2:80/`: "invalid userinfo",
		"http://127.0.0.1:80\tx/":            "invalid control character",
		"http://a%zz.example/":               `invalid URL escape "%zz"`,
		"http://127.0.0.1:80:80/":            "invalid port",
	} {
		_, err := invoke(tool, Args{URL: raw})
		if helikon.KindOf(err) != helikon.KindDenied || !errors.Is(err, ssrf.ErrInvalidHost) {
			t.Errorf("%q: %v, want denied with ErrInvalidHost", raw, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "is not a valid URL") || !strings.Contains(msg, reason) {
			t.Errorf("%q: %q, want the parser's reason %q", raw, msg, reason)
		}
	}
}

// TestAllowPrivateRefusalsDoNotTalkAboutPublicAddresses: with private
// addresses allowed, a metadata refusal says so, not "only public internet
// addresses", and does not name a range the option allows; a literal is
// never said to "resolve".
func TestAllowPrivateRefusalsDoNotTalkAboutPublicAddresses(t *testing.T) {
	var res ssrftest.Resolver
	res.Set("metadata.test", "169.254.169.254")
	strict, _ := New[struct{}](&Options{Resolver: &res, control: ssrftest.NoConnect(t)})
	lax, _ := New[struct{}](&Options{AllowPrivate: true, Resolver: &res, control: ssrftest.NoConnect(t)})
	for _, tc := range []struct {
		tool    *Tool[struct{}]
		url     string
		want    []string
		notWant []string
	}{
		{strict, "http://127.0.0.1/", []string{"127.0.0.1 (loopback)", "only public internet addresses"}, []string{"resolves to"}},
		{strict, "http://①②⑦.⓪.⓪.①/", []string{`"①②⑦.⓪.⓪.①" is 127.0.0.1`}, []string{"resolves to"}},
		{lax, "http://[::ffff:169.254.169.254]/", []string{"cloud metadata endpoint"}, []string{"only public internet addresses", "link-local", "IPv4-mapped", "resolves to"}},
		{lax, "http://[64:ff9b::a9fe:a9fe]/", []string{"cloud metadata endpoint"}, []string{"only public internet addresses", "NAT64"}},
		{lax, "http://metadata.test/", []string{"metadata.test resolves to 169.254.169.254"}, []string{"only public internet addresses"}},
		{lax, "http://192.0.0.192/latest/", []string{"cloud metadata endpoint"}, []string{"only public internet addresses", "IETF protocol"}},
	} {
		_, err := invoke(tc.tool, Args{URL: tc.url})
		if helikon.KindOf(err) != helikon.KindDenied {
			t.Errorf("%s: %v, want denied", tc.url, err)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q, want it to say %q", tc.url, err, w)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q, must not say %q", tc.url, err, w)
			}
		}
	}
}

// A url with no scheme is the model's slip, not a refusal: invalid
// arguments, saying how to write it. With a scheme the guard decides.
func TestFetchURLWithoutASchemeIsInvalidArgs(t *testing.T) {
	tool, _ := New[struct{}](&Options{control: ssrftest.NoConnect(t)})
	for _, tc := range []struct {
		url  string
		kind helikon.ErrorKind
		want string
	}{
		{"example.com/page", helikon.KindInvalidArgs, "write it as https://example.com/page"},
		{"//example.com/page", helikon.KindInvalidArgs, "write it as https://example.com/page"},
		{"//127.0.0.1/", helikon.KindInvalidArgs, "write it as https://127.0.0.1/"},
		{"ftp://example.com/x", helikon.KindDenied, "only http and https"},
		{"file:///etc/passwd", helikon.KindDenied, "only http and https"},
		{"mailto:a@example.com", helikon.KindDenied, "only http and https"},
	} {
		_, err := invoke(tool, Args{URL: tc.url})
		if helikon.KindOf(err) != tc.kind || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v (kind %s), want kind %s saying %q", tc.url, err, helikon.KindOf(err), tc.kind, tc.want)
		}
	}
}
