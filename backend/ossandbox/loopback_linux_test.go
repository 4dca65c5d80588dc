//go:build linux

package ossandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
)

// hostServer serves body over HTTP on addr of this program's network
// namespace (the host's), or skips when addr cannot be bound.
func hostServer(t *testing.T, addr, body string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s here: %v", addr, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln
}

// startServer starts, in the background in b's session, a server of body
// on addr, and waits until it listens.
func startServer(t *testing.T, b *Backend, addr, body string) backend.Process {
	t.Helper()
	p, err := b.Start(t.Context(), &backend.StartRequest{Request: backend.Request{
		Argv:   []string{attackBin(t), "net-serve", addr, body},
		SetEnv: []string{attackEnv + "=1"},
	}, Lifetime: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Signal(os.Kill) })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var cur int64
	var out strings.Builder
	for !strings.Contains(out.String(), "listening") {
		c, err := p.Output().Wait(ctx, cur, 0)
		out.Write(c.Data)
		cur = c.Next
		if err != nil || (c.Closed && len(c.Data) == 0) {
			t.Fatalf("the session's server did not start: %q (%v)", out.String(), err)
		}
	}
	return p
}

// TestLoopbackSession is the attack suite of Options.Loopback, for the
// caller the tests run as (root, and unprivileged in .ci/run): a server
// one command of a session starts in the background is reachable by the
// session's next command, on the same port as a server of the host's
// loopback, which the session never reaches; another session reaches
// neither; the host's IPv6 loopback, its abstract Unix sockets, raw and
// packet sockets stay out of reach. Each refusal has a control run
// unconfined that succeeds.
func TestLoopbackSession(t *testing.T) {
	host := hostServer(t, "127.0.0.1:0", "hello from the host")
	port := host.Addr().(*net.TCPAddr).Port
	b, _ := newTestBackend(t, Options{Loopback: true})
	other, _ := newTestBackend(t, Options{Loopback: true})
	t.Cleanup(func() { b.Close(); other.Close() })
	for _, f := range b.Guarantees().Features {
		t.Log(f)
	}

	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	if ctl := unconfined(t, b.Dir(), nil, "http-get", url); !strings.Contains(ctl.out, "hello from the host") {
		t.Fatalf("control: GET %s on the host: %v", url, ctl)
	}
	// Before the session has a server, its loopback has nothing on the
	// host server's port: the host's loopback is not the session's.
	if got := sandboxed(t, b, nil, "http-get", url); got.code != attackBlocked || strings.Contains(got.out, "host") {
		t.Errorf("the host's loopback server from a session: %v; want refused", got)
	}

	// A server of the session, on the same port number as the host's.
	startServer(t, b, fmt.Sprintf("127.0.0.1:%d", port), "hello from the session")
	got := sandboxed(t, b, nil, "http-get", url)
	if !strings.Contains(got.out, "status 200\nhello from the session") {
		t.Errorf("the session's own server from its next command: %v; want its page", got)
	}
	if got := sandboxed(t, other, nil, "http-get", url); got.code != attackBlocked || strings.Contains(got.out, "hello") {
		t.Errorf("another session's server: %v; want refused", got)
	}

	// The host's IPv6 loopback.
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		srv := &http.Server{Handler: http.NotFoundHandler()}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		addr := ln.Addr().String()
		if ctl := unconfined(t, b.Dir(), nil, "net-connect", addr); ctl.code != attackEscaped {
			t.Errorf("control connect to %s: %v", addr, ctl)
		}
		if got := sandboxed(t, b, nil, "net-connect", addr); got.code != attackBlocked {
			t.Errorf("connect to the host's %s: %v; want blocked", addr, got)
		}
	} else {
		t.Logf("IPv6 loopback not tested: %v", err)
	}

	// The host's abstract Unix sockets (a network namespace has its own;
	// Landlock ABI 6 also scopes them to the command).
	abstract := fmt.Sprintf("@helikon-loopback-test-%d", port)
	if ln, err := net.Listen("unix", abstract); err == nil {
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
		if ctl := unconfined(t, b.Dir(), nil, "connect-unix", abstract); ctl.code != attackEscaped {
			t.Errorf("control connect to %s: %v", abstract, ctl)
		}
		if got := sandboxed(t, b, nil, "connect-unix", abstract); got.code != attackBlocked {
			t.Errorf("connect to the host's abstract socket %s: %v; want blocked", abstract, got)
		}
	} else {
		t.Logf("abstract Unix sockets not tested: %v", err)
	}

	// Sockets that would bypass TCP on the namespace's loopback: raw,
	// packet, netlink, UDP (seccomp; and without CAP_NET_RAW).
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"raw ICMP socket", []string{"socket3", "2", "3", "1"}},                      // AF_INET, SOCK_RAW, IPPROTO_ICMP
		{"raw IPv6 socket", []string{"socket3", "10", "3", "58"}},                    // AF_INET6, SOCK_RAW, IPPROTO_ICMPV6
		{"packet socket", []string{"socket3", "17", "3", "0x300"}},                   // AF_PACKET, SOCK_RAW, ETH_P_ALL
		{"netlink socket", []string{"socket3", "16", "3", "0"}},                      // AF_NETLINK, SOCK_RAW
		{"UDP socket", []string{"socket3", "2", "2", "0"}},                           // AF_INET, SOCK_DGRAM
		{"IPv6 UDP socket", []string{"socket3", "10", "2", "0"}},                     // AF_INET6, SOCK_DGRAM
		{"TCP socket with a raw type", []string{"socket3", "2", "0x100000003", "0"}}, // the kernel reads SOCK_RAW
	} {
		if got := sandboxed(t, b, nil, tc.args...); got.code != attackBlocked {
			t.Errorf("%s: %v; want blocked", tc.name, got)
		}
	}
	// TCP over IPv6 on the session's own loopback works (the namespace
	// has ::1 where the host has IPv6).
	if got := sandboxed(t, b, nil, "socket3", "10", "1", "0"); got.code != attackEscaped {
		t.Errorf("an IPv6 TCP socket in the session: %v; want allowed", got)
	}
}

