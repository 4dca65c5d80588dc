package ssrf_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/paigasus/helikon/ssrf"
)

func ExampleCheck() {
	for _, s := range []string{"93.184.216.34", "10.0.0.1", "::ffff:127.0.0.1", "fd00:ec2::254"} {
		fmt.Println(s, ssrf.Check(netip.MustParseAddr(s)))
	}
	// Output:
	// 93.184.216.34 <nil>
	// 10.0.0.1 blocked address: 10.0.0.1 (private (RFC 1918)); only public internet addresses can be reached
	// ::ffff:127.0.0.1 blocked address: ::ffff:127.0.0.1 (IPv4-mapped loopback); only public internet addresses can be reached
	// fd00:ec2::254 blocked address: fd00:ec2::254 (cloud metadata (unique local)); only public internet addresses can be reached
}

func ExampleParseURL() {
	for _, s := range []string{"https://example.com/", "http://0x7f000001/", "file:///etc/passwd", "https://user:pw@example.com/"} {
		_, err := ssrf.ParseURL(s)
		fmt.Println(s, err == nil, errors.Is(err, ssrf.ErrBlocked), ssrf.Refused(err))
	}
	// Output:
	// https://example.com/ true false false
	// http://0x7f000001/ false true true
	// file:///etc/passwd false false true
	// https://user:pw@example.com/ false false true
}

// ExampleVetURLWith vets URLs for a caller that allows private addresses:
// private literals pass, metadata endpoints and numeric spellings do not.
func ExampleVetURLWith() {
	for _, s := range []string{"http://10.0.0.1:8080/", "http://[::ffff:169.254.169.254]/", "http://0x7f.1/"} {
		u, _ := url.Parse(s)
		fmt.Println(s, ssrf.VetURLWith(u, ssrf.CheckMetadata))
	}
	// Output:
	// http://10.0.0.1:8080/ <nil>
	// http://[::ffff:169.254.169.254]/ blocked address: ::ffff:169.254.169.254 (cloud metadata endpoint in 169.254.0.0/16); cloud metadata endpoints are never reached, even with private addresses allowed
	// http://0x7f.1/ blocked address: host "0x7f.1" (numeric host spelling; write an IPv4 address as four decimal numbers such as 93.184.216.34, or use the domain name)
}

// ExampleDialer builds an HTTP client whose every connection goes through the
// guard. Redirects must still be vetted hop by hop with VetURL, and the
// transport must not use a proxy. (The client parses a Location before
// CheckRedirect runs, so one it cannot parse fails as a plain error, not a
// refusal; follow redirects by hand, as WebFetch does, to refuse it.)
func ExampleDialer() {
	d := &ssrf.Dialer{}
	client := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:       nil, // a proxy would hide the destination from the dialer
			DialContext: d.DialContext,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			return ssrf.VetURL(req.URL)
		},
	}
	_, err := client.Get("http://127.0.0.1/")
	fmt.Println(errors.Is(err, ssrf.ErrBlocked))
	// Output: true
}
