// Package ssrftest holds test helpers for code built on package ssrf: a
// loopback listener that proves no connection reached it, and a resolver
// whose answers a test chooses, so that public-looking names can point at
// loopback listeners.
//
// Both are for tests only; nothing here belongs in a production path.
package ssrftest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Tripwire is a TCP listener on a loopback address that must never be
// reached. [Tripwire.AssertUntouched] proves it: it connects once itself and
// requires that its own connection be the first one the listener accepts.
// Because the kernel queues completed connections in order, any connection a
// guard let through earlier would be accepted first, whether or not anyone
// wrote to it.
type Tripwire struct {
	ln net.Listener
}

// sentinel is what the tripwire's own connection writes to identify itself.
const sentinel = "helikon-ssrftest-sentinel\n"

// NewTripwire listens on addr (such as "127.0.0.1:0" or "[::1]:0") and closes
// the listener when the test ends. It skips the test when the address family
// is not available on this machine.
func NewTripwire(t testing.TB, addr string) *Tripwire {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s on this machine (%v); the tripwire cases for it did not run", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
	return &Tripwire{ln: ln}
}

// Addr returns the listener's address.
func (w *Tripwire) Addr() netip.AddrPort {
	return w.ln.Addr().(*net.TCPAddr).AddrPort()
}

// Port returns the listener's port.
func (w *Tripwire) Port() uint16 { return w.Addr().Port() }

// AssertUntouched fails t when any connection other than its own sentinel
// reached the listener since it was created or since the last call.
func (w *Tripwire) AssertUntouched(t testing.TB) {
	t.Helper()
	n, err := w.drain()
	if err != nil {
		t.Fatalf("tripwire %s: %v", w.Addr(), err)
	}
	if n > 0 {
		t.Errorf("tripwire %s accepted %d connection(s) that the guard should have refused", w.Addr(), n)
	}
}

// drain connects a sentinel and accepts until it arrives, returning how many
// other connections were accepted first.
func (w *Tripwire) drain() (int, error) {
	c, err := net.DialTimeout("tcp", w.Addr().String(), 5*time.Second)
	if err != nil {
		return 0, fmt.Errorf("sentinel connect: %w", err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(sentinel)); err != nil {
		return 0, fmt.Errorf("sentinel write: %w", err)
	}
	others := 0
	for {
		if tl, ok := w.ln.(*net.TCPListener); ok {
			tl.SetDeadline(time.Now().Add(10 * time.Second))
		}
		ac, err := w.ln.Accept()
		if err != nil {
			return others, fmt.Errorf("accept: %w", err)
		}
		ac.SetReadDeadline(time.Now().Add(2 * time.Second))
		buf := make([]byte, len(sentinel))
		n, _ := ac.Read(buf)
		ac.Close()
		if string(buf[:n]) == sentinel {
			return others, nil
		}
		others++
	}
}

// Resolver answers lookups from a table a test fills in. A name may have a
// sequence of answers: each lookup takes the next one and the last repeats,
// which models DNS rebinding (a public answer first, a loopback one next).
// Unknown names fail as a DNS "no such host" does. It is safe for
// concurrent use.
type Resolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	calls   map[string]int
}

// Set makes host answer with each of answers in turn; each answer is a
// comma-separated list of addresses, such as "127.0.0.2,127.0.0.1".
func (r *Resolver) Set(host string, answers ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.answers == nil {
		r.answers = make(map[string][][]netip.Addr)
		r.calls = make(map[string]int)
	}
	var seq [][]netip.Addr
	for _, a := range answers {
		var addrs []netip.Addr
		for _, s := range strings.Split(a, ",") {
			addrs = append(addrs, netip.MustParseAddr(strings.TrimSpace(s)))
		}
		seq = append(seq, addrs)
	}
	r.answers[strings.ToLower(host)] = seq
}

// Calls returns how many times host was looked up and answered from the
// table; lookups of names never Set are not counted.
func (r *Resolver) Calls(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[strings.ToLower(host)]
}

// LookupNetIP implements ssrf.Resolver. network "ip4" and "ip6" filter the
// answer as the system resolver does.
func (r *Resolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := strings.ToLower(strings.TrimSuffix(host, "."))
	seq, ok := r.answers[key]
	if !ok || len(seq) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := r.calls[key]
	r.calls[key]++
	if i >= len(seq) {
		i = len(seq) - 1
	}
	var out []netip.Addr
	for _, a := range seq[i] {
		if network == "ip4" && !a.Unmap().Is4() || network == "ip6" && a.Is4() {
			continue
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, errors.New("no addresses of the requested family")
	}
	return out, nil
}

// NoConnect returns a [net.Dialer] Control function that fails t and refuses
// the connection. Chain it after a guard's Control: when the guard works it
// is never called, and when the guard is broken it stops the connect(2)
// before a single packet leaves for an address a test must never reach
// (10.0.0.1, 169.254.169.254, …).
func NoConnect(t testing.TB) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		t.Errorf("guard let a %s connection to %s through", network, address)
		return fmt.Errorf("ssrftest: connection to %s stopped by the test tripwire", address)
	}
}
