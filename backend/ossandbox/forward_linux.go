//go:build linux

package ossandbox

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
)

// ErrNoSessionNetwork is returned by [Backend.DialSession] and
// [Backend.Forward] for a backend without a network of the session's own
// (neither [Options].Loopback nor [Options].Egress): there is no port of
// the session to reach.
var ErrNoSessionNetwork = errors.New("ossandbox: the backend has no network of its own (Options.Loopback or Options.Egress): nothing of the session to forward")

// MaxForwardConns bounds the connections one [Backend.Forward] joins at
// once; more are closed as they are accepted.
const MaxForwardConns = 64

// DialSession connects to port on the loopback (127.0.0.1) of the
// session's network namespace ([Options].Loopback or [Options].Egress):
// the way into a server a command of the session started, for the user
// (see [Backend.Forward]). Only the session's own loopback is reached.
// Root callers make the connection from a thread of this program that
// entered the namespace; unprivileged callers' launcher makes it in its
// user namespace and sends the connected socket back. Linux.
func (b *Backend) DialSession(ctx context.Context, port int) (net.Conn, error) {
	if b.netMode() == launcher.NetNone {
		return nil, ErrNoSessionNetwork
	}
	if port <= 0 || port > 0xffff {
		return nil, fmt.Errorf("ossandbox: dial the session: port %d out of range", port)
	}
	var fd int
	var err error
	if b.privileged {
		var ns int
		if ns, err = b.net.get(b); err == nil {
			fd, err = launcher.DialInNetNS(ns, port)
		}
	} else {
		fd, err = b.dialThroughLauncher(ctx, port)
	}
	if err != nil {
		return nil, fmt.Errorf("ossandbox: dial the session's port %d: %w", port, err)
	}
	f := os.NewFile(uintptr(fd), "session-conn")
	defer f.Close()
	return net.FileConn(f)
}

// dialThroughLauncher asks the long-lived launcher, which holds the
// session's namespace, for a connection to port there.
func (b *Backend) dialThroughLauncher(ctx context.Context, port int) (int, error) {
	if v := b.view(); v.unsettled {
		b.settle()
	}
	if v := b.view(); !v.userns || !v.server {
		return -1, fmt.Errorf("%w: os sandbox: forwarding a port of the session needs the long-lived launcher, which does not run here", backend.ErrUnavailable)
	}
	c, err := b.srv.get(b)
	if err != nil {
		return -1, err
	}
	rc := &remoteCmd{c: c, id: c.seq.Add(1), program: "dial", replies: make(chan reply, 1)}
	c.mu.Lock()
	if c.calls == nil {
		c.mu.Unlock()
		return -1, errLauncherDied
	}
	c.calls[rc.id] = rc
	c.mu.Unlock()
	msg := launcher.Message(launcher.MsgDial, rc.id, binary.AppendUvarint(nil, uint64(port)))
	if _, _, err := c.conn.WriteMsgUnix(msg, nil, nil); err != nil {
		c.forget(rc.id)
		return -1, fmt.Errorf("%w: os sandbox: ask the launcher: %w", backend.ErrUnavailable, err)
	}
	select {
	case r := <-rc.replies:
		switch {
		case r.t == launcher.MsgDialed && r.fd > 0:
			return r.fd, nil
		case r.t == launcher.MsgUnavailable:
			return -1, errors.New(string(r.payload))
		case r.t == 0:
			return -1, errLauncherDied
		}
		return -1, fmt.Errorf("ossandbox: the launcher replied %q", r.t)
	case <-ctx.Done():
		go func() { // the socket may still come: close it
			if r := <-rc.replies; r.t == launcher.MsgDialed && r.fd > 0 {
				unix.Close(r.fd)
			}
		}()
		return -1, ctx.Err()
	}
}

// Forward joins each connection accepted on ln to port on the loopback of
// the session's network namespace (see [Backend.DialSession]), until ctx
// ends, when it closes ln and every joined connection, and returns
// ctx's error; or until ln fails. ln is the caller's choice: bind it to
// 127.0.0.1 so that only this machine's users reach the session's server.
// At most [MaxForwardConns] connections are joined at once.
func (b *Backend) Forward(ctx context.Context, ln net.Listener, port int) error {
	if b.netMode() == launcher.NetNone {
		return ErrNoSessionNetwork
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	slots := make(chan struct{}, MaxForwardConns)
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("ossandbox: forward: %w", err)
		}
		select {
		case slots <- struct{}{}:
		default:
			c.Close() // over the bound
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			join(ctx, b, c, port)
		}()
	}
}

// join copies between c and a new connection to port of the session until
// either side ends or ctx does.
func join(ctx context.Context, b *Backend, c net.Conn, port int) {
	defer c.Close()
	s, err := b.DialSession(ctx, port)
	if err != nil {
		b.log.DebugContext(ctx, "ossandbox: forward", "port", port, "err", err)
		return
	}
	defer s.Close()
	stop := context.AfterFunc(ctx, func() { c.Close(); s.Close() })
	defer stop()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go pipe(s, c)
	go pipe(c, s)
	<-done
	<-done
}
