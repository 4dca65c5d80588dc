package ssrf

import (
	"errors"
	"fmt"
	"net/netip"
)

// ErrBlocked matches every [*BlockedError] with [errors.Is]: the guard
// refused an address or a numeric host spelling.
var ErrBlocked = errors.New("blocked address")

// BlockedError reports an address (or a host spelling) the guard refuses.
type BlockedError struct {
	// Host is the host name or spelling as given, or "" when an address
	// was checked on its own.
	Host string
	// Addr is the refused address. It is the zero Addr when the host was
	// refused for its spelling before any address was known.
	Addr netip.Addr
	// Reason names the class of the address, such as "loopback" or
	// "private (RFC 1918)", or says what is wrong with the spelling.
	Reason string
	// Literal reports that Host is a spelling of Addr itself (an IP
	// literal, perhaps written with Unicode digits that the URL's IDNA
	// mapping reads as ASCII): nothing was resolved.
	Literal bool
	// Metadata reports that [CheckMetadata] refused Addr: a cloud
	// metadata endpoint, which stays refused when private addresses are
	// allowed.
	Metadata bool
}

// Error names what was refused (the host, the address it resolved to, or
// both) and why, in words a model can act on. It says "resolves to" only
// when the address came from a lookup, and it tells to use a public
// address only when the strict classifier refused: a metadata refusal
// under [CheckMetadata] is not about private addresses.
func (e *BlockedError) Error() string {
	advice := "; only public internet addresses can be reached"
	if e.Metadata {
		advice = "; cloud metadata endpoints are never reached, even with private addresses allowed"
	}
	switch {
	case e.Host != "" && e.Addr.IsValid() && e.Literal:
		if a, err := netip.ParseAddr(trimHost(e.Host)); err == nil && a == e.Addr {
			return fmt.Sprintf("blocked address: %s (%s)%s", e.Addr, e.Reason, advice)
		}
		return fmt.Sprintf("blocked address: %q is %s (%s)%s", e.Host, e.Addr, e.Reason, advice)
	case e.Host != "" && e.Addr.IsValid():
		return fmt.Sprintf("blocked address: %s resolves to %s (%s)%s", e.Host, e.Addr, e.Reason, advice)
	case e.Host != "":
		return fmt.Sprintf("blocked address: host %q (%s)", e.Host, e.Reason)
	default:
		return fmt.Sprintf("blocked address: %s (%s)%s", e.Addr, e.Reason, advice)
	}
}

// Is reports whether target is [ErrBlocked].
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// Allowed reports whether addr is a public unicast address the guard lets
// through. It is Check(addr) == nil.
func Allowed(addr netip.Addr) bool { return Check(addr) == nil }

// Check classifies addr and returns nil when it is a public unicast address:
// an IPv4 address outside every special-purpose range, or an IPv6 address in
// 2000::/3 outside the special-purpose ranges listed below. Otherwise it
// returns a *[BlockedError] naming the class.
//
// The zone of addr is ignored. IPv4-mapped IPv6 addresses (::ffff:a.b.c.d)
// are unmapped and judged as IPv4, because a dual-stack socket connects them
// to the IPv4 address; [netip.Prefix.Contains] does not unmap, so Check does
// it first. 6to4 addresses (2002::/16) are judged by the IPv4 address they
// embed. Teredo (2001::/32) is refused whole, whatever it embeds, because its
// client address is obfuscated and it tunnels to arbitrary IPv4 hosts.
//
// Refused IPv4 ranges: 0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8,
// 168.63.129.16/32 (Azure's WireServer: nominally public, but reached
// inside every Azure VM and serving its configuration), 169.254.0.0/16,
// 172.16.0.0/12, 192.0.0.0/24 (192.0.0.192 in it is named as Oracle Cloud's
// metadata address), 192.0.2.0/24, 192.31.196.0/24,
// 192.52.193.0/24, 192.88.99.0/24, 192.168.0.0/16, 192.175.48.0/24,
// 198.18.0.0/15, 198.51.100.0/24, 203.0.113.0/24, 224.0.0.0/4, 240.0.0.0/4.
//
// Refused IPv6: everything outside 2000::/3 (which covers ::, ::1, IPv4-
// compatible ::/96, ::ffff:0:0:0/96, 64:ff9b::/96 and 64:ff9b:1::/48 NAT64,
// 100::/64, fc00::/7 ULA such as fd00:ec2::254, fe80::/10 link-local,
// fec0::/10 site-local, ff00::/8 multicast), and inside it 2001::/23 (IETF
// protocol assignments, Teredo included), 2001:db8::/32 and 3fff::/20
// (documentation), 2620:4f:8000::/48 (AS112) and 6to4 with a refused
// embedded IPv4 address.
func Check(addr netip.Addr) error {
	if reason := classify(addr); reason != "" {
		return &BlockedError{Addr: addr, Reason: reason}
	}
	return nil
}

