package ssrf

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// Sentinel errors for URLs the guard refuses before any address is known.
// Every refusal by this package matches one of them or [ErrBlocked]; use
// [Refused] to test for any of them.
var (
	// ErrScheme: the URL's scheme is not http or https.
	ErrScheme = errors.New("scheme not allowed")
	// ErrCredentials: the URL carries a user name or password.
	ErrCredentials = errors.New("credentials in URL")
	// ErrInvalidHost: the URL has no host, or a host that is neither a
	// domain name nor an IP literal.
	ErrInvalidHost = errors.New("invalid host")
)

// Refused reports whether err is (or wraps) a refusal by this package: a
// blocked address or host spelling, a disallowed scheme, credentials in a URL
// or an invalid host. Network failures are not refusals.
func Refused(err error) bool {
	return errors.Is(err, ErrBlocked) || errors.Is(err, ErrScheme) ||
		errors.Is(err, ErrCredentials) || errors.Is(err, ErrInvalidHost)
}

// ParseURL parses raw and vets it with [VetURL]. A string that is not a URL
// at all yields an error wrapping [ErrInvalidHost].
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %q is not a valid URL: %v", ErrInvalidHost, raw, stripURL(err))
	}
	if err := VetURL(u); err != nil {
		return nil, err
	}
	return u, nil
}

// stripURL drops the *url.Error wrapper, which would repeat the URL.
func stripURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// VetURL checks everything about u that can be checked without resolving its
// host:
//
//   - the scheme is http or https;
//   - there is no user name or password (they leak into logs and some
//     parsers disagree about where the host starts);
//   - the host is present and is a valid domain name (internationalized
//     names are converted to their ASCII form, which is written back into
//     u.Host) or an IP literal;
//   - the host passes [CheckHost]: an IP literal must be a public address
//     and a numeric spelling such as 2130706433 is refused.
//
// A domain name that passes may still resolve to a refused address: that is
// caught when connecting, by [Dialer] or [Control]. VetURL does not look at
// the port, the path or the fragment. It is VetURLWith(u, Check).
func VetURL(u *url.URL) error { return VetURLWith(u, Check) }

// VetURLWith is [VetURL] with check in place of [Check] for an IP literal
// host (nil means Check); pass [CheckMetadata] to let private literals
// through. Numeric spellings are refused whatever check says. A refused
// literal is reported with the host as the URL spelt it, before its IDNA
// mapping (so "①②⑦.⓪.⓪.①" is named as written).
func VetURLWith(u *url.URL, check func(netip.Addr) error) error {
	if u == nil {
		return fmt.Errorf("%w: no URL", ErrInvalidHost)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		if u.Scheme == "" {
			return fmt.Errorf("%w: the URL has no scheme; write it as https://%s", ErrScheme, strings.TrimPrefix(u.String(), "//"))
		}
		return fmt.Errorf("%w: %q; only http and https URLs can be fetched", ErrScheme, u.Scheme)
	}
	if u.User != nil {
		return fmt.Errorf("%w: remove the user name and password from the URL", ErrCredentials)
	}
	if u.Opaque != "" {
		return fmt.Errorf("%w: the URL has no host; write it as %s://host/path", ErrInvalidHost, u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: the URL has no host", ErrInvalidHost)
	}
	written := host
	if _, err := netip.ParseAddr(host); err != nil && !isASCII(host) {
		ascii, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return fmt.Errorf("%w: %q is not a valid domain name", ErrInvalidHost, host)
		}
		if p := u.Port(); p != "" {
			u.Host = net.JoinHostPort(ascii, p)
		} else {
			u.Host = ascii
		}
		host = ascii
	}
	err := checkHost(host, check)
	var be *BlockedError
	if errors.As(err, &be) {
		be.Host = written
	}
	return err
}

// CheckHost checks a host name or IP literal (brackets optional) without
// resolving it. It refuses:
//
//   - an IP literal that [Check] refuses (an IPv6 zone is ignored);
//   - a numeric spelling that is not a canonical dotted quad, such as
//     2130706433, 0x7f000001, 0177.0.0.1, 127.1 or 127.0.0.1.5: the C
//     resolver (inet_aton) and browsers read many of them as IPv4
//     addresses, so a name-based check could be bypassed. Any host whose
//     last label is numeric is treated this way, as the WHATWG URL standard
//     does;
//   - anything that is not a valid domain name.
//
// A domain name passes; where it points is checked when connecting.
func CheckHost(host string) error { return checkHost(host, Check) }

func checkHost(host string, check func(netip.Addr) error) error {
	if check == nil {
		check = Check
	}
	h := trimHost(host)
	if h == "" {
		return fmt.Errorf("%w: empty host", ErrInvalidHost)
	}
	if strings.Contains(h, ":") {
		addr, err := netip.ParseAddr(h)
		if err != nil {
			return fmt.Errorf("%w: %q is not a valid IPv6 address", ErrInvalidHost, host)
		}
		return literal(check(addr), host)
	}
	if looksNumeric(h) {
		addr, err := netip.ParseAddr(h)
		if err != nil || !addr.Is4() {
			return &BlockedError{Host: host, Reason: "numeric host spelling; write an IPv4 address as four decimal numbers such as 93.184.216.34, or use the domain name"}
		}
		return literal(check(addr), host)
	}
	if !validDomain(h) {
		return fmt.Errorf("%w: %q is not a valid domain name", ErrInvalidHost, host)
	}
	return nil
}

// trimHost drops one trailing dot and the brackets of an IPv6 literal.
func trimHost(host string) string {
	h := strings.TrimSuffix(host, ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	return h
}

// withHost names host in a *BlockedError that has no host yet: the host
// the refused address was resolved from.
func withHost(err error, host string) error {
	var be *BlockedError
	if errors.As(err, &be) && be.Host == "" {
		be.Host = host
	}
	return err
}

// literal is withHost for a host that spells the refused address itself.
func literal(err error, host string) error {
	var be *BlockedError
	if errors.As(err, &be) && be.Host == "" {
		be.Host, be.Literal = host, true
	}
	return err
}

// looksNumeric reports whether the last label of h is a number in any base
// inet_aton accepts (decimal, 0-prefixed octal, 0x-prefixed hex), which is
// when the WHATWG URL parser reads the whole host as IPv4.
func looksNumeric(h string) bool {
	last := h
	if i := strings.LastIndexByte(h, '.'); i >= 0 {
		last = h[i+1:]
	}
	if last == "" {
		return false
	}
	l := strings.ToLower(last)
	if rest, ok := strings.CutPrefix(l, "0x"); ok {
		for _, c := range rest {
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
				return false
			}
		}
		return true
	}
	for _, c := range l {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validDomain accepts LDH labels (and '_', which real DNS names carry) of at
// most 63 bytes, 253 bytes in all. It is hand-written because the rule is the
// one [hostmatch] uses and x/net/idna's lookup profile rejects '_'.
func validDomain(h string) bool {
	if len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
