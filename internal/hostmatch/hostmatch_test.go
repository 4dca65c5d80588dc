package hostmatch

import (
	"net/netip"
	"strings"
	"testing"
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

// FuzzMatch checks the properties the egress policy and WebFetch rely on.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{{"example.com", "api.example.com"}, {"*.example.com", "example.com"}, {"*.4", "1.2.3.4"}, {"1.2.3.4", "::ffff:1.2.3.4"}, {"example.com", "evilexample.com"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, host string) {
		if !Match(pattern, host) {
			return
		}
		p, h := Normalize(pattern), Normalize(host)
		if hip, err := netip.ParseAddr(h); err == nil {
			pip, err := netip.ParseAddr(p)
			if err != nil || pip.Unmap() != hip.Unmap() {
				t.Fatalf("IP host %q matched pattern %q", host, pattern)
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
