package egress_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/egress"
)

func TestFilterCheckHost(t *testing.T) {
	pol := egress.DenyAll().
		AllowDomains("example.com", "*.wild.org", "93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c").
		DenyDomains("bad.example.com")
	tests := []struct {
		host   string
		port   int
		reason string // "" means allowed
	}{
		{"example.com", 443, ""},
		{"EXAMPLE.COM.", 80, ""},
		{"api.example.com", 443, ""},
		{"deep.api.example.com", 443, ""},
		{"bad.example.com", 443, egress.ReasonDenied},
		{"x.bad.example.com", 443, egress.ReasonDenied},
		{"Bad.Example.Com.", 443, egress.ReasonDenied},
		{"example.com.evil.org", 443, egress.ReasonNotAllowed},
		{"notexample.com", 443, egress.ReasonNotAllowed},
		{"wild.org", 443, egress.ReasonNotAllowed},
		{"a.wild.org", 443, ""},
		{"example.com", 22, egress.ReasonPort},
		{"bad.example.com", 22, egress.ReasonPort},
		{"93.184.215.14", 443, ""},
		{"93.184.215.15", 443, egress.ReasonNotAllowed},
		{"[2606:2800:21f:cb07:6820:80da:af6b:8b2c]", 443, ""},
		{"::ffff:93.184.215.14", 443, ""},
		{"127.0.0.1", 443, egress.ReasonNotAllowed},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s:%d", tt.host, tt.port), func(t *testing.T) {
			err := pol.CheckHost(tt.host, tt.port)
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("CheckHost = %v, want allowed", err)
				}
				return
			}
			var de *egress.DeniedError
			if !errors.As(err, &de) || de.Reason != tt.reason {
				t.Fatalf("CheckHost = %v, want reason %q", err, tt.reason)
			}
			if !errors.Is(err, egress.ErrDenied) || !errors.Is(err, helikon.ErrDenied) || helikon.KindOf(err) != helikon.KindDenied {
				t.Error("a refusal must be a denied error")
			}
		})
	}
}

func TestFilterConstructorsAndCopies(t *testing.T) {
	if err := (egress.Filter{}).CheckHost("example.com", 443); err == nil {
		t.Error("the zero Filter must deny everything")
	}
	if err := egress.AllowAll().CheckHost("anything.example", 443); err != nil {
		t.Errorf("AllowAll: %v", err)
	}
	if err := egress.AllowAll().CheckHost("anything.example", 8080); err == nil {
		t.Error("AllowAll must keep the default ports")
	}
	if err := egress.AllowAll().DenyDomains("anything.example").CheckHost("anything.example", 443); err == nil {
		t.Error("deny must win over AllowAll")
	}
	base := egress.DenyAll().AllowDomains("a.example", "b.example")
	x := base.AllowDomains("x.example")
	y := base.AllowDomains("y.example")
	if x.CheckHost("y.example", 443) == nil || y.CheckHost("x.example", 443) == nil {
		t.Error("AllowDomains must return independent copies")
	}
	if got := egress.DenyAll().AllowDomains("example.com").WithPorts(443).String(); got != "deny-all; allow example.com; ports 443" {
		t.Errorf("String = %q", got)
	}
}

func TestFilterValidate(t *testing.T) {
	if err := egress.DenyAll().AllowDomains("example.com", "*.example.org", "10.0.0.1", "::1").Validate(); err != nil {
		t.Errorf("valid filter: %v", err)
	}
	err := egress.DenyAll().AllowDomains("http://example.com").DenyDomains("a b").WithPorts(0).Validate()
	for _, want := range []string{"http://example.com", "a b", "port 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to mention %q", err, want)
		}
	}
}

func TestParseAuthority(t *testing.T) {
	tests := []struct {
		in      string
		defPort int
		host    string
		port    int
		ok      bool
	}{
		{"example.com:443", 0, "example.com", 443, true},
		{"Example.COM.:8080", 0, "example.com", 8080, true},
		{"example.com", 80, "example.com", 80, true},
		{"[2001:db8::1]:443", 0, "2001:db8::1", 443, true},
		{"[::ffff:127.0.0.1]:443", 0, "::ffff:127.0.0.1", 443, true},
		{"1.2.3.4:1", 0, "1.2.3.4", 1, true},
		{"example.com", 0, "", 0, false},
		{"example.com:65535", 0, "example.com", 65535, true},
		{"example.com:65536", 0, "", 0, false},
		{"example.com:-1", 0, "", 0, false},
		{"[2001:db8::1]", 443, "2001:db8::1", 443, true},
		{"[2001:db8::1]x", 443, "", 0, false},
		{"[2001:db8::1", 443, "", 0, false},
		{"2001:db8::1", 443, "", 0, false},
		{"exa_mple.com:443", 0, "exa_mple.com", 443, true},
		{"ex%61mple.com:443", 0, "", 0, false},
		{"example.com.:443", 0, "example.com", 443, true},
		{"example.com..:443", 0, "", 0, false},
		{"", 80, "", 0, false},
	}
	for _, tt := range tests {
		host, port, err := egress.ParseAuthority(tt.in, tt.defPort)
		if (err == nil) != tt.ok || host != tt.host || port != tt.port {
			t.Errorf("ParseAuthority(%q, %d) = %q, %d, %v; want %q, %d, ok=%v", tt.in, tt.defPort, host, port, err, tt.host, tt.port, tt.ok)
		}
		if err != nil && !errors.Is(err, egress.ErrMalformed) {
			t.Errorf("ParseAuthority(%q): error %v does not wrap ErrMalformed", tt.in, err)
		}
	}
}

func ExampleFilter() {
	pol := egress.DenyAll().AllowDomains("example.com").DenyDomains("ads.example.com")
	fmt.Println(pol.CheckHost("api.example.com", 443))
	fmt.Println(pol.CheckHost("ads.example.com", 443))
	fmt.Println(pol.CheckHost("example.org", 443))
	// Output:
	// <nil>
	// egress to ads.example.com:443 denied: host in deny list
	// egress to example.org:443 denied: host not in allow list
}
