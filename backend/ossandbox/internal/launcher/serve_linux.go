package launcher

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/internal/landlock"
	"github.com/paigasus/helikon/internal/prelaunch"
	"github.com/paigasus/helikon/internal/seccomp"
)

// SocketFD is the long-lived launcher's end of its socket pair with the
// backend (ExtraFiles[0]; [ConfigFD] carries its [Config] as for the
// per-command launcher).
const SocketFD = prelaunch.SocketFD

// The long-lived launcher ([Config].Serve) lives as long as its backend:
// the backend starts it once, in a new user, mount and pid namespace, and
// sends it each command over a socket pair. It makes its mount view
// read-only and nosuid once (ReadOnlyView) and mounts a /proc of its pid
// namespace with hidepid=invisible, then for each command, on a new
// locked OS thread that the runtime discards afterwards, does what a root
// caller's confining thread does, holding every capability of its user
// namespace as root does of the machine:
//
//  1. unshare a mount and a pid namespace: the command is the first
//     process of a pid namespace of its own, which the kernel empties when
//     it exits or is killed, and has a private copy of the view; with
//     [Config].Net, enter the session's network namespace, which the
//     launcher made once at its start (NewNetNS: loopback only, and with
//     [NetProxy] the egress proxy's listening socket, sent to the backend
//     with MsgReady);
//  2. mount [Config].ReadOnly read-only over themselves (ProtectPaths),
//     then the command's tmpfs, granted by descriptor;
//  3. drop every capability (the bounding set included), set
//     no_new_privs, Landlock (rules opened once per launcher) and seccomp;
//  4. fork the command, traced when its limits are set at exec
//     (LimitAtExec), and report its start, then its status once the
//     namespace is empty.
//
// From the second command on, steps 1 to 3 for the next command are done
// ahead, once a command has started, on a thread kept for it (see
// Standby): one thread, one command.
//
// The command sees in /proc only the processes it may ptrace, which
// Landlock limits to its own domain: its own processes, not the launcher
// nor other commands. It can name no process outside its pid namespace,
// holds none of the launcher's descriptors (all close-on-exec, received
// ones too: MSG_CMSG_CLOEXEC), and cannot ptrace (seccomp) or signal
// (Landlock ABI 6 scoping, and no pid to name) the launcher.
//
// The launcher is the first process of its own pid namespace: when it
// exits, for whatever reason, the kernel kills every command it started.
// It exits when the backend's end of the socket closes (the backend was
// closed, collected, or exited). The backend fails a command whose
// launcher died with an error; nothing is retried unconfined.

// server is the long-lived launcher's state.
type server struct {
	c      *Config
	sock   int
	opened *landlock.Opened
	net    NetNS // the session's network namespace ([Config].Net), or NoNetNS

	mu       sync.Mutex
	commands map[uint64]*command // by id, from the request's arrival to the report
	standby  Standby[int64, int] // threads confined ahead, by tmpfs size; each leaves its mount namespace's descriptor
}

// command is one command the launcher was sent.
type command struct {
	p      *os.Process // once started
	killed bool        // the backend asked to kill it
}

// checkPidfds runs the check os.StartProcess makes once per process, that
// pidfds work, by forking and reaping a throwaway child. From a confining
// thread that child would be the first process of the command's pid
// namespace, and its exit would end the namespace; main runs it before it
// reads the configuration, while the backend is still writing it.
func checkPidfds() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Release()
	}
}

func serve(c *Config) int {
	syscall.CloseOnExec(SocketFD)
	s := &server{c: c, sock: SocketFD, commands: map[uint64]*command{}, net: NoNetNS}
	s.standby.Confine = s.confine
	s.standby.Release = func(mnt int) {
		if mnt >= 0 {
			unix.Close(mnt)
		}
	}
	if err := s.setUp(); err != nil {
		s.send(Message(MsgUnavailable, 0, []byte("os sandbox launcher: "+err.Error())), nil)
		return 125
	}
	var ready []int
	if s.net.Proxy >= 0 {
		// The backend serves the egress proxy on it, from its own
		// network namespace; the launcher keeps no copy.
		ready = []int{s.net.Proxy}
	}
	s.send(Message(MsgReady, 0, nil), ready)
	if s.net.Proxy >= 0 {
		unix.Close(s.net.Proxy)
		s.net.Proxy = -1
	}
	return s.loop()
}

