// Package hostmatch is the one implementation of host-name patterns shared by
// permission rules, WebFetch's host lists and the egress filter, so that the
// same pattern means the same thing everywhere.
//
// A pattern "example.com" matches example.com and every subdomain of it; a
// pattern "*.example.com" matches subdomains only. Matching is
// case-insensitive and ignores one trailing dot. An IP literal host never
// matches a domain pattern; it matches only a pattern that is the same
// address.
//
// # Addresses
//
// IP literals are compared as canonical addresses (see [Canonical]), so that
// a pattern for an address matches every spelling of it and a deny pattern
// cannot be sidestepped by writing the address another way:
//
//   - an IPv4-mapped IPv6 address (::ffff:10.0.0.5) is its IPv4 address;
//   - an IPv6 zone (fe80::1%eth0) is ignored: fe80::1 matches fe80::1%eth0
//     and fe80::1%eth1, since a zone picks an interface, not another host;
//   - an address in the well-known NAT64 prefix 64:ff9b::/96 (RFC 6052) is
//     the IPv4 address it embeds (64:ff9b::a00:5 is 10.0.0.5): a NAT64
//     gateway translates it to exactly that one host;
//   - the numeric spellings that inet_aton and browsers read as IPv4
//     (2130706433, 0x7f.1, 0177.0.0.1, 127.1) are that IPv4 address. The
//     consumers refuse such spellings anyway (ssrf.CheckHost, the egress
//     proxy); matching them too keeps a deny rule from depending on that.
//
// Not unified, by decision:
//
//   - 6to4 (2002:AABB:CCDD::/48, RFC 3056) names a whole IPv6 site behind
//     the router at the embedded IPv4 address, not that host, so a pattern
//     for the IPv4 address does not match it;
//   - local-use NAT64 prefixes (64:ff9b:1::/48, RFC 8215) and operator
//     NAT64 prefixes have a length (/32 to /96) that cannot be told from
//     the address, so the embedded address cannot be found;
//   - deprecated IPv4-compatible addresses (::a.b.c.d) and Teredo
//     (2001::/32) are other IPv6 addresses.
//
// None of these is a way around the SSRF guard: package ssrf refuses
// 64:ff9b::/96, 64:ff9b:1::/48 and ::/96 outright and judges 6to4 by the
// IPv4 address it embeds; with private addresses allowed, ssrf.CheckMetadata
// still reads a metadata address out of each of them (the local-use prefix
// at every length RFC 6052 allows it). To deny a host on a network whose
// resolvers or gateways use such a prefix, deny that spelling too.
//
// Hosts are matched as given: an IP literal written with Unicode digits or
// full stops (①②⑦.⓪.⓪.①) is the caller's to map to ASCII first, as
// WebFetch does with IDNA before it matches.
package hostmatch

import (
	"net/netip"
	"strconv"
	"strings"
)

// Normalize lower-cases host, strips one trailing dot and the brackets of an
// IPv6 literal.
func Normalize(host string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	return host
}

// IsIP reports whether host (normalized) is an IP literal.
func IsIP(host string) bool {
	_, err := netip.ParseAddr(Normalize(host))
	return err == nil
}

// nat64 is the well-known NAT64 prefix of RFC 6052; the last 32 bits of an
// address in it are the IPv4 address it is translated to.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Canonical returns the address host (normalized, as for [Match]) stands
// for, in the form addresses are compared in: without zone, IPv4-mapped and
// well-known-NAT64 addresses as their IPv4 address, numeric IPv4 spellings
// (2130706433, 0x7f.1) as the dotted quad. ok is false when host is not an
// address.
func Canonical(host string) (addr netip.Addr, ok bool) {
	h := Normalize(host)
	if i := strings.IndexByte(h, '%'); i >= 0 && strings.Contains(h[:i], ":") {
		// The zone is dropped for comparison anyway; parsing without it
		// also reads a zone that Normalize cut short ("fe80::1%." has
		// lost its ".") as the address it qualifies.
		h = h[:i]
	}
	a, err := netip.ParseAddr(h)
	if err != nil {
		return parseInetAton(h)
	}
	a = a.WithZone("").Unmap()
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	return a, true
}

// parseInetAton parses the IPv4 forms of inet_aton(3): one to four parts
// separated by dots, each decimal, octal (leading 0) or hexadecimal (0x),
// the last part filling the remaining bytes.
func parseInetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v [4]uint64
	for i, p := range parts {
		base := 10
		switch {
		case strings.HasPrefix(p, "0x"):
			p, base = p[2:], 16
			if p == "" {
				p = "0" // inet_aton reads "0x" as 0
			}
		case len(p) > 1 && p[0] == '0':
			p, base = p[1:], 8
		}
		if p == "" || p[0] == '+' || p[0] == '-' {
			return netip.Addr{}, false
		}
		n, err := strconv.ParseUint(p, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		v[i] = n
	}
	last := len(parts) - 1
	for i := 0; i < last; i++ {
		if v[i] > 0xff {
			return netip.Addr{}, false
		}
	}
	if v[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	n := v[last]
	for i := 0; i < last; i++ {
		n |= v[i] << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// Valid reports whether pattern is a usable pattern: a domain name, a domain
// name prefixed by "*.", or an IP literal.
func Valid(pattern string) bool {
	p := Normalize(pattern)
	if IsIP(p) {
		return true
	}
	p = strings.TrimPrefix(p, "*.")
	if p == "" || len(p) > 253 {
		return false
	}
	for _, label := range strings.Split(p, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// Match reports whether host matches pattern.
func Match(pattern, host string) bool {
	p, h := Normalize(pattern), Normalize(host)
	if p == "" || h == "" {
		return false
	}
	if hip, ok := Canonical(h); ok {
		pip, ok := Canonical(p)
		return ok && pip == hip
	}
	if sub, ok := strings.CutPrefix(p, "*."); ok {
		return strings.HasSuffix(h, "."+sub)
	}
	return h == p || strings.HasSuffix(h, "."+p)
}

// MatchAny reports whether host matches any of patterns.
func MatchAny(patterns []string, host string) bool {
	for _, p := range patterns {
		if Match(p, host) {
			return true
		}
	}
	return false
}

// Covers reports whether every host that pattern sub matches is matched by
// pattern: "example.com" covers "api.example.com" and "*.example.com",
// "*.example.com" covers "*.api.example.com" but not "example.com", and an
// address covers only the same address. Both are valid patterns (see
// [Valid]).
//
// A subdomain pattern "*.x" is matched as the host "*.x", whose first label
// no host can have, so it is covered exactly by the patterns that match
// every subdomain of x. A numeric spelling of an address that is also shaped
// like a domain name (2130706433, 127.1) matches both the address and the
// subdomains of that name, so it is covered only when both are.
func Covers(pattern, sub string) bool {
	s := Normalize(sub)
	if !Match(pattern, s) {
		return false
	}
	if _, ok := Canonical(s); ok && !IsIP(s) {
		return Match(pattern, "*."+s)
	}
	return true
}
