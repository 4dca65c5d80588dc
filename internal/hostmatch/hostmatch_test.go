package hostmatch

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/net/idna"
)

func TestMatch(t *testing.T) {
	tests := []struct {
		pattern, host string
		want          bool
	}{
		{"example.com", "example.com", true},
		{"example.com", "api.example.com", true},
		{"example.com", "a.b.example.com", true},
		{"example.com", "EXAMPLE.com.", true},
		{"Example.COM.", "example.com", true},
		{"example.com", "evilexample.com", false},
		{"example.com", "example.com.evil.test", false},
		{"example.com", "com", false},
		{"*.example.com", "api.example.com", true},
		{"*.example.com", "example.com", false},
		{"*.example.com", "evilexample.com", false},
		{"1.2.3.4", "1.2.3.4", true},
		{"1.2.3.4", "::ffff:1.2.3.4", true},
		{"[2001:db8::1]", "2001:db8::1", true},
		{"example.com", "1.2.3.4", false},
		{"*.4", "1.2.3.4", false}, // an IP literal never matches a domain pattern
		{"3.4", "1.2.3.4", false},
		// Other spellings of the same address: IPv4-mapped, zones, NAT64
		// (64:ff9b::/96) and the numeric forms of inet_aton.
		{"10.0.0.5", "::ffff:10.0.0.5", true},
		{"10.0.0.5", "[::ffff:a00:5]", true},
		{"::ffff:10.0.0.5", "10.0.0.5", true},
		{"10.0.0.5", "::FFFF:0A00:0005", true},
		{"fe80::1", "fe80::1%eth0", true},
		{"fe80::1%eth0", "fe80::1", true},
		{"fe80::1%eth0", "fe80::1%eth1", true},
		{"[fe80::1]", "FE80:0:0::1%25eth0", true}, // whatever the zone
		{"10.0.0.5", "64:ff9b::a00:5", true},
		{"10.0.0.5", "64:ff9b::10.0.0.5", true},
		{"64:ff9b::10.0.0.5", "10.0.0.5", true},
		{"10.0.0.5", "167772165", true},
		{"10.0.0.5", "0xa000005", true},
		{"10.0.0.5", "012.0.0.5", true},
		{"10.0.0.5", "10.5", true},
		{"10.0.0.5", "10.0.5", true},
		{"10.0.0.5", "0x0a.0.0.0x5", true},
		{"127.0.0.1", "0x7f.1.", true},
		{"10.0.0.5", "10.0.0.6", false},
		{"10.0.0.5", "10.0.0.5.5", false},
		{"10.0.0.5", "10.256.5", false}, // an inner part above 255 is no address
		{"*.1", "0x7f.1", false},        // a numeric spelling is an address, never a domain
		// Not unified, by decision (see the package doc).
		{"10.0.0.5", "2002:a00:5::", false},     // 6to4 names a site
		{"10.0.0.5", "64:ff9b:1::a00:5", false}, // local-use NAT64, prefix length unknown
		{"10.0.0.5", "::10.0.0.5", false},       // IPv4-compatible, deprecated
		{"", "example.com", false},
		{"example.com", "", false},
	}
	for _, tt := range tests {
		if got := Match(tt.pattern, tt.host); got != tt.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tt.pattern, tt.host, got, tt.want)
		}
	}
}

func TestValid(t *testing.T) {
	for _, p := range []string{"example.com", "*.example.com", "a_b.example", "1.2.3.4", "[::1]", "::1", "localhost"} {
		if !Valid(p) {
			t.Errorf("Valid(%q) = false", p)
		}
	}
	for _, p := range []string{"", "*", "*.", "a..b", "exa mple.com", "bücher.de", "*.*.example.com", "a/b", "x@y", strings.Repeat("a", 64) + ".com"} {
		if Valid(p) {
			t.Errorf("Valid(%q) = true", p)
		}
	}
}