// setUp prepares the launcher's view and, with [Config].Probe, checks by
// confining a throwaway thread as a command's would be that commands can
// be confined here (about half a millisecond, which a caller that starts
// the launcher for a command of its own need not wait for: that command's
// confinement is the same check).
func (s *server) setUp() error {
	c := s.c
	if !c.TmpFS || !c.PidNS {
		return errors.New("the long-lived launcher needs a tmpfs mount point and a pid namespace")
	}
	if err := ReadOnlyView(c.Root, "", c.RootRW, c.TmpRW); err != nil {
		return err
	}
	if err := WritablePaths(c.Writable); err != nil {
		return err
	}
	if err := MountOverlays(nil, c.Overlays, true); err != nil {
		return err
	}
	if err := mountProc("hidepid=invisible"); err != nil {
		return err
	}
	// The working directory was entered before the root was mounted over
	// itself writable: enter it again, through the new mount.
	wd, err := unix.Getwd()
	if err == nil {
		err = unix.Chdir(wd)
	}
	if err != nil {
		return fmt.Errorf("re-enter the working directory: %w", err)
	}
	if s.opened, err = landlock.Open(c.Rules.Rules); err != nil {
		return err
	}
	if c.Net != NetNone {
		// One network namespace for the session: a server one command
		// starts is reachable by the next, and by nothing outside.
		if s.net, err = NewNetNS(c.Net == NetProxy); err != nil {
			return err
		}
	}
	if !c.Probe {
		return nil
	}
	return OnDiscardedThread(func() error {
		mnt, err := s.confine(1 << 20)
		if mnt >= 0 {
			unix.Close(mnt)
		}
		return err
	})
}

// send sends one message with files attached; a failure means the backend
// is gone, which the receiving loop notices.
func (s *server) send(msg []byte, files []int) {
	var oob []byte
	if len(files) > 0 {
		oob = unix.UnixRights(files...)
	}
	for {
		if err := unix.Sendmsg(s.sock, msg, oob, nil, 0); err != unix.EINTR {
			return
		}
	}
}

// loop receives the backend's messages until its end of the socket
// closes, then returns: the launcher exits, and the kernel kills every
// command left in its pid namespace.
func (s *server) loop() int {
	buf := make([]byte, MaxInline+64)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(s.sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return 0
		}
		files := receivedFiles(oob[:oobn])
		t, id, payload, err := ParseMessage(buf[:n])
		if err != nil || flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 {
			closeFiles(files)
			if err == nil {
				s.send(Message(MsgUnavailable, id, []byte("os sandbox launcher: a truncated message")), nil)
			}
			continue
		}
		switch t {
		case MsgRun:
			// Registered here, in the order of the messages: a kill that
			// follows finds it, started or not.
			s.mu.Lock()
			if s.commands[id] != nil {
				s.mu.Unlock()
				closeFiles(files)
				s.send(Message(MsgUnavailable, id, []byte("os sandbox launcher: a command id used twice")), nil)
				continue
			}
			s.commands[id] = &command{}
			s.mu.Unlock()
			go s.run(id, append([]byte(nil), payload...), files)
		case MsgDial:
			closeFiles(files)
			port, n := binary.Uvarint(payload)
			go s.dial(id, port, n > 0 && n == len(payload))
		case MsgKill:
			closeFiles(files)
			s.mu.Lock()
			var p *os.Process
			if cmd := s.commands[id]; cmd != nil {
				cmd.killed, p = true, cmd.p
			}
			s.mu.Unlock()
			if p != nil {
				// SIGKILL to the first process of a pid namespace kills
				// the namespace.
				_ = p.Kill()
			}
		default:
			closeFiles(files)
		}
	}
}

// dial answers MsgDial: a TCP connection to 127.0.0.1:port made in the
// session's network namespace, sent back to the backend (which forwards
// a port of the session to the user). Only the session's loopback can be
// reached: the namespace has nothing else.
func (s *server) dial(id, port uint64, ok bool) {
	if !ok || port == 0 || port > 0xffff {
		s.send(Message(MsgUnavailable, id, []byte("os sandbox launcher: a bad port to dial")), nil)
		return
	}
	if s.net.NS < 0 {
		s.send(Message(MsgUnavailable, id, []byte("os sandbox launcher: the session has no network namespace")), nil)
		return
	}
	fd, err := DialInNetNS(s.net.NS, int(port))
	if err != nil {
		s.send(Message(MsgUnavailable, id, []byte(err.Error())), nil)
		return
	}
	s.send(Message(MsgDialed, id, nil), []int{fd})
	unix.Close(fd)
}

