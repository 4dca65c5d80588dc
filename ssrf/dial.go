package ssrf

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Control returns a function for [net.Dialer.Control] (and
// [net.ListenConfig.Control]) that refuses every address check refuses. A nil
// check means [Check].
//
// The standard library calls it for every address it attempts, after the
// socket is created and before connect(2), with the numeric address the
// kernel is about to be given; so it sees the addresses of every record of a
// multi-record answer and cannot be fooled by a name that resolves
// differently on a second lookup (DNS rebinding). An address string it cannot
// parse is refused.
func Control(check func(netip.Addr) error) func(network, address string, c syscall.RawConn) error {
	if check == nil {
		check = Check
	}
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &BlockedError{Host: address, Reason: "unparseable address at connect time"}
		}
		if err := check(ap.Addr()); err != nil {
			return err
		}
		return nil
	}
}

// Resolver looks up the addresses of a host name. [*net.Resolver] implements
// it; tests inject their own to point names at loopback listeners.
type Resolver interface {
	// LookupNetIP returns the addresses of host, as
	// [net.Resolver.LookupNetIP] does; the dialer passes the network of the
	// dial mapped to "ip", "ip4" or "ip6".
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// DefaultDialTimeout bounds one connection attempt when neither the context
// nor the base dialer sets a limit.
const DefaultDialTimeout = 30 * time.Second

// Dialer makes outbound connections only to addresses its classifier allows.
// Its zero value is ready to use and applies [Check] with the system
// resolver.
//
// DialContext resolves the host itself, refuses the whole dial when any
// record of the answer is refused (before connecting anywhere, so an answer
// such as [public, 127.0.0.1] cannot be used to reach loopback when the
// public address fails), then connects to the checked addresses in order
// with a [net.Dialer] whose Control re-checks each one at connect time.
// Numeric host spellings (see [CheckHost]) are refused without a lookup.
//
// What Dialer guarantees: it never calls connect(2) with an address its
// classifier refuses, whatever the host name resolves to at any moment:
// every address of the answer is checked before the first socket is made,
// and again in Control right before connect(2).
//
// What lies outside that guarantee is the lookup itself. Given a
// multi-address answer, Go's resolver ([net.Resolver], for DNS and
// /etc/hosts answers alike: srcAddrs in net/addrselect.go) and glibc's
// getaddrinfo sort the addresses as RFC 6724 says, and to learn the source
// address each would use they connect(2) a UDP socket to every address of
// the answer (port 53 in Go) and close it at once. A UDP connect(2) sends
// no packet: it asks the kernel for a route. So with the system resolver a
// refused address can reach connect(2) of such a probe, before the answer
// is returned to the Dialer, but never a socket that carries data. A
// Resolver that does not sort (one that asks a DNS server itself, or the
// test resolver of ssrftest) avoids even the probe.
//
// What it does not do: it does not look at what is sent over the
// connection (an HTTP client must still vet every redirect with [VetURL]
// and must not use a proxy, which would hide the real destination); it does
// not stop a public host from relaying the request onwards; and it cannot
// see through tunnels the operating system routes transparently (a VPN, or
// a NAT64 gateway reached through a public-looking prefix other than the
// well-known ones). Only TCP and UDP networks are supported.
type Dialer struct {
	// Dialer is the base dialer whose settings (timeout, keep-alive, local
	// address) are used. Its own Control, if any, runs after the guard's
	// check and only for addresses the guard allowed. Nil means a dialer
	// with [DefaultDialTimeout].
	Dialer *net.Dialer
	// Resolver looks up host names. Nil means [net.DefaultResolver].
	Resolver Resolver
	// Check classifies each address. Nil means [Check]. Use [CheckMetadata]
	// to allow private addresses while still refusing cloud metadata.
	Check func(netip.Addr) error
}

// DialContext connects to address on the named network ("tcp", "tcp4",
// "tcp6", "udp", "udp4", "udp6") if, and only if, every address the host
// resolves to is allowed. A refusal is a *[BlockedError] (or wraps
// [ErrInvalidHost]); other failures are network errors.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	ipNet, err := ipNetwork(network)
	if err != nil {
		return nil, err
	}
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("ssrf: dial %s: %w", address, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("ssrf: dial %s: invalid port %q", address, portStr)
	}
	addrs, isLiteral, err := d.resolve(ctx, ipNet, host)
	if err != nil {
		return nil, err
	}
	name := withHost
	if isLiteral {
		name = literal
	}
	check := d.check()
	for _, a := range addrs {
		if err := check(a); err != nil {
			return nil, name(err, host)
		}
	}
	var base net.Dialer
	if d.Dialer != nil {
		base = *d.Dialer
	} else {
		base.Timeout = DefaultDialTimeout
	}
	guard, next := Control(check), base.Control
	base.ControlContext = nil // Control is the one hook; a ControlContext would replace it
	base.Control = func(network, address string, c syscall.RawConn) error {
		if err := guard(network, address, c); err != nil {
			return name(err, host)
		}
		if next != nil {
			return next(network, address, c)
		}
		return nil
	}
	base.Resolver = nil // every address is numeric from here on
	var errs []error
	for _, a := range addrs {
		conn, err := base.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if errors.Is(err, ErrBlocked) || ctx.Err() != nil {
			return nil, err
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

func (d *Dialer) check() func(netip.Addr) error {
	if d.Check != nil {
		return d.Check
	}
	return Check
}

// resolve returns the addresses of host and whether host was an IP literal
// (then nothing was looked up).
func (d *Dialer) resolve(ctx context.Context, ipNet, host string) ([]netip.Addr, bool, error) {
	h := strings.TrimSuffix(host, ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return []netip.Addr{a}, true, nil
	}
	if err := CheckHost(host); err != nil {
		return nil, false, err
	}
	var r Resolver = net.DefaultResolver
	if d.Resolver != nil {
		r = d.Resolver
	}
	addrs, err := r.LookupNetIP(ctx, ipNet, h)
	if err != nil {
		return nil, false, fmt.Errorf("ssrf: look up %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, false, fmt.Errorf("ssrf: look up %s: no addresses", host)
	}
	return addrs, false, nil
}

func ipNetwork(network string) (string, error) {
	switch network {
	case "tcp", "udp":
		return "ip", nil
	case "tcp4", "udp4":
		return "ip4", nil
	case "tcp6", "udp6":
		return "ip6", nil
	}
	return "", fmt.Errorf("ssrf: network %q not supported; use tcp or udp", network)
}
