package egress_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/paigasus/helikon/egress"
)

// loopbackOnly is a dial tripwire: it lets connections to 127.0.0.1 (the
// test upstreams) through and refuses and reports every other, so a broken
// guard cannot reach 169.254.169.254 or any other address off this machine.
func loopbackOnly(t *testing.T) func(string, string, syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		if ap, err := netip.ParseAddrPort(address); err == nil && ap.Addr().Unmap() == netip.MustParseAddr("127.0.0.1") {
			return nil
		}
		t.Errorf("the proxy tried to connect to %s; the guard should have refused it", address)
		return fmt.Errorf("tripwire: %s", address)
	}
}

// TestAllowPrivateStillRefusesMetadata: a filter that allows private
// addresses (to reach a service on the host) must still never open a
// connection to a cloud metadata endpoint, by name or by literal, in any
// IPv6 spelling of it.
func TestAllowPrivateStillRefusesMetadata(t *testing.T) {
	up := echoServer(t)
	port := portOf(t, up)
	ps := strconv.Itoa(port)
	res := newResolver(map[string]string{
		"local.test": "127.0.0.1",
		"meta.test":  "169.254.169.254",
		"ecs.test":   "169.254.170.2",
		"meta6.test": "fd00:ec2::254",
		"mixed.test": "127.0.0.1,169.254.169.254",
		"oci.test":   "192.0.0.192",
		"oci6.test":  "::ffff:192.0.0.192",
		"nat64.test": "64:ff9b:1::a9fe:a9fe",
	})
	p := &egress.Proxy{Filter: egress.AllowAll().WithPorts(port).WithPrivate(true), Resolver: res}
	egress.SetDialTripwire(p, loopbackOnly(t))
	addr := startProxy(t, p)
	for _, authority := range []string{
		"meta.test:" + ps, "ecs.test:" + ps, "meta6.test:" + ps, "mixed.test:" + ps,
		"169.254.169.254:" + ps, "[::ffff:169.254.169.254]:" + ps, "[fd00:ec2::254]:" + ps,
		"[64:ff9b::a9fe:a9fe]:" + ps, "100.100.100.200:" + ps,
		"192.0.0.192:" + ps, "[::ffff:192.0.0.192]:" + ps, "oci.test:" + ps, "oci6.test:" + ps,
		"[64:ff9b:1::a9fe:a9fe]:" + ps, "[64:ff9b:1:a9fe:a9:fe00::]:" + ps, "nat64.test:" + ps,
	} {
		rc := dialProxy(t, addr)
		resp := rc.do(t, connectHead(authority))
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(egress.DeniedHeader) != egress.ReasonAddress {
			t.Errorf("CONNECT %s with private addresses allowed: %d %q, want 403 %q", authority, resp.StatusCode, resp.Header.Get(egress.DeniedHeader), egress.ReasonAddress)
		}
	}
	// Plain HTTP is held to the same rule.
	rc := dialProxy(t, addr)
	resp := rc.do(t, "GET http://meta.test:"+ps+"/latest/meta-data/ HTTP/1.1\r\nHost: meta.test\r\n\r\n")
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET metadata with private addresses allowed: %d, want 403", resp.StatusCode)
	}
	// Loopback itself is what AllowPrivate is for.
	rc = dialProxy(t, addr)
	if resp := rc.do(t, connectHead("local.test:"+ps)); resp.StatusCode != 200 {
		t.Fatalf("CONNECT to loopback with private addresses allowed: %d", resp.StatusCode)
	}
	checkEcho(t, rc, "dev service")
	if n := up.accepted.Load(); n != 1 {
		t.Errorf("upstream accepted %d connections, want 1", n)
	}
}

// TestForwardIgnoresProxyEnvironment: the proxy forwards plain HTTP to the
// checked destination itself; an HTTP_PROXY in its environment must not
// make it hand requests to another proxy, which would reach whatever that
// proxy resolves.
func TestForwardIgnoresProxyEnvironment(t *testing.T) {
	up, seen := httpUpstream(t)
	port := portOf(t, up)
	other, otherSeen := httpUpstream(t)
	proxyURL := "http://127.0.0.1:" + strconv.Itoa(portOf(t, other))
	for _, k := range []string{"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"} {
		t.Setenv(k, proxyURL)
	}
	t.Setenv("NO_PROXY", "")
	t.Setenv("no_proxy", "")
	p := &egress.Proxy{
		Filter:    egress.DenyAll().AllowDomains("allowed.test").WithPorts(port),
		Resolver:  newResolver(map[string]string{"allowed.test": "127.0.0.1"}),
		CheckAddr: allowLoopback,
	}
	addr := startProxy(t, p)
	rc := dialProxy(t, addr)
	resp := rc.do(t, "GET http://allowed.test:"+strconv.Itoa(port)+"/direct HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	if len(otherSeen) != 0 || other.accepted.Load() != 0 {
		t.Fatalf("the request went to the proxy named in the environment: %+v", <-otherSeen)
	}
	if got := <-seen; got.URI != "/direct" {
		t.Errorf("upstream saw %+v", got)
	}
}

