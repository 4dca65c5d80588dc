package egress_test

import (
	"bufio"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/paigasus/helikon/egress"
	"github.com/paigasus/helikon/internal/hostmatch"
)

func FuzzParseAuthority(f *testing.F) {
	for _, s := range []string{
		"example.com:443", "[::1]:80", "1.2.3.4:0", "a@b:1", "[fe80::1%eth0]:443", "2130706433:80",
		"0x7f.1:443", "example.com.", "[example.com]:1", "::1:443", "x:+1", "x:0080", "*.a.com:443",
	} {
		f.Add(s, 0)
		f.Add(s, 80)
	}
	f.Fuzz(func(t *testing.T, s string, def int) {
		if def < 0 || def > 65535 {
			def = 80
		}
		host, port, err := egress.ParseAuthority(s, def)
		if err != nil {
			return
		}
		if port < 1 || port > 65535 {
			t.Fatalf("%q: port %d out of range", s, port)
		}
		if host == "" || strings.ContainsAny(host, "@/[]%: \t\r\n") && !isIPv6(host) {
			t.Fatalf("%q: accepted host %q", s, host)
		}
		if hostmatch.Normalize(host) != host {
			t.Fatalf("%q: host %q not normalized", s, host)
		}
		if !hostmatch.Valid(host) {
			t.Fatalf("%q: host %q is not valid for the filter", s, host)
		}
	})
}

func isIPv6(h string) bool {
	a, err := netip.ParseAddr(h)
	return err == nil && a.Is6() && a.Zone() == ""
}

// deniedResolver fails the test if the proxy resolves anything: the filter
// under test allows only one name and the fuzzer never reaches the network.
type deniedResolver struct{ t *testing.T }

func (r deniedResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if hostmatch.Normalize(host) != "allowed.test" {
		r.t.Fatalf("resolver called for %q, which the filter denies", host)
	}
	return nil, context.Canceled
}

// FuzzProxyRequest feeds arbitrary request heads to the proxy: it must never
// panic, never resolve a name the filter denies, and never answer a request
// for a denied name with anything but 400, 403 or 407.
func FuzzProxyRequest(f *testing.F) {
	for _, s := range []string{
		"CONNECT allowed.test:443 HTTP/1.1\r\nHost: x\r\n\r\n",
		"CONNECT evil.test:443 HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
		"GET http://allowed.test.evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
		"CONNECT [::1]:443 HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://user@allowed.test@evil.test/ HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, head string) {
		req, err := http.ReadRequest(bufio.NewReader(strings.NewReader(head)))
		if err != nil {
			return
		}
		p := &egress.Proxy{
			Filter:   egress.DenyAll().AllowDomains("allowed.test"),
			Resolver: deniedResolver{t},
			Logger:   slog.New(slog.DiscardHandler),
		}
		w := httptest.NewRecorder()
		p.ServeHTTP(w, req)
		if w.Code == http.StatusOK {
			t.Fatalf("request %q answered 200 without an upstream", head)
		}
	})
}
