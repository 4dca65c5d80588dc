package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/paigasus/helikon/internal/hostmatch"
)

// ErrMalformed matches every error about a request the proxy cannot parse
// (answered with 400).
var ErrMalformed = errors.New("malformed request")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// ParseAuthority parses the authority of a proxy request, "host:port" as in
// CONNECT or the host part of an absolute-form URL, and returns the
// normalized host (lower case, no trailing dot, no IPv6 brackets) and the
// port. When defaultPort is 0 the port is required; otherwise a missing port
// means defaultPort.
//
// It is deliberately strict, because whatever it accepts is what the filter
// judges and the proxy dials: no userinfo, no IPv6 zone, an IPv6 literal only
// in brackets and nothing else in brackets, a decimal port 1-65535 without
// sign or leading zeros, a host that is an IP literal or a valid domain name.
// Errors wrap [ErrMalformed].
//
// Host spellings that some resolvers turn into addresses (2130706433,
// 0x7f000001, 0177.0.0.1, 127.1) are refused with a *[DeniedError] whose
// reason is [ReasonNumeric]: a domain whose last label is numeric does not
// exist in DNS, so such a host is only ever an attempt to sneak an address
// past the filter.
func ParseAuthority(authority string, defaultPort int) (host string, port int, err error) {
	if authority == "" {
		return "", 0, malformed("empty authority")
	}
	if strings.ContainsAny(authority, "@/?#\\ \t\r\n%") {
		// The authority is not quoted: it may carry credentials (user:pass@host).
		return "", 0, malformed("the authority contains userinfo, a path or a forbidden character (@ / ? # \\ %% or whitespace); send host:port")
	}
	rawHost, rawPort := authority, ""
	bracketed := strings.HasPrefix(authority, "[")
	switch {
	case bracketed:
		end := strings.IndexByte(authority, ']')
		if end < 0 {
			return "", 0, malformed("authority %q has an unclosed bracket", authority)
		}
		rawHost = authority[1:end]
		rest := authority[end+1:]
		switch {
		case rest == "":
		case strings.HasPrefix(rest, ":"):
			rawPort = rest[1:]
			if rawPort == "" {
				return "", 0, malformed("authority %q has an empty port", authority)
			}
		default:
			return "", 0, malformed("authority %q has text after the bracket", authority)
		}
	case strings.Count(authority, ":") > 1:
		return "", 0, malformed("authority %q: an IPv6 address must be in brackets", authority)
	default:
		if i := strings.IndexByte(authority, ':'); i >= 0 {
			rawHost, rawPort = authority[:i], authority[i+1:]
			if rawPort == "" {
				return "", 0, malformed("authority %q has an empty port", authority)
			}
		}
	}
	if strings.ContainsAny(rawHost, "[]") {
		return "", 0, malformed("authority %q has a misplaced bracket", authority)
	}

	switch {
	case rawPort != "":
		port, err = parsePort(rawPort)
		if err != nil {
			return "", 0, malformed("authority %q: %v", authority, err)
		}
	case defaultPort == 0:
		return "", 0, malformed("authority %q has no port; CONNECT needs host:port", authority)
	default:
		port = defaultPort
	}

	if bracketed {
		ip, err := netip.ParseAddr(rawHost)
		if err != nil || !ip.Is6() || ip.Zone() != "" {
			return "", 0, malformed("authority %q: only an IPv6 address without zone may be in brackets", authority)
		}
		return ip.String(), port, nil
	}
	if ip, err := netip.ParseAddr(rawHost); err == nil {
		if !ip.Is4() {
			return "", 0, malformed("authority %q: an IPv6 address must be in brackets", authority)
		}
		return ip.String(), port, nil
	}
	host = hostmatch.Normalize(rawHost)
	if host == "" || strings.HasPrefix(host, "*.") || strings.HasSuffix(rawHost, "..") || !hostmatch.Valid(host) {
		return "", 0, malformed("authority %q: host is not a valid domain name or IP address", authority)
	}
	if numericSpelling(host) {
		return "", 0, &DeniedError{Host: host, Port: port, Reason: ReasonNumeric}
	}
	return host, port, nil
}

// numericSpelling reports whether the last label of host is all digits or a
// hexadecimal number: inet_aton-style resolvers read such a name as an
// address (127.1, 2130706433, 0x7f000001), and no real top-level domain
// looks like that.
func numericSpelling(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if h, ok := strings.CutPrefix(last, "0x"); ok {
		_, err := strconv.ParseUint(h, 16, 64)
		return h == "" || err == nil
	}
	for _, r := range last {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func parsePort(s string) (int, error) {
	if len(s) > 5 || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("port %q is not a number 1-65535", s)
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("port %q is not a number 1-65535", s)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number 1-65535", s)
	}
	return n, nil
}

func joinHostPort(host string, port int) string {
	return net.JoinHostPort(host, strconv.Itoa(port))
}
