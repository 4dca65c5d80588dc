package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/internal/hostmatch"
)

// DefaultPorts are the destination ports a [Filter] with no Ports allows:
// plain HTTP and HTTPS, which is what an agent's tools and package managers
// need. Anything else (SSH on 22, SMTP on 25, databases) must be opted into.
var DefaultPorts = []int{80, 443}

// Filter decides which destinations egress may reach. The zero value denies
// every destination (it is [DenyAll]).
//
// A destination is a host and a port. It is allowed when
//
//   - the port is in Ports (or in [DefaultPorts] when Ports is empty), and
//   - no Deny pattern matches the host (deny wins), and
//   - AllowAll is set or an Allow pattern matches the host.
//
// Patterns are those of package internal/hostmatch, the one implementation
// shared with WebFetch's host lists: "example.com" matches example.com and
// every subdomain; "*.example.com" matches subdomains only; matching ignores
// case and one trailing dot; an IP literal never matches a domain pattern,
// only the same address written as a pattern.
//
// Separately, unless AllowPrivate is set, every address a destination
// resolves to must be a public unicast address (the SSRF classifier of
// package ssrf); with AllowPrivate, it must not be a cloud metadata
// endpoint (ssrf.CheckMetadata). That check happens when the proxy dials,
// see [Proxy].
//
// A Filter is a plain value: copy it freely; the With methods return
// modified copies and never change the receiver.
type Filter struct {
	// AllowAll allows every host that no Deny pattern matches.
	AllowAll bool
	// Allow lists the host patterns that are allowed.
	Allow []string
	// Deny lists the host patterns that are refused even when allowed.
	Deny []string
	// Ports lists the allowed destination ports; empty means [DefaultPorts].
	Ports []int
	// AllowPrivate lets destinations resolve to loopback, private and
	// other non-public addresses. Cloud metadata endpoints, IPv4
	// link-local 169.254.0.0/16 among them, stay refused (see
	// ssrf.CheckMetadata): a sandboxed command must never read the host's
	// cloud credentials.
	AllowPrivate bool
}

// DenyAll returns a filter that allows nothing; add domains with
// [Filter.AllowDomains].
func DenyAll() Filter { return Filter{} }

// AllowAll returns a filter that allows every public destination on the
// default ports; remove domains with [Filter.DenyDomains].
func AllowAll() Filter { return Filter{AllowAll: true} }

// AllowDomains returns a copy of p that also allows patterns.
func (p Filter) AllowDomains(patterns ...string) Filter {
	p.Allow = append(slices.Clip(p.Allow), patterns...)
	return p
}

// DenyDomains returns a copy of p that also refuses patterns.
func (p Filter) DenyDomains(patterns ...string) Filter {
	p.Deny = append(slices.Clip(p.Deny), patterns...)
	return p
}

// WithPorts returns a copy of p that allows exactly ports.
func (p Filter) WithPorts(ports ...int) Filter {
	p.Ports = slices.Clone(ports)
	return p
}

// WithPrivate returns a copy of p with AllowPrivate set to allow.
func (p Filter) WithPrivate(allow bool) Filter {
	p.AllowPrivate = allow
	return p
}

// Validate reports every unusable pattern and port of p. A proxy refuses to
// start with an invalid filter rather than silently ignoring an entry.
func (p Filter) Validate() error {
	var errs []error
	for _, list := range []struct {
		name     string
		patterns []string
	}{{"allow", p.Allow}, {"deny", p.Deny}} {
		for _, pat := range list.patterns {
			if !hostmatch.Valid(pat) {
				errs = append(errs, fmt.Errorf("%s pattern %q is not a domain name, *.domain or IP address", list.name, pat))
			}
		}
	}
	for _, port := range p.Ports {
		if port < 1 || port > 65535 {
			errs = append(errs, fmt.Errorf("port %d is out of range 1-65535", port))
		}
	}
	return errors.Join(errs...)
}

