//go:build linux

package ossandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
	"github.com/paigasus/helikon/egress"
	"github.com/paigasus/helikon/internal/prelaunch"
	"github.com/paigasus/helikon/internal/proc"
)

// An unprivileged caller's commands start through a long-lived launcher
// where they can (a user namespace, a pid namespace with a /proc of its
// own, and the tmpfs): this program re-executed once per backend, in a new
// user, mount and pid namespace, that confines and starts each command the
// backend sends it over a socket pair (see launcher's serve). It is
// started by the first command that needs it, started again by the next
// command if it died, and killed by Close or when the backend is garbage;
// each backend has its own, with its own policy. Where it cannot start,
// commands start through a launcher each (startLauncherNS), as before.

// errLauncherDied is returned for a command whose launcher died while it
// ran: the kernel killed the command with it (the launcher is the first
// process of their pid namespace). Nothing is retried.
var errLauncherDied = errors.New("ossandbox: the launcher died while the command ran; the command was killed")

// serverConn is a running long-lived launcher.
type serverConn struct {
	proc *prelaunch.Process
	conn *net.UnixConn
	seq  atomic.Uint64
	once sync.Once // markDead

	// ready is closed at the launcher's first message: ready, or why it
	// did not start (startErr).
	ready chan struct{}

	mu       sync.Mutex
	calls    map[uint64]*remoteCmd
	dead     bool
	startErr string // the launcher ended without becoming ready: why
	// serveProxy, set before the launcher's configuration is written,
	// serves the egress proxy on the listening socket the launcher sends
	// with its ready message (the session's network namespace, see
	// egress_linux.go); proxy is that proxy, stopped when the launcher
	// is gone.
	serveProxy func(fd int) (*egress.Proxy, error)
	proxy      *egress.Proxy
}

// servers holds a backend's long-lived launcher; it is apart from the
// Backend so that the cleanup that kills it does not keep the Backend
// alive.
type servers struct {
	mu  sync.Mutex
	cur *serverConn
}

// get returns the running launcher, starting one if there is none or it
// died.
func (s *servers) get(b *Backend) (*serverConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != nil && !s.cur.isDead() {
		return s.cur, nil
	}
	if l := b.opts.Launcher; l != nil && s.cur == nil {
		if c := l.take(b); c != nil {
			s.cur = c
			return c, nil
		}
	}
	// No probe: the command about to be sent is confined as the probe's
	// thread would be, and is refused as unavailable where that fails.
	c, err := b.launchServer(false)
	if err != nil {
		return nil, err
	}
	s.cur = c
	return c, nil
}

// close kills the running launcher, if any.
func (s *servers) close() {
	s.mu.Lock()
	c := s.cur
	s.cur = nil
	s.mu.Unlock()
	if c != nil {
		c.kill()
	}
}

// Launcher is a long-lived launcher started ahead of the backend that is
// to use it ([Options].Launcher), so that its start, a second Go runtime
// in new namespaces, overlaps the caller's own work: a program that runs
// one command, as helikon exec does, starts it before building the
// backend. It waits, having done nothing else, until the first command of
// a backend over the same root hands it that backend's policy, and is
// then that backend's (killed by its Close, or when it is garbage). One
// that no backend took must be closed; it also exits when this program
// does. Unprivileged callers only: root callers need no launcher.
type Launcher struct {
	started chan struct{} // closed once the start is done
	root    string        // the root it was started in, cleaned
	c       *serverConn   // nil if it did not start
	cfg     *os.File      // its configuration pipe

	mu    sync.Mutex
	taken bool // by a backend, or closed
}

// StartLauncher starts, in the background, a long-lived launcher for a
// backend over root (see [Launcher]), whose commands run as the caller's
// own uid and gid: a backend with [Options].MapRootUser does not take it,
// and starts its own. Where it does not start (root callers, no user
// namespaces), the backend starts its own as it would without it.
func StartLauncher(root string) *Launcher {
	l := &Launcher{started: make(chan struct{})}
	go func() {
		defer close(l.started)
		if os.Geteuid() == 0 || launcherUnavailable != nil {
			return
		}
		croot, err := cleanRoot(root)
		if err != nil {
			return
		}
		// One this program started at its initialisation (the CLI does)
		// is taken rather than a second started.
		if p := prelaunch.TakeEarly(croot); p != nil {
			l.c, l.cfg, err = adoptLauncherProcess(p)
		} else {
			l.c, l.cfg, err = startLauncherProcess(croot, false)
		}
		if err == nil {
			l.root = croot
		}
	}()
	return l
}

