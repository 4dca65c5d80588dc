package egress

import "syscall"

// SetDialTripwire installs f as the base Control of p's upstream dialer, run
// after the address check for addresses it allowed only. Tests use it to
// stop (and report) any connection to an address that is not a test
// upstream, so that a broken guard cannot send a packet off this machine.
func SetDialTripwire(p *Proxy, f func(network, address string, c syscall.RawConn) error) {
	p.dialControl = f
}