// receivedFiles returns the descriptors attached to a message.
func receivedFiles(oob []byte) []*os.File {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var files []*os.File
	for _, m := range msgs {
		fds, err := unix.ParseUnixRights(&m)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			files = append(files, os.NewFile(uintptr(fd), "received"))
		}
	}
	return files
}

func closeFiles(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// run confines, starts and waits for one command, reporting to the
// backend. files are its standard input, output and error, and with
// InFD the request.
func (s *server) run(id uint64, payload []byte, files []*os.File) {
	defer closeFiles(files)
	defer func() {
		s.mu.Lock()
		delete(s.commands, id)
		s.mu.Unlock()
	}()
	fail := func(t byte, err error) { s.send(Message(t, id, []byte(err.Error())), nil) }
	if len(files) == 4 {
		var err error
		if payload, err = readRequest(files[3]); err != nil {
			fail(MsgUnavailable, err)
			return
		}
		files = files[:3]
	}
	if len(files) != 3 {
		fail(MsgUnavailable, fmt.Errorf("os sandbox launcher: %d descriptors with the command, want 3", len(files)))
		return
	}
	req, err := DecodeRequest(payload)
	if err != nil {
		fail(MsgUnavailable, err)
		return
	}
	w := s.standby.Take(req.TmpSize)
	if w == nil {
		w = s.standby.New(req.TmpSize)
	}
	var st started
	w.Run(func(mnt int, err error) {
		if err != nil {
			st = started{mnt: -1, err: err}
			return
		}
		st = s.startCommand(req, files, mnt)
	})
	if st.p != nil {
		s.standby.Prepare(req.TmpSize) // confined while this command runs
	}
	closeFiles(files) // the command has its own; the backend sees end of file when it is gone
	files = nil
	p, mnt, janitor := st.p, st.mnt, st.janitor
	if st.err != nil {
		if mnt >= 0 {
			go unix.Close(mnt)
		}
		if !st.forked {
			fail(MsgUnavailable, fmt.Errorf("os sandbox launcher: confine: %w", st.err))
		} else {
			fail(MsgStartFailed, st.err)
		}
		return
	}
	s.mu.Lock()
	cmd := s.commands[id]
	cmd.p = p
	killed := cmd.killed
	s.mu.Unlock()
	if killed {
		_ = p.Kill() // asked for while it was being started
	}
	code, sig := wait(p)
	s.mu.Lock()
	cmd.p = nil // reaped: its pid may be reused
	s.mu.Unlock()
	if janitor != nil {
		close(janitor)
	}
	s.send(Message(MsgExit, id, ExitPayload(code, sig)), nil)
	// Destroying the mount namespace waits for an RCU grace period: held
	// until now, it is not on the command's exit path.
	go unix.Close(mnt)
}

// started is the outcome of one command's start: the command started (p,
// traced with janitor reaping its threads' stops, when its limits were set
// at exec), or err, with forked when it failed after the thread was
// confined; mnt is a descriptor of the command's mount namespace, or -1.
type started struct {
	p       *os.Process
	mnt     int
	janitor chan struct{}
	forked  bool
	err     error
}

// startCommand starts req, from the calling thread confined with the
// command's mount namespace mnt.
func (s *server) startCommand(req *Request, files []*os.File, mnt int) started {
	// The thread may have been confined ahead, while the previous command
	// ran: a read-only directory removed on the host since is no longer
	// mounted in its namespace.
	if err := CheckProtected(s.c.Root, s.c.ReadOnly); err != nil {
		return started{mnt: mnt, err: err}
	}
	st := started{mnt: mnt, forked: true}
	p, err := os.StartProcess(req.Path, req.Argv, &os.ProcAttr{
		Dir:   s.c.Root,
		Env:   req.Env,
		Files: files,
		Sys:   &syscall.SysProcAttr{Setsid: true, Ptrace: req.TraceMe},
	})
	if err != nil {
		st.err = err
		return st
	}
	if req.TraceMe {
		if err := LimitAtExec(p, req.Limits); err != nil {
			st.err = err // killed and reaped: it never ran an instruction
			return st
		}
		st.janitor = make(chan struct{})
		go ReapTracedThreads(p.Pid, st.janitor)
	}
	st.p = p
	return st
}

// wait waits for p, the first process of its pid namespace, to end, and
// returns its exit code (-1 when killed) and the signal that killed it.
// A command that asked to be traced (the filter lets it, for LimitAtExec)
// can instead stop, and the stop is reported to this program, its tracer,
// as the wait's end; then p is killed, which kills its namespace, and
// reaped, so that nothing outlives the report.
func wait(p *os.Process) (code, signal int) {
	pid := p.Pid
	st, err := p.Wait()
	if err != nil {
		return -1, int(unix.SIGKILL)
	}
	ws, _ := st.Sys().(syscall.WaitStatus)
	switch {
	case ws.Exited():
		return ws.ExitStatus(), 0
	case ws.Signaled():
		return -1, int(ws.Signal())
	}
	// Stopped, not reaped: the pid is still p's.
	_ = unix.Kill(pid, unix.SIGKILL)
	for {
		var uws unix.WaitStatus
		_, err := unix.Wait4(pid, &uws, unix.WALL, nil)
		if err != unix.EINTR && (err != nil || uws.Exited() || uws.Signaled()) {
			return -1, int(unix.SIGKILL)
		}
	}
}

// pidfdThread (PIDFD_THREAD, Linux 6.9) and pidfdGetMntNamespace
// (PIDFD_GET_MNT_NAMESPACE, Linux 6.11), which golang.org/x/sys/unix does
// not define.
const (
	pidfdThread          = unix.O_EXCL
	pidfdGetMntNamespace = 0xff03 // _IO(0xFF, 3)
)

// ThreadMountNS returns a descriptor (close-on-exec) of the calling
// thread's mount namespace: through a pidfd of the thread where the kernel
// has one, two system calls; otherwise through /proc/thread-self, whose
// walk creates the new thread's /proc entries (tens of microseconds).
func ThreadMountNS() (int, error) {
	if pfd, err := unix.PidfdOpen(unix.Gettid(), pidfdThread); err == nil {
		fd, err := unix.IoctlRetInt(pfd, pidfdGetMntNamespace)
		unix.Close(pfd)
		if err == nil {
			syscall.CloseOnExec(fd)
			return fd, nil
		}
	}
	return unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
}

// readRequest reads a request from the memfd it was sent in.
func readRequest(f *os.File) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("os sandbox launcher: read the request: %w", err)
	}
	if fi.Size() > MaxRequest {
		return nil, fmt.Errorf("os sandbox launcher: a request of %d bytes", fi.Size())
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, fmt.Errorf("os sandbox launcher: read the request: %w", err)
	}
	return b, nil
}