// FuzzMatch checks the properties the egress filter and WebFetch rely on.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"example.com", "api.example.com"}, {"*.example.com", "example.com"}, {"*.4", "1.2.3.4"}, {"1.2.3.4", "::ffff:1.2.3.4"}, {"example.com", "evilexample.com"}, {"fe80::1", "fe80::1%eth0"}, {"10.0.0.5", "64:ff9b::a00:5"}, {"127.0.0.1", "0x7f.1"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, host string) {
		if !Match(pattern, host) {
			return
		}
		p, h := Normalize(pattern), Normalize(host)
		if hip, ok := Canonical(h); ok {
			pip, ok := Canonical(p)
			if !ok || pip != hip {
				t.Fatalf("IP host %q matched pattern %q, another address", host, pattern)
			}
			return
		}
		if sub, ok := strings.CutPrefix(p, "*."); ok {
			if h == sub || !strings.HasSuffix(h, "."+sub) {
				t.Fatalf("wildcard %q matched %q", pattern, host)
			}
			return
		}
		if h != p && !strings.HasSuffix(h, "."+p) {
			t.Fatalf("%q matched %q, which is neither it nor a subdomain", pattern, host)
		}
	})
}

// spellings returns ways of writing the address a that hosts and patterns
// may arrive in: brackets, upper case, a trailing dot, a zone, the
// IPv4-mapped, NAT64 and inet_aton forms of an IPv4 address, the fully
// expanded form of an IPv6 one.
func spellings(a netip.Addr, zone string) []string {
	out := []string{a.String(), "[" + a.String() + "]", strings.ToUpper(a.String()), a.String() + "."}
	if a.Is4() {
		b := a.As4()
		n := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
		m := netip.AddrFrom16(netip.AddrFrom4(b).As16()) // ::ffff:a.b.c.d
		var nat [16]byte
		copy(nat[:], netip.MustParseAddr("64:ff9b::").AsSlice())
		copy(nat[12:], b[:])
		out = append(out,
			m.String(), "["+m.StringExpanded()+"]", "::ffff:"+a.String(),
			netip.AddrFrom16(nat).String(), "64:ff9b::"+a.String(),
			fmt.Sprint(n), fmt.Sprintf("0x%x", n), fmt.Sprintf("0%o.%d.%d.%d", b[0], b[1], b[2], b[3]),
			fmt.Sprintf("%d.%d", b[0], n&0xffffff), fmt.Sprintf("%d.%d.%d", b[0], b[1], n&0xffff),
			fmt.Sprintf("0x%x.0x%x.0x%x.0x%x", b[0], b[1], b[2], b[3]),
		)
		return append(out, unicodeSpellings(a.String())...)
	}
	out = append(out, a.StringExpanded(), strings.ToUpper(a.StringExpanded()))
	if zone != "" && !strings.ContainsAny(zone, "%]") {
		out = append(out, a.String()+"%"+zone, "["+a.String()+"%"+zone+"]")
	}
	return out
}

// unicodeSpellings writes the dotted quad s with fullwidth and with circled
// digits and with ideographic and halfwidth full stops (the public SSRF
// corpora's ①②⑦.⓪.⓪.① and 169。254。169。254), and returns what the IDNA
// mapping that WebFetch applies to a URL's host before matching makes of
// each: hostmatch sees only that.
func unicodeSpellings(s string) []string {
	circled := func(r rune) rune {
		if r == '0' {
			return '⓪'
		}
		return '①' + r - '1'
	}
	var out []string
	for _, digit := range []func(rune) rune{func(r rune) rune { return r - '0' + '０' }, circled} {
		for _, dot := range []rune{'.', '。', '｡', '．'} {
			u := strings.Map(func(r rune) rune {
				if r == '.' {
					return dot
				}
				return digit(r)
			}, s)
			if a, err := idna.Lookup.ToASCII(u); err == nil {
				out = append(out, a)
			}
		}
	}
	return out
}