// ports returns the effective port list.
func (p Filter) ports() []int {
	if len(p.Ports) == 0 {
		return DefaultPorts
	}
	return p.Ports
}

// CheckHost decides whether host (a domain name or an IP literal, as it
// appears in a request) may be reached on port, from the names alone: it
// never resolves anything. A refusal is a *[DeniedError]. An allowed host
// still has its resolved addresses checked by the proxy before it connects.
func (p Filter) CheckHost(host string, port int) error {
	h := hostmatch.Normalize(host)
	if !slices.Contains(p.ports(), port) {
		return &DeniedError{Host: h, Port: port, Reason: ReasonPort}
	}
	if hostmatch.MatchAny(p.Deny, h) {
		return &DeniedError{Host: h, Port: port, Reason: ReasonDenied}
	}
	if p.AllowAll || hostmatch.MatchAny(p.Allow, h) {
		return nil
	}
	return &DeniedError{Host: h, Port: port, Reason: ReasonNotAllowed}
}

// String describes p in one line for logs and guarantees, e.g.
// "deny-all; allow example.com; ports 80,443".
func (p Filter) String() string {
	var b strings.Builder
	if p.AllowAll {
		b.WriteString("allow-all")
	} else {
		b.WriteString("deny-all")
	}
	if len(p.Allow) > 0 {
		b.WriteString("; allow " + strings.Join(p.Allow, ","))
	}
	if len(p.Deny) > 0 {
		b.WriteString("; deny " + strings.Join(p.Deny, ","))
	}
	ports := make([]string, 0, len(p.ports()))
	for _, port := range p.ports() {
		ports = append(ports, strconv.Itoa(port))
	}
	b.WriteString("; ports " + strings.Join(ports, ","))
	if p.AllowPrivate {
		b.WriteString("; private addresses allowed")
	}
	return b.String()
}

// The reasons a destination is refused, as they appear in [DeniedError] and
// in the proxy's X-Egress-Denied response header.
const (
	ReasonNotAllowed = "host not in allow list"
	ReasonDenied     = "host in deny list"
	ReasonPort       = "port not allowed"
	ReasonAddress    = "resolves to a non-public address"
	ReasonNumeric    = "numeric host spelling"
)

// ErrDenied matches every *[DeniedError] with [errors.Is]; so does
// [helikon.ErrDenied], so that a refusal surfacing through a tool is a
// denied tool error.
var ErrDenied = errors.New("egress denied")

// DeniedError reports a destination refused by the filter or by the address
// check.
type DeniedError struct {
	Host   string // normalized host as requested
	Port   int    // the requested port; 0 when not known
	Reason string // one of the Reason constants
	Addr   string // the refused address, for ReasonAddress
	// Class says why Addr is refused, as the address check put it (such
	// as "loopback", or "cloud metadata endpoint" when private addresses
	// are allowed); "" means non-public.
	Class string
}

// Error names the destination and the reason (and the refused address),
// never any credentials. A refused address is said to be what the host
// "resolves to" only when the host is a name; an IP literal is its own
// address.
func (e *DeniedError) Error() string {
	dest := e.Host
	if e.Port != 0 {
		dest = joinHostPort(e.Host, e.Port)
	}
	msg := "egress to " + dest + " denied: "
	if e.Reason != ReasonAddress || e.Addr == "" {
		return msg + e.Reason
	}
	class := e.Class
	if class == "" {
		class = "non-public"
	}
	if a, err := netip.ParseAddr(hostmatch.Normalize(e.Host)); err == nil && a.WithZone("").Unmap().String() == e.Addr {
		return msg + "address refused (" + class + ")"
	}
	return msg + "resolves to " + e.Addr + " (" + class + ")"
}

// Is reports whether target is [ErrDenied] or [helikon.ErrDenied].
func (e *DeniedError) Is(target error) bool {
	return target == ErrDenied || target == helikon.ErrDenied
}