// seqResolver answers each lookup of a name with the next answer in turn.
type seqResolver struct {
	mu      sync.Mutex
	answers [][]netip.Addr
	calls   int
}

func (r *seqResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.answers[min(r.calls, len(r.answers)-1)]
	r.calls++
	return a, nil
}

// TestRebindingBetweenRequestsIsCaught: a name that resolves to an allowed
// address for one request and to a private one for the next is judged on
// each answer; the proxy connects only to the address it checked.
func TestRebindingBetweenRequestsIsCaught(t *testing.T) {
	up := echoServer(t)
	port := portOf(t, up)
	res := &seqResolver{answers: [][]netip.Addr{
		{netip.MustParseAddr("127.0.0.1")},
		{netip.MustParseAddr("10.0.0.1")},
		{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("169.254.169.254")},
	}}
	p := &egress.Proxy{Filter: egress.AllowAll().WithPorts(port), Resolver: res, CheckAddr: allowLoopback}
	egress.SetDialTripwire(p, loopbackOnly(t))
	addr := startProxy(t, p)
	target := "rebind.test:" + strconv.Itoa(port)
	for i, want := range []int{200, 403, 403} {
		rc := dialProxy(t, addr)
		if resp := rc.do(t, connectHead(target)); resp.StatusCode != want {
			t.Fatalf("CONNECT %d: status %d, want %d", i+1, resp.StatusCode, want)
		}
	}
	if n := up.accepted.Load(); n != 1 {
		t.Errorf("upstream accepted %d connections, want 1", n)
	}
}

// TestAddressRefusalsSayWhatHappened: an IP literal is not said to
// "resolve" (nothing was looked up), a name is, and with private addresses
// allowed a metadata refusal says "cloud metadata", not "non-public".
func TestAddressRefusalsSayWhatHappened(t *testing.T) {
	res := newResolver(map[string]string{"meta.test": "169.254.169.254", "local.test": "127.0.0.1"})
	for _, tc := range []struct {
		private   bool
		authority string
		want      []string
		notWant   []string
	}{
		{false, "127.0.0.1:8080", []string{"address refused (loopback)"}, []string{"resolves to"}},
		{false, "[::ffff:127.0.0.1]:8080", []string{"address refused (loopback)"}, []string{"resolves to"}},
		{false, "local.test:8080", []string{"resolves to 127.0.0.1 (loopback)"}, nil},
		{true, "169.254.169.254:8080", []string{"address refused (cloud metadata endpoint"}, []string{"resolves to", "non-public"}},
		{true, "[64:ff9b::a9fe:a9fe]:8080", []string{"address refused (cloud metadata endpoint 169.254.169.254"}, []string{"resolves to", "non-public"}},
		{true, "meta.test:8080", []string{"resolves to 169.254.169.254 (cloud metadata endpoint"}, []string{"non-public"}},
	} {
		p := &egress.Proxy{Filter: egress.AllowAll().WithPorts(8080).WithPrivate(tc.private), Resolver: res}
		egress.SetDialTripwire(p, loopbackOnly(t))
		rc := dialProxy(t, startProxy(t, p))
		resp := rc.do(t, connectHead(tc.authority))
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(egress.DeniedHeader) != egress.ReasonAddress {
			t.Errorf("CONNECT %s (private %v): %d %q, want 403 %q", tc.authority, tc.private, resp.StatusCode, resp.Header.Get(egress.DeniedHeader), egress.ReasonAddress)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(body), w) {
				t.Errorf("CONNECT %s (private %v): %q, want it to say %q", tc.authority, tc.private, body, w)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(string(body), w) {
				t.Errorf("CONNECT %s (private %v): %q, must not say %q", tc.authority, tc.private, body, w)
			}
		}
	}
}
