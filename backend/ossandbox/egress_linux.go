//go:build linux

package ossandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
	"github.com/paigasus/helikon/egress"
)

// A session's network (Options.Loopback, Options.Egress) is one network
// namespace per backend, shared by its commands (see the package
// documentation, Network). A root caller's backend holds it here
// (netSession); an unprivileged caller's long-lived launcher holds it in
// its user namespace and passes the proxy's listening socket back with
// its ready message (serverConn.receive). Either way this program serves
// the egress proxy on that socket from its own network namespace, where
// the proxy's connections to upstreams are made.

// netMode is the launcher's network mode for this backend's commands.
func (b *Backend) netMode() byte {
	switch {
	case b.egress != nil:
		return launcher.NetProxy
	case b.opts.Loopback:
		return launcher.NetLoopback
	}
	return launcher.NetNone
}

// netSession is a root caller's session network namespace, made by the
// first command that needs it and let go by Close.
type netSession struct {
	mu    sync.Mutex
	ns    launcher.NetNS
	proxy *egress.Proxy
	made  bool
}

// get returns the descriptor of the session's network namespace, making
// it (and serving its egress proxy) the first time.
func (n *netSession) get(b *Backend) (int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.made {
		return n.ns.NS, nil
	}
	ns, err := launcher.NewNetNS(b.egress != nil)
	if err != nil {
		return -1, fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
	}
	if ns.Proxy >= 0 {
		ln := ns.Proxy
		ns.Proxy = -1
		if n.proxy, err = b.startProxy(ln); err != nil {
			ns.Close()
			return -1, fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
		}
	}
	n.ns, n.made = ns, true
	return ns.NS, nil
}

// close lets go of the namespace and stops its proxy; commands still
// running keep the namespace until they end. A later command makes a new
// one.
func (n *netSession) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.made {
		return
	}
	n.ns.Close()
	stopProxy(n.proxy)
	n.ns, n.proxy, n.made = launcher.NoNetNS, nil, false
}

// startProxy serves a fresh egress proxy for one session on the listening
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

// stopProxy shuts a session's proxy down once its session is gone, in
// the background.
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

// netFeatures are the guarantees features of the session's network.
func (b *Backend) netFeatures() []string {
	f := []string{"network: one network namespace per backend (the session), shared by its commands, with loopback only: nothing outside it is routable, and its abstract Unix sockets are its own"}
	if b.opts.Loopback {
		f = append(f, "network: commands may listen and connect on any TCP port of the session's loopback; a server one command starts is reachable by the next, not by another session or the host")
	}
	if b.egress != nil {
		f = append(f, "network: the only way out is an egress proxy at "+ProxyURL+" (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY), served by this program from its own namespace, enforcing: "+b.egress.Filter.String())
	}
	f = append(f, "seccomp-bpf: only TCP sockets (AF_INET/AF_INET6 stream), no UDP, raw, netlink or packet sockets, no TCP Fast Open")
	if b.abi >= 4 && !b.opts.Loopback {
		f = append(f, fmt.Sprintf("landlock: tcp connect only to port %d, bind denied", proxyPort))
	}
	if !b.privileged {
		f = append(f, "unprivileged caller: the network namespace belongs to the launcher's user namespace (a launcher per command, where the long-lived one cannot start, makes one per command, without the egress proxy)")
	}
	return f
}

// errNoNetNS is returned for a command that needs the session's network
// namespace where none can be made: it is not run.
var errNoNetNS = fmt.Errorf("%w: os sandbox: a network of the commands' own (Loopback, Egress) needs a network namespace, which needs the launcher's user namespace here; this machine refuses user namespaces (see helikon doctor). Run without --loopback and --egress-allow, or as root", backend.ErrUnavailable)

// errNoProxyNS is returned for a command that needs the egress proxy
// where only a launcher per command can start: it has no way to pass the
// proxy's socket back. The command is not run.
var errNoProxyNS = fmt.Errorf("%w: os sandbox: the egress proxy needs the long-lived launcher (a pid namespace with a /proc of its own and a tmpfs), which cannot start here; run without --egress-allow, or as root", backend.ErrUnavailable)

// checkNet refuses a command whose network cannot be given as configured
// with the launch configuration v (unprivileged callers): never does one
// run with TCP allowed in this program's network namespace.
func (b *Backend) checkNet(v launchView, server bool) error {
	if b.privileged || b.netMode() == launcher.NetNone {
		return nil
	}
	if !v.userns {
		return errNoNetNS
	}
	if !server && b.netMode() == launcher.NetProxy {
		return errNoProxyNS
	}
	return nil
}

// netModePerCommand is the network mode of a launcher per command: a
// network namespace of the command's own, loopback only (the egress
// proxy is refused before such a launcher starts, see checkNet).
func (b *Backend) netModePerCommand() byte {
	if b.netMode() == launcher.NetNone {
		return launcher.NetNone
	}
	return launcher.NetLoopback
}