// take hands the launcher to b, configured with b's policy, unprobed (the
// first command's confinement is the check), or returns nil if it cannot
// serve b: not started, died, already taken, another root, or another
// identity (it maps the caller to its own ids; b may map it to root).
func (l *Launcher) take(b *Backend) *serverConn {
	<-l.started
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.taken || l.c == nil || l.c.isDead() || l.root != b.root || l.c.proc.MapRoot != b.opts.MapRootUser {
		return nil
	}
	l.taken = true
	l.c.expectProxy(b)
	writeConfig(l.cfg, b.serverConfig(false))
	return l.c
}

// Close kills the launcher unless a backend took it.
func (l *Launcher) Close() error {
	<-l.started
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.taken && l.c != nil {
		l.cfg.Close()
		l.c.kill()
	}
	l.taken = true
	return nil
}

// Close stops the backend's long-lived launcher (unprivileged callers),
// killing the commands it still runs, and lets go of the thread a root
// caller's backend confined ahead for its next command. The backend stays
// usable: a later command starts a new launcher. Close also removes the
// session home ([Options].HomeSize) and everything in it; a later command
// finds a new, empty one at the same path. Close is also done when
// the backend is garbage (an idle root caller's standby is let go after
// 30 s, and holds the backend until then).
func (b *Backend) Close() error {
	b.srv.close()
	b.standby.Close()
	b.net.close()
	if b.home != nil {
		return b.home.remove()
	}
	return nil
}

// startServer starts a long-lived launcher with the backend's current
// policy and waits until it has confined a throwaway thread as its
// commands' will be: a probe (see settle).
func (b *Backend) startServer() (*serverConn, error) { return b.launchServer(true) }

// launchServer starts a long-lived launcher with the backend's current
// policy and waits until it is ready to confine commands; with probe,
// until it has confined a throwaway thread as its commands' will be.
func (b *Backend) launchServer(probe bool) (*serverConn, error) {
	if launcherUnavailable != nil {
		return nil, launcherUnavailable
	}
	c, cfg, err := startLauncherProcess(b.root, b.opts.MapRootUser)
	if err != nil {
		return nil, err
	}
	c.expectProxy(b)
	writeConfig(cfg, b.serverConfig(probe))
	if probe {
		<-c.ready
		if why := c.notStarted(); why != "" {
			return nil, fmt.Errorf("%w: %s", backend.ErrUnavailable, why)
		}
	}
	// Otherwise commands are sent at once: the launcher reads them once
	// it is ready, and if it never is, they are refused as unavailable
	// (see markDead), having never been read.
	return c, nil
}

// serverConfig is the encoded configuration of the backend's long-lived
// launcher.
func (b *Backend) serverConfig(probe bool) []byte {
	tmp := tempDir{path: b.tmpBase, tmpfs: true}
	return (&launcher.Config{
		Serve:    true,
		Probe:    probe,
		Root:     b.root,
		Tmp:      b.tmpBase,
		TmpFS:    true,
		RootRW:   b.rootRW,
		TmpRW:    b.tmpRW,
		PidNS:    true,
		LastCap:  b.lastCap,
		ABI:      b.abi,
		Rules:    b.rules(tmp),
		ReadOnly: b.probeless(probe),
		Writable: b.writable(),
		Overlays: b.overlays(),
		Filter:   b.serverFilter,
		Net:      b.netMode(),
	}).Encode()
}

// startLauncherProcess starts a long-lived launcher in root, in a new
// user, mount and pid namespace (the caller mapped to root with mapRoot,
// to itself otherwise), and returns it with the write end of its
// configuration pipe: until the configuration is written (writeConfig) it
// waits, having done nothing but start its Go runtime.
func startLauncherProcess(root string, mapRoot bool) (*serverConn, *os.File, error) {
	p, err := prelaunch.Spawn(root, mapRoot)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
	}
	return adoptLauncherProcess(p)
}

// adoptLauncherProcess is startLauncherProcess for a launcher already
// started (prelaunch.Spawn).
func adoptLauncherProcess(p *prelaunch.Process) (*serverConn, *os.File, error) {
	fc, err := net.FileConn(p.Sock) // a duplicate: p.Sock is closed either way
	if err != nil {
		p.Kill()
		return nil, nil, fmt.Errorf("%w: os sandbox: launcher socket: %w", backend.ErrUnavailable, err)
	}
	p.Sock.Close()
	c := &serverConn{proc: p, conn: fc.(*net.UnixConn), calls: map[uint64]*remoteCmd{}, ready: make(chan struct{})}
	go c.receive()
	return c, p.Config, nil
}