type rangeClass struct {
	prefix netip.Prefix
	reason string
}

// The IANA IPv4 and IPv6 special-purpose address registries (RFC 6890 and
// its updates). Ranges the registry marks "globally reachable" (such as
// AS112 and AMT) are refused as well: no fetch needs them and each is one
// more place a request could be steered.
var v4Blocked = []rangeClass{
	{netip.MustParsePrefix("0.0.0.0/8"), "\"this network\" 0.0.0.0/8"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT 100.64.0.0/10"},
	{netip.MustParsePrefix("168.63.129.16/32"), "Azure WireServer 168.63.129.16 (host-local on Azure)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.169.254/32"), "cloud metadata (link-local)"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.192/32"), "cloud metadata (Oracle Cloud)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments 192.0.0.0/24"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
	{netip.MustParsePrefix("192.31.196.0/24"), "AS112 192.31.196.0/24"},
	{netip.MustParsePrefix("192.52.193.0/24"), "AMT 192.52.193.0/24"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast 192.88.99.0/24"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (RFC 1918)"},
	{netip.MustParsePrefix("192.175.48.0/24"), "AS112 192.175.48.0/24"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking 198.18.0.0/15"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved 240.0.0.0/4"},
}

// v6Named are ranges refused with a specific reason. Those outside 2000::/3
// would be refused anyway; naming them makes the error say why.
var v6Named = []rangeClass{
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible (deprecated)"},
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "IPv4-translated"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 64:ff9b::/96"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 64:ff9b:1::/48"},
	{netip.MustParsePrefix("100::/64"), "discard-only 100::/64"},
	{netip.MustParsePrefix("2001::/32"), "Teredo 2001::/32"},
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments 2001::/23"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation 2001:db8::/32"},
	{netip.MustParsePrefix("3fff::/20"), "documentation 3fff::/20"},
	{netip.MustParsePrefix("2620:4f:8000::/48"), "AS112 2620:4f:8000::/48"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), "cloud metadata (unique local)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (ULA)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var (
	v6GlobalUnicast = netip.MustParsePrefix("2000::/3")
	v6SixToFour     = netip.MustParsePrefix("2002::/16")
)

// classify returns "" for an allowed address and the reason otherwise.
func classify(addr netip.Addr) string {
	if !addr.IsValid() {
		return "invalid address"
	}
	addr = addr.WithZone("")
	if addr.Is4In6() {
		if r := classify4(addr.Unmap()); r != "" {
			return "IPv4-mapped " + r
		}
		return ""
	}
	if addr.Is4() {
		return classify4(addr)
	}
	for _, c := range v6Named {
		if c.prefix.Contains(addr) {
			return c.reason
		}
	}
	if !v6GlobalUnicast.Contains(addr) {
		return "outside IPv6 global unicast 2000::/3"
	}
	if v6SixToFour.Contains(addr) {
		b := addr.As16()
		if r := classify4(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})); r != "" {
			return "6to4 embedding " + r
		}
	}
	return ""
}

func classify4(addr netip.Addr) string {
	for _, c := range v4Blocked {
		if c.prefix.Contains(addr) {
			return c.reason
		}
	}
	return ""
}

// metadata4 and metadata6 are where cloud instances hand out credentials
// and configuration. IPv4 link-local 169.254.0.0/16 is refused whole: AWS,
// GCP, Azure, Oracle, DigitalOcean and OpenStack serve instance metadata on
// 169.254.169.254, AWS ECS task credentials on 169.254.170.2, the EKS Pod
// Identity Agent on 169.254.170.23, Tencent Cloud on 169.254.0.23, and a
// development server never lives there. Besides: Alibaba Cloud
// (100.100.100.200), Azure's WireServer (168.63.129.16), Oracle Cloud's
// older metadata address (192.0.0.192, listed as such by the public SSRF
// corpora), AWS over IPv6 (fd00:ec2::/32: IMDS on ::254, EKS Pod Identity
// on ::23) and GCP over IPv6 (fd20:ce::254).
var (
	metadata4 = []netip.Prefix{
		netip.MustParsePrefix("169.254.0.0/16"),
		netip.MustParsePrefix("100.100.100.200/32"),
		netip.MustParsePrefix("168.63.129.16/32"),
		netip.MustParsePrefix("192.0.0.192/32"),
	}
	metadata6 = []netip.Prefix{
		netip.MustParsePrefix("fd00:ec2::/32"),
		netip.MustParsePrefix("fd20:ce::254/128"),
	}
	v6Compatible = netip.MustParsePrefix("::/96")
	v6NAT64      = netip.MustParsePrefix("64:ff9b::/96")
	v6NAT64Local = netip.MustParsePrefix("64:ff9b:1::/48")
)

