//go:build linux

package ossandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/egress"
)

// loopbackUp brings up the loopback interface of the calling thread's
// (new, empty) network namespace: a fresh namespace has it down, and then
// not even the proxy would be reachable. Needs CAP_NET_ADMIN there.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("bring up loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("bring up loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring up loopback: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("bring up loopback: %w", err)
	}
	return nil
}

// listenProxy creates the proxy's listening socket in the calling thread's
// network namespace, on 127.0.0.1:proxyPort. A socket belongs to the
// namespace it was created in whichever thread uses it later, so this
// program serves the proxy on it from anywhere, while its own connections
// to upstreams are made from its own namespace. The socket is
// close-on-exec: the command never holds it.
func listenProxy() (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return -1, fmt.Errorf("egress proxy socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: proxyPort, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("egress proxy socket: bind 127.0.0.1:%d: %w", proxyPort, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("egress proxy socket: listen: %w", err)
	}
	return fd, nil
}

// startProxy serves a fresh egress proxy for one command on the listening
// socket fd (which it takes over). The proxy ends with stopProxy.
func (b *Backend) startProxy(fd int) (*egress.Proxy, error) {
	f := os.NewFile(uintptr(fd), "egress-proxy")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("egress proxy listener: %w", err)
	}
	p := &egress.Proxy{
		Filter:    b.egress.Filter,
		Resolver:  b.egress.Resolver,
		CheckAddr: b.egress.CheckAddr,
		Logger:    b.log,
	}
	go func() { _ = p.Serve(ln) }()
	return p, nil
}

// stopProxy shuts a command's proxy down once the command is gone: its
// client connections are closed already, so this only releases upstream
// connections; it runs in the background.
func stopProxy(p *egress.Proxy) {
	if p == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = p.Shutdown(ctx)
	}()
}