// writeConfig writes a launcher's configuration and closes the pipe, in a
// goroutine: a configuration larger than the pipe's buffer would block
// until the launcher reads it.
func writeConfig(w *os.File, data []byte) {
	go func() {
		_, _ = w.Write(data)
		w.Close()
	}()
}

// expectProxy has the launcher's ready message carry the egress proxy's
// listening socket when b has the proxy: without it the launcher is
// refused (setUpFailed), and its commands with it.
func (c *serverConn) expectProxy(b *Backend) {
	if b.egress == nil {
		return
	}
	c.mu.Lock()
	c.serveProxy = b.startProxy
	c.mu.Unlock()
}

// ready handles the launcher's ready message and the descriptors it
// carries: the egress proxy's listening socket when one is expected, and
// nothing else. It returns why the launcher cannot serve, or "".
func (c *serverConn) readyWith(fds []int) string {
	c.mu.Lock()
	serve := c.serveProxy
	c.mu.Unlock()
	switch {
	case serve == nil && len(fds) == 0:
		return ""
	case serve == nil || len(fds) != 1:
		closeFDs(fds)
		return fmt.Sprintf("it sent %d descriptors with its ready message", len(fds))
	}
	p, err := serve(fds[0])
	if err != nil {
		return err.Error()
	}
	c.mu.Lock()
	c.proxy = p
	c.mu.Unlock()
	return ""
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// kill kills the launcher (and so every command it runs) and reaps it.
func (c *serverConn) kill() {
	_ = c.proc.Signal(syscall.SIGKILL)
	c.conn.Close()
	c.markDead()
}

// notStarted returns why the launcher ended without becoming ready, or ""
// (ready, or not yet known).
func (c *serverConn) notStarted() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startErr
}

// setUpFailed records why the launcher did not become ready, and kills it:
// the commands sent to it were never read, and are refused as
// unavailable.
func (c *serverConn) setUpFailed(why string) {
	c.mu.Lock()
	c.startErr = "os sandbox: the launcher did not start: " + why
	c.mu.Unlock()
	close(c.ready)
	c.kill()
}

func (c *serverConn) isDead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead
}

// markDead reaps the launcher, then fails every command still waiting: the
// launcher is the first process of their pid namespace, so once it is
// reapable the kernel has killed every command it ran and they are gone.
func (c *serverConn) markDead() {
	// Once, and every caller returns only when it is done.
	c.once.Do(func() {
		c.mu.Lock()
		c.dead = true
		c.mu.Unlock()
		_, _ = c.proc.Wait()
		c.mu.Lock()
		calls := c.calls
		c.calls = nil
		stopProxy(c.proxy) // the session's namespace died with the launcher
		c.proxy = nil
		r := reply{t: 0}
		if c.startErr != "" {
			// Never ready: it read no command, so none ran.
			r = reply{t: launcher.MsgUnavailable, payload: []byte(c.startErr)}
		}
		c.mu.Unlock()
		for _, rc := range calls {
			rc.replies <- r
		}
	})
}

// receive waits for the launcher to be ready, then dispatches its
// replies until it is gone.
func (c *serverConn) receive() {
	buf := make([]byte, 64<<10)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for first := true; ; first = false {
		n, oobn, _, _, err := c.conn.ReadMsgUnix(buf, oob)
		fds := parseRights(oob[:oobn])
		dialed := -1
		if !first {
			// Only the ready message and MsgDialed carry one.
			if len(fds) == 1 && n > 0 && buf[0] == launcher.MsgDialed {
				dialed = fds[0]
			} else {
				closeFDs(fds)
			}
			fds = nil
		}
		var t byte
		var id uint64
		var payload []byte
		if err == nil && n == 0 {
			err = errors.New("it exited")
		}
		if err == nil {
			t, id, payload, err = launcher.ParseMessage(buf[:n])
		}
		switch {
		case first && t == launcher.MsgUnavailable:
			c.setUpFailed(string(payload))
			return
		case first && err == nil && t != launcher.MsgReady:
			err = fmt.Errorf("its first message was %q", t)
		case first && err == nil:
			if why := c.readyWith(fds); why != "" {
				err = errors.New(why)
			}
			fds = nil
		}
		closeFDs(fds)
		if first && err != nil {
			c.setUpFailed(err.Error())
			return
		}
		if err != nil {
			c.kill() // gone, or not what this program started
			return
		}
		if first {
			close(c.ready)
			continue
		}
		c.mu.Lock()
		rc := c.calls[id]
		delete(c.calls, id)
		c.mu.Unlock()
		if rc != nil {
			rc.replies <- reply{t: t, payload: append([]byte(nil), payload...), fd: dialed}
		} else if dialed >= 0 {
			unix.Close(dialed)
		}
	}
}

