package launcher

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// A session's network namespace ([Config].Net): created once, by a
// discarded thread that unshares it, brings its loopback up and, for the
// egress proxy, creates the proxy's listening socket in it; then held by
// a descriptor, which each command's confining thread enters (setns)
// before it drops its capabilities. Every command of the session, and
// everything they start, shares that namespace and nothing else: its only
// interface is loopback, so no address outside it is routable, and its
// abstract Unix socket namespace is its own (abstract sockets belong to
// a network namespace).

// ProxyPort is the port the egress proxy listens on inside a session's
// network namespace.
const ProxyPort = 3128

// NetNS is a session's network namespace: NS a descriptor of it, Proxy
// the egress proxy's listening socket in it or -1. Both are close-on-exec.
type NetNS struct {
	NS, Proxy int
}

// NoNetNS is the zero NetNS: nothing held.
var NoNetNS = NetNS{NS: -1, Proxy: -1}

// Close closes what n holds.
func (n NetNS) Close() {
	for _, fd := range []int{n.NS, n.Proxy} {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
}

// NewNetNS creates a network namespace, with loopback up and, with proxy,
// the egress proxy's listening socket, from a discarded thread: this
// process's own threads stay where they are. It needs CAP_SYS_ADMIN and
// CAP_NET_ADMIN (root, or the launcher in its user namespace).
func NewNetNS(proxy bool) (NetNS, error) {
	n := NoNetNS
	err := OnDiscardedThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("create the session's network namespace: %w", err)
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("hold the session's network namespace: %w", err)
		}
		n.NS = fd
		if err := LoopbackUp(); err != nil {
			return err
		}
		if proxy {
			if n.Proxy, err = ListenProxy(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		n.Close()
		return NoNetNS, err
	}
	return n, nil
}

// EnterNetNS moves the calling thread, locked and to be discarded, into
// the network namespace fd (see [NewNetNS]).
func EnterNetNS(fd int) error {
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("enter the session's network namespace: %w", err)
	}
	return nil
}

// LoopbackUp brings up the loopback interface of the calling thread's
// (new, empty) network namespace: a fresh namespace has it down, and then
// not even the proxy would be reachable. Needs CAP_NET_ADMIN there.
func LoopbackUp() error {
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

// ListenProxy creates the egress proxy's listening socket in the calling
// thread's network namespace, on 127.0.0.1:[ProxyPort]. A socket belongs
// to the namespace it was created in whichever process uses it later, so
// the backend serves the proxy on it from its own namespace, where its
// connections to upstreams are made. The socket is close-on-exec: no
// command holds it.
func ListenProxy() (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return -1, fmt.Errorf("egress proxy socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrInet4{Port: ProxyPort, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("egress proxy socket: bind 127.0.0.1:%d: %w", ProxyPort, err)
	}
	if err := unix.Listen(fd, 128); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("egress proxy socket: listen: %w", err)
	}
	return fd, nil
}

// DialInNetNS returns a TCP socket (close-on-exec) connected to
// 127.0.0.1:port of the network namespace ns, made by a discarded thread
// that entered it. A connection to a port nothing listens on fails with
// ECONNREFUSED.
func DialInNetNS(ns, port int) (int, error) {
	fd := -1
	err := OnDiscardedThread(func() error {
		if err := EnterNetNS(ns); err != nil {
			return err
		}
		var err error
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return fmt.Errorf("dial the session's port %d: %w", port, err)
		}
		if err := unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			unix.Close(fd)
			fd = -1
			return fmt.Errorf("dial the session's port %d: %w", port, err)
		}
		return nil
	})
	return fd, err
}