// confine confines the calling thread, locked and to be discarded, for one
// command (see serve) and returns a descriptor of the command's mount
// namespace, or -1.
func (s *server) confine(tmpSize int64) (mnt int, err error) {
	c := s.c
	if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWPID); err != nil {
		return -1, fmt.Errorf("create the command's mount and pid namespaces: %w", err)
	}
	if mnt, err = ThreadMountNS(); err != nil {
		return -1, fmt.Errorf("hold the mount namespace: %w", err)
	}
	if s.net.NS >= 0 {
		if err := EnterNetNS(s.net.NS); err != nil {
			return mnt, err
		}
	}
	// Per command, not once in the launcher's view: a directory removed
	// and made again on the host since (whose mount in the view the
	// kernel would have detached) is covered as it is now.
	if err := ProtectPaths(c.Root, c.ReadOnly); err != nil {
		return mnt, err
	}
	rs, err := landlock.Build(c.ABI, landlock.Config{AllowNetwork: c.Rules.AllowNetwork, ConnectTCP: c.Rules.ConnectTCP, Opened: []*landlock.Opened{s.opened}})
	if err != nil {
		return mnt, err
	}
	defer rs.Close()
	if err := MountTmpfs(rs, c.Tmp, tmpSize); err != nil {
		return mnt, err
	}
	if err := DropCapabilities(c.LastCap); err != nil {
		return mnt, err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return mnt, fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := rs.RestrictThread(); err != nil {
		return mnt, err
	}
	return mnt, seccomp.InstallThread(c.Filter)
}