// reply is one message from the launcher about a command; t 0 means the
// launcher died.
type reply struct {
	t       byte
	payload []byte
	fd      int // MsgDialed's socket (0 in other replies: not read)
}

// remoteCmd is one command run by the long-lived launcher.
type remoteCmd struct {
	c       *serverConn
	id      uint64
	program string
	replies chan reply // one: the report, or the launcher's death
}

// spawn sends req with its standard streams; Wait reports whether it
// started.
func (c *serverConn) spawn(req *launcher.Request, stdio [3]*os.File) (*remoteCmd, error) {
	rc := &remoteCmd{c: c, id: c.seq.Add(1), program: req.Argv[0], replies: make(chan reply, 1)}
	c.mu.Lock()
	if c.calls == nil {
		why := c.startErr
		c.mu.Unlock()
		if why != "" {
			return nil, fmt.Errorf("%w: %s", backend.ErrUnavailable, why)
		}
		return nil, errLauncherDied
	}
	c.calls[rc.id] = rc
	c.mu.Unlock()
	fds := []int{int(stdio[0].Fd()), int(stdio[1].Fd()), int(stdio[2].Fd())}
	payload := req.Encode()
	if len(payload) > launcher.MaxInline {
		mfd, err := unix.MemfdCreate("helikon-request", unix.MFD_CLOEXEC)
		if err != nil {
			c.forget(rc.id)
			return nil, fmt.Errorf("%w: os sandbox: the command's request: %w", backend.ErrUnavailable, err)
		}
		defer unix.Close(mfd)
		if err := writeAll(mfd, payload); err != nil {
			c.forget(rc.id)
			return nil, fmt.Errorf("%w: os sandbox: the command's request: %w", backend.ErrUnavailable, err)
		}
		fds, payload = append(fds, mfd), nil
	}
	_, _, err := c.conn.WriteMsgUnix(launcher.Message(launcher.MsgRun, rc.id, payload), unix.UnixRights(fds...), nil)
	runtime.KeepAlive(stdio)
	if err != nil {
		c.forget(rc.id)
		c.kill()
		return nil, fmt.Errorf("%w: os sandbox: send the command to the launcher: %w", backend.ErrUnavailable, err)
	}
	return rc, nil
}

// writeAll writes b to fd.
func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

func (c *serverConn) forget(id uint64) {
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
}

// Wait implements proc.Remote: the command's status once it and
// everything it started are gone, or why it did not start.
func (rc *remoteCmd) Wait() (code *int, signal int, err error) {
	r := <-rc.replies
	switch r.t {
	case launcher.MsgExit:
		n, sig, err := launcher.ParseExit(r.payload)
		if err != nil {
			return nil, 0, fmt.Errorf("ossandbox: the launcher's report: %w", err)
		}
		if sig != 0 {
			return nil, sig, nil
		}
		return &n, 0, nil
	case launcher.MsgUnavailable:
		return nil, 0, fmt.Errorf("%w: %s", backend.ErrUnavailable, r.payload)
	case launcher.MsgStartFailed:
		return nil, 0, &proc.StartError{Program: rc.program, Err: errors.New(string(r.payload))}
	case 0:
		// It may have started the command before it died; the kernel
		// killed it then. Not retried: it may have run.
		return nil, 0, errLauncherDied
	}
	return nil, 0, fmt.Errorf("ossandbox: the launcher replied %q", r.t)
}

// Kill implements proc.Remote. A launcher that is gone took the command
// with it.
func (rc *remoteCmd) Kill() {
	if _, _, err := rc.c.conn.WriteMsgUnix(launcher.Message(launcher.MsgKill, rc.id, nil), nil, nil); err != nil {
		rc.c.kill()
	}
}

// parseRights returns the descriptors an SCM_RIGHTS message carried
// (close-on-exec: the net package receives with MSG_CMSG_CLOEXEC).
func parseRights(oob []byte) []int {
	if len(oob) == 0 {
		return nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if f, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	return fds
}
