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
// the port, the path or the fragment.
func VetURL(u *url.URL) error {
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
	return CheckHost(host)
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
func CheckHost(host string) error {
	h := strings.TrimSuffix(host, ".")
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if h == "" {
		return fmt.Errorf("%w: empty host", ErrInvalidHost)
	}
	if strings.Contains(h, ":") {
		addr, err := netip.ParseAddr(h)
		if err != nil {
			return fmt.Errorf("%w: %q is not a valid IPv6 address", ErrInvalidHost, host)
		}
		return withHost(Check(addr), host)
	}
	if looksNumeric(h) {
		addr, err := netip.ParseAddr(h)
		if err != nil || !addr.Is4() {
			return &BlockedError{Host: host, Reason: "numeric host spelling; write an IPv4 address as four decimal numbers such as 93.184.216.34, or use the domain name"}
		}
		return withHost(Check(addr), host)
	}
	if !validDomain(h) {
		return fmt.Errorf("%w: %q is not a valid domain name", ErrInvalidHost, host)
	}
	return nil
}

func withHost(err error, host string) error {
	var be *BlockedError
	if errors.As(err, &be) && be.Host == "" {
		be.Host = host
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