// TestLoopbackExcludesAllowNetwork: the two settings contradict each other.
func TestLoopbackExcludesAllowNetwork(t *testing.T) {
	_, err := New(t.TempDir(), &Options{AllowNetwork: true, Loopback: true})
	if !errors.Is(err, errLoopbackAndNetwork) {
		t.Fatalf("New = %v; want errLoopbackAndNetwork", err)
	}
}

// TestLoopbackPerCommandLauncher: where the long-lived launcher cannot
// start, an unprivileged caller's command with Loopback gets a network
// namespace of its own from its launcher (a server it starts is reachable
// within the command, the host's loopback is not), and a backend with the
// egress proxy refuses its commands (no channel for the proxy's socket).
func TestLoopbackPerCommandLauncher(t *testing.T) {
	if isRoot() {
		t.Skip("root callers have no launcher; this runs when the suite runs unprivileged")
	}
	host := hostServer(t, "127.0.0.1:0", "hello from the host")
	url := "http://" + host.Addr().String() + "/"
	b, _ := newTestBackend(t, Options{Loopback: true})
	if !b.userns {
		t.Skip("no user namespaces here")
	}
	b.server = false
	att := attackBin(t)
	res, err := b.Run(context.Background(), &backend.Request{
		Command: fmt.Sprintf(`%[1]s http-get %[2]s; echo "host: $?"; %[1]s net-serve %[3]s 'hello from the command' & `+
			`for i in $(seq 100); do %[1]s http-get %[2]s | grep -q command && { echo served; break; }; sleep 0.05; done; kill $!`,
			att, url, host.Addr().String()),
		SetEnv: []string{attackEnv + "=1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	if !strings.Contains(out, fmt.Sprintf("host: %d", attackBlocked)) || strings.Contains(out, "hello from the host") {
		t.Errorf("the host's loopback from a per-command namespace: %q; want refused", out)
	}
	if !strings.Contains(out, "served") {
		t.Errorf("a server within the command: %q %q; want reached", out, res.Stderr)
	}

	e, _ := newTestBackend(t, Options{Egress: &Egress{}})
	e.server = false
	_, err = e.Run(context.Background(), &backend.Request{Argv: []string{att, "net-connect", host.Addr().String()}, SetEnv: []string{attackEnv + "=1"}})
	if !errors.Is(err, errNoProxyNS) {
		t.Errorf("egress with a launcher per command: %v; want errNoProxyNS", err)
	}
}
