// Package hostmatch is the one implementation of host-name patterns shared by
// permission rules, WebFetch's host lists and the egress policy, so that the
// same pattern means the same thing everywhere.
//
// A pattern "example.com" matches example.com and every subdomain of it; a
// pattern "*.example.com" matches subdomains only. Matching is
// case-insensitive and ignores one trailing dot. An IP literal host never
// matches a domain pattern; it matches only a pattern that is the same
// address.
package hostmatch

import (
	"net/netip"
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
	if hip, err := netip.ParseAddr(h); err == nil {
		pip, err := netip.ParseAddr(p)
		return err == nil && pip.Unmap() == hip.Unmap()
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