// nat64Offsets are where RFC 6052 (section 2.2) puts the IPv4 address in an
// IPv6 address of a NAT64 prefix of each length: the byte offsets of its
// four octets, skipping byte 8 (bits 64 to 71, the "u" octet). RFC 6052 also
// allows /32 and /40 prefixes, but none lies inside 64:ff9b:1::/48, the
// only translation prefix recognisable from an address besides the /96
// well-known one, so those lengths are never read.
var nat64Offsets = map[int][4]int{
	48: {6, 7, 9, 10},
	56: {7, 9, 10, 11},
	64: {9, 10, 11, 12},
	96: {12, 13, 14, 15},
}

// nat64Embedded returns the IPv4 address an IPv6 address of a NAT64 prefix
// of length bits carries (RFC 6052). bits must be a key of nat64Offsets.
func nat64Embedded(a netip.Addr, bits int) netip.Addr {
	b, o := a.As16(), nat64Offsets[bits]
	return netip.AddrFrom4([4]byte{b[o[0]], b[o[1]], b[o[2]], b[o[3]]})
}

// embedded4 returns the IPv4 addresses an IPv6 address may stand for: the
// mapped and compatible forms, 6to4, the well-known NAT64 prefix (a /96 by
// definition) and the local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215),
// which an operator may use as a /48, /56, /64 or /96 (the prefix length
// cannot be read from the address, so every reading counts). It returns
// nothing for other addresses.
func embedded4(a netip.Addr) []netip.Addr {
	b := a.As16()
	switch {
	case a.Is4In6(), v6Compatible.Contains(a), v6NAT64.Contains(a):
		return []netip.Addr{nat64Embedded(a, 96)}
	case v6SixToFour.Contains(a):
		return []netip.Addr{netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})}
	case v6NAT64Local.Contains(a):
		return []netip.Addr{nat64Embedded(a, 48), nat64Embedded(a, 56), nat64Embedded(a, 64), nat64Embedded(a, 96)}
	}
	return nil
}

// CheckMetadata is the classifier for callers that allow private addresses
// on purpose (a fetch of a development server) but must still never hand
// out cloud credentials. It refuses only cloud metadata endpoints: all of
// IPv4 link-local 169.254.0.0/16 (where AWS, GCP, Azure, ECS, EKS and
// others serve them), 100.100.100.200 (Alibaba Cloud), 168.63.129.16 (Azure
// WireServer), 192.0.0.192 (Oracle Cloud), fd00:ec2::/32 (AWS over IPv6)
// and fd20:ce::254 (GCP over IPv6). The zone is dropped and an IPv4 address
// embedded in an IPv6 one is judged too: IPv4-mapped (::ffff:a.b.c.d),
// IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d), local-use NAT64
// (64:ff9b:1::/48 read as a /48, /56, /64 and /96 prefix, RFC 6052 and
// RFC 8215) and 6to4 (2002:AABB:CCDD::), the spellings a dual-stack socket
// or a translating gateway would carry to the IPv4 endpoint. Everything
// [Check] refuses for other reasons passes. A refusal is a *[BlockedError]
// with Metadata set.
func CheckMetadata(addr netip.Addr) error {
	a := addr.WithZone("").Unmap()
	if a.Is4() {
		if p, ok := metadataPrefix(a); ok {
			return &BlockedError{Addr: addr, Reason: "cloud metadata endpoint" + within(p), Metadata: true}
		}
		return nil
	}
	for _, p := range metadata6 {
		if p.Contains(a) {
			return &BlockedError{Addr: addr, Reason: "cloud metadata endpoint", Metadata: true}
		}
	}
	for _, e := range embedded4(a) {
		if p, ok := metadataPrefix(e); ok {
			return &BlockedError{Addr: addr, Reason: "cloud metadata endpoint " + e.String() + within(p) + ", embedded in an IPv6 address", Metadata: true}
		}
	}
	return nil
}

// within names the metadata range p for a reason, or nothing when p is the
// one address the reason already names.
func within(p netip.Prefix) string {
	if p.IsSingleIP() {
		return ""
	}
	return " in " + p.String()
}

func metadataPrefix(a netip.Addr) (netip.Prefix, bool) {
	for _, p := range metadata4 {
		if p.Contains(a) {
			return p, true
		}
	}
	return netip.Prefix{}, false
}