// FuzzSpellingsDecideAlike: every spelling of an address gets the same
// decision against any pattern, and every spelling of an address pattern
// matches every spelling of the address, so that a deny rule for an address
// cannot be sidestepped by writing the address another way.
func FuzzSpellingsDecideAlike(f *testing.F) {
	f.Add([]byte{10, 0, 0, 5}, "10.0.0.5", "eth0")
	f.Add([]byte{10, 0, 0, 5}, "::ffff:10.0.0.5", "")
	f.Add([]byte{127, 0, 0, 1}, "*.1", "")
	f.Add(netip.MustParseAddr("fe80::1").AsSlice(), "fe80::1%lo", "eth0")
	f.Add(netip.MustParseAddr("2001:db8::1").AsSlice(), "example.com", "1")
	f.Fuzz(func(t *testing.T, raw []byte, pattern, zone string) {
		a, ok := netip.AddrFromSlice(raw)
		if !ok {
			return
		}
		a = a.Unmap()
		if a.Is6() && nat64.Contains(a) {
			return // spelled below as the IPv4 address it embeds
		}
		all := spellings(a, zone)
		want := Match(pattern, all[0])
		for _, s := range all[1:] {
			if got := Match(pattern, s); got != want {
				t.Fatalf("Match(%q, %q) = %v but Match(%q, %q) = %v", pattern, s, got, pattern, all[0], want)
			}
		}
		for _, p := range all {
			for _, h := range all {
				if !Match(p, h) {
					t.Fatalf("pattern %q does not match %q, the same address", p, h)
				}
			}
		}
	})
}

// TestUnicodeDigitSpellingsMatchAfterIDNA: a host spelt with Unicode digits
// and full stops reaches hostmatch as the dotted quad the IDNA mapping makes
// of it, so an address pattern matches it.
func TestUnicodeDigitSpellingsMatchAfterIDNA(t *testing.T) {
	got := unicodeSpellings("10.0.0.5")
	if len(got) != 8 {
		t.Fatalf("unicodeSpellings(10.0.0.5) = %q, want 8 spellings the IDNA mapping accepts", got)
	}
	for _, h := range got {
		if !Match("10.0.0.5", h) || Match("10.0.0.6", h) {
			t.Errorf("%q: want it matched by 10.0.0.5 only", h)
		}
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		pattern, sub string
		want         bool
	}{
		{"example.com", "example.com", true},
		{"example.com", "api.example.com", true},
		{"example.com", "*.example.com", true},
		{"example.com", "*.api.example.com", true},
		{"*.example.com", "api.example.com", true},
		{"*.example.com", "*.api.example.com", true},
		{"*.example.com", "*.example.com", true},
		{"*.example.com", "example.com", false}, // example.com itself is not a subdomain
		{"api.example.com", "example.com", false},
		{"api.example.com", "*.example.com", false},
		{"example.com", "evilexample.com", false},
		{"example.com", "*.com", false},
		{"1.2.3.4", "1.2.3.4", true},
		{"1.2.3.4", "::ffff:1.2.3.4", true},
		{"example.com", "1.2.3.4", false},
		{"*.4", "1.2.3.4", false},
		// A numeric spelling is the address and the end of domain names.
		{"127.0.0.1", "2130706433", false},
		{"127.0.0.1", "127.1", false},
		{"2130706433", "2130706433", true},
		{"2130706433", "127.0.0.1", true},
	}
	for _, tt := range tests {
		if got := Covers(tt.pattern, tt.sub); got != tt.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", tt.pattern, tt.sub, got, tt.want)
		}
	}
}

// FuzzCovers checks that a covered pattern matches no host its cover does
// not: a project's WebFetch host list that is covered by the user's cannot
// reach a host the user's does not allow.
func FuzzCovers(f *testing.F) {
	for _, s := range [][3]string{{"example.com", "*.example.com", "a.example.com"}, {"*.example.com", "example.com", "example.com"}, {"127.0.0.1", "2130706433", "x.2130706433"}, {"1.2.3.4", "::ffff:1.2.3.4", "1.2.3.4"}} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, pattern, sub, host string) {
		if !Valid(pattern) || !Valid(sub) || !Covers(pattern, sub) {
			return
		}
		if Match(sub, host) && !Match(pattern, host) {
			t.Fatalf("%q covers %q, which matches %q; %q does not", pattern, sub, host, pattern)
		}
	})
}
