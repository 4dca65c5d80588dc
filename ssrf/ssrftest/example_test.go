package ssrftest_test

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/paigasus/helikon/ssrf"
	"github.com/paigasus/helikon/ssrf/ssrftest"
)

// A Resolver lets a test make public-looking names point wherever it likes.
// Here one name resolves to loopback and another to a mix of a public and a
// private address; the guarded dialer refuses both before connecting anywhere,
// and a name the table lacks fails as DNS "no such host" does.
func ExampleResolver() {
	var r ssrftest.Resolver
	r.Set("internal.example", "127.0.0.1")
	r.Set("mixed.example", "93.184.216.34,10.0.0.1")
	d := &ssrf.Dialer{Resolver: &r}
	ctx := context.Background()
	for _, host := range []string{"internal.example", "mixed.example", "unknown.example"} {
		_, err := d.DialContext(ctx, "tcp", host+":80")
		var dnsErr *net.DNSError
		fmt.Println(host, errors.Is(err, ssrf.ErrBlocked), errors.As(err, &dnsErr), r.Calls(host))
	}
	// Output:
	// internal.example true false 1
	// mixed.example true false 1
	// unknown.example false true 0
}
