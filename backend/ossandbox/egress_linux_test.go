//go:build linux

package ossandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/egress"
)

// testResolver resolves every name ending in .test to 127.0.0.1 and counts
// lookups.
type testResolver struct {
	mu      sync.Mutex
	lookups map[string]int
}

func (r *testResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lookups == nil {
		r.lookups = map[string]int{}
	}
	r.lookups[host]++
	if strings.HasSuffix(host, ".test") {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	return nil, fmt.Errorf("no such host %s", host)
}

func (r *testResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[host]
}

func portOf(t *testing.T, u string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://"))
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

// TestEgress runs a curl-like client in the sandbox with network only
// through the egress proxy: an allowed domain is reached through the proxy
// (plain HTTP and a CONNECT tunnel), a denied one gets 403 without being
// resolved, and direct connections, UDP included, fail. Each refusal has a
// control run unconfined that succeeds. Root and unprivileged callers alike
// (the session's network namespace is the launcher's for the latter).
func TestEgress(t *testing.T) {
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintf(w, "hello from %s", r.Host) })
	plain := httptest.NewServer(hello)
	defer plain.Close()
	secure := httptest.NewTLSServer(hello)
	defer secure.Close()
	pp, sp := portOf(t, plain.URL), portOf(t, secure.URL)

	res := &testResolver{}
	b, _ := newTestBackend(t, Options{Egress: &Egress{
		Filter:    egress.DenyAll().AllowDomains("allowed.test").WithPorts(pp, sp),
		Resolver:  res,
		CheckAddr: func(netip.Addr) error { return nil }, // the test upstreams are on loopback
	}})
	if g := b.Guarantees(); g.Network != backend.IsolationProxied {
		t.Errorf("network guarantee %v; want proxied", g.Network)
	}

	for _, tc := range []struct {
		url, want string
	}{
		{fmt.Sprintf("http://allowed.test:%d/", pp), fmt.Sprintf("status 200\nhello from allowed.test:%d", pp)},
		{fmt.Sprintf("https://allowed.test:%d/", sp), fmt.Sprintf("status 200\nhello from allowed.test:%d", sp)},
		{fmt.Sprintf("http://denied.test:%d/", pp), "status 403"},
		{fmt.Sprintf("https://denied.test:%d/", sp), "Forbidden"},
		{fmt.Sprintf("http://allowed.test:%d/", pp+1), "status 403"}, // port not allowed
	} {
		got := sandboxed(t, b, nil, "http-get", tc.url)
		if !strings.Contains(got.out, tc.want) {
			t.Errorf("GET %s: %v; want %q", tc.url, got, tc.want)
		}
	}
	if n := res.count("denied.test"); n != 0 {
		t.Errorf("denied.test was resolved %d times; a refused name must never be", n)
	}

	// A second listener on the proxy's port at another loopback address of
	// this machine: Landlock lets connects to that port through, so only
	// the network namespace keeps the command from reaching it.
	var decoys []net.Listener
	if ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.2:%d", proxyPort)); err == nil {
		decoys = append(decoys, ln)
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	} else {
		t.Logf("decoy on the proxy's port not tested: %v", err)
	}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"direct to the upstream", []string{"net-connect", strings.TrimPrefix(plain.URL, "http://")}},
		{"udp", []string{"udp", strings.TrimPrefix(plain.URL, "http://")}},
		{"raw ICMP socket", []string{"socket3", "2", "3", "1"}},                                 // AF_INET, SOCK_RAW, IPPROTO_ICMP
		{"datagram ICMP socket", []string{"socket3", "2", "2", "1"}},                            // ping socket
		{"SCTP stream socket", []string{"socket3", "10", "1", "132"}},                           // AF_INET6, SOCK_STREAM, IPPROTO_SCTP
		{"netlink socket", []string{"socket3", "16", "3", "0"}},                                 // AF_NETLINK, SOCK_RAW
		{"TCP socket with high bits in the type", []string{"socket3", "2", "0x100000002", "0"}}, // the kernel reads SOCK_DGRAM
	} {
		if tc.args[0] == "socket3" {
			// Not every kernel has SCTP or ping sockets for this user:
			// check only that the sandbox refuses.
			if got := sandboxed(t, b, nil, tc.args...); got.code != attackBlocked {
				t.Errorf("%s: %v; want blocked", tc.name, got)
			}
			continue
		}
		got := sandboxed(t, b, nil, tc.args...)
		if got.code != attackBlocked {
			t.Errorf("%s: %v; want blocked", tc.name, got)
		}
		if ctl := unconfined(t, b.Dir(), nil, tc.args...); ctl.code != attackEscaped {
			t.Errorf("%s: control %v; want it to work unconfined", tc.name, ctl)
		}
	}
	// The proxy's listening socket and any other socket of this program
	// must not be inherited: holding the listener, the command could
	// accept its own connections in place of the proxy.
	if got := sandboxed(t, b, nil, "fds", "socket:"); got.code != attackBlocked {
		t.Errorf("inherited sockets: %v", got)
	}
	// Over IPv6 to this machine's loopback (its ::1 is not the
	// namespace's).
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		decoys = append(decoys, ln)
	} else {
		t.Logf("IPv6 loopback not tested: %v", err)
	}
	for _, ln := range decoys {
		addr := ln.Addr().String()
		if got := sandboxed(t, b, nil, "net-connect", addr); got.code != attackBlocked {
			t.Errorf("connect to %s (the proxy's port, outside the namespace): %v; want blocked", addr, got)
		}
		if ctl := unconfined(t, b.Dir(), nil, "net-connect", addr); ctl.code != attackEscaped {
			t.Errorf("control connect to %s: %v", addr, ctl)
		}
	}
}

// TestEgressFailsClosedWithoutNamespace: where an unprivileged caller's
// commands would run without the launcher's user namespace (so without a
// network namespace), a backend with the egress proxy or a loopback of
// its own refuses every command: TCP would otherwise be open to every
// address of this program's namespace.
func TestEgressFailsClosedWithoutNamespace(t *testing.T) {
	if isRoot() {
		t.Skip("root callers make the namespace themselves; this runs when the suite runs unprivileged")
	}
	launcherUnavailable = unix.EPERM
	defer func() { launcherUnavailable = nil }()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for name, o := range map[string]Options{
		"egress":   {Egress: &Egress{Filter: egress.DenyAll().AllowDomains("example.com")}},
		"loopback": {Loopback: true},
	} {
		t.Run(name, func(t *testing.T) {
			b, _ := newTestBackend(t, o)
			_, err := b.Run(context.Background(), &backend.Request{
				Argv: []string{attackBin(t), "net-connect", ln.Addr().String()}, SetEnv: []string{attackEnv + "=1"}})
			if !errors.Is(err, backend.ErrUnavailable) {
				t.Fatalf("Run without a network namespace = %v; want ErrUnavailable, nothing run", err)
			}
		})
	}
}

func TestEgressExcludesAllowNetwork(t *testing.T) {
	_, err := New(t.TempDir(), &Options{AllowNetwork: true, Egress: &Egress{}})
	if !errors.Is(err, errEgressAndNetwork) {
		t.Fatalf("New = %v; want errEgressAndNetwork", err)
	}
	_, err = New(t.TempDir(), &Options{Egress: &Egress{Filter: egress.Filter{Ports: []int{0}}}})
	if err == nil {
		t.Fatal("New accepted an invalid egress filter")
	}
}
