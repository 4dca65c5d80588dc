package egress

import (
	"net/netip"

	"github.com/paigasus/helikon/ssrf"
)

// defaultCheckAddr is the SSRF classifier shared with WebFetch: only public
// unicast addresses pass.
func defaultCheckAddr(a netip.Addr) error { return ssrf.Check(a) }
