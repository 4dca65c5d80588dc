// Package prelaunch starts the OS sandbox's long-lived launcher process for
// unprivileged callers: this program re-executed through /proc/self/exe in a
// new user, mount and pid namespace, waiting for the configuration that makes
// it a backend's launcher (see backend/ossandbox and its internal launcher
// package, which recognises the role by [Arg0] and [Env]).
//
// Package ossandbox starts it with [Spawn] when a backend first needs it. A
// program that runs one sandboxed command and exits, as helikon exec does,
// can start it earlier, from a package initialiser ([Early]): the launcher's
// start, a second Go runtime in new namespaces (about 2 ms of the 7–10 ms an
// unprivileged helikon exec took), then overlaps the rest of the program's
// initialisation and its flag and policy parsing instead of following them.
// [ossandbox.StartLauncher] takes that process ([TakeEarly]) when it was
// started over the same root. The package imports only the standard
// library's low-level packages and golang.org/x/sys/unix, so that an
// initialiser that uses it runs early (packages are initialised in
// import-path order among those whose imports are initialised).
//
// [ossandbox.StartLauncher]: https://pkg.go.dev/github.com/paigasus/helikon/backend/ossandbox#StartLauncher
package prelaunch

import (
	"errors"
	"os"
	"sync"
	"syscall"
)

// The launcher's role and its descriptors, which its side (package
// launcher) reads.
const (
	// Arg0 is the launcher's argv[0].
	Arg0 = "helikon-os-launcher"
	// Env is set to "1" in the launcher's environment.
	Env = "HELIKON_INTERNAL_OSSANDBOX_LAUNCHER"
	// SocketFD is the long-lived launcher's end of its SOCK_SEQPACKET
	// socket pair with the backend (ExtraFiles[0]).
	SocketFD = 3
	// ConfigFD carries the launcher's encoded configuration
	// (ExtraFiles[1]).
	ConfigFD = 4
)

// ErrUnsupported is returned by [Spawn] where there is no launcher to start
// (not Linux).
var ErrUnsupported = errors.New("prelaunch: the launcher runs on Linux only")

// Process is a long-lived launcher that was started and waits, having done
// nothing but start its Go runtime, until its configuration is written to
// Config and closed.
type Process struct {
	Sock   *os.File // this program's end of the socket pair
	Config *os.File // the write end of the configuration pipe
	Root   string   // the root it was started in, as given to Spawn
	// MapRoot: the caller's ids are uid and gid 0 in the launcher's user
	// namespace, not its own (see [UserNamespace]).
	MapRoot bool

	pid    int
	mu     sync.Mutex // guards pidfd against Wait's close
	pidfd  int        // -1 once reaped
	reaped sync.Once
	status syscall.WaitStatus
	err    error
}

// Pid returns the launcher's process id.
func (p *Process) Pid() int { return p.pid }

// Kill kills the launcher, reaps it and closes this program's descriptors.
func (p *Process) Kill() {
	_ = p.Signal(syscall.SIGKILL)
	_, _ = p.Wait()
	p.Sock.Close()
	p.Config.Close()
}

// early is the launcher started by Early: taken once, by TakeEarly, or
// killed by DiscardEarly.
var early struct {
	mu      sync.Mutex
	started chan struct{} // closed once the start is done; nil if Early was not called
	p       *Process      // nil if it did not start, or once taken or discarded
}

// Early starts, in the background, a launcher over root, which must be
// absolute and free of symbolic links (a root that is not matches no
// backend's, and the launcher is not taken), mapped to the caller's own ids
// (the default; a backend that maps the caller to root does not take it).
// It is for a program's
// initialisation: once per program, for the one backend that will take it
// with [TakeEarly]; later calls do nothing. A program that calls it must
// call [DiscardEarly] before it exits or executes another program, for the
// case where no backend took it.
func Early(root string) {
	early.mu.Lock()
	defer early.mu.Unlock()
	if early.started != nil {
		return
	}
	done := make(chan struct{})
	early.started = done
	go func() {
		defer close(done)
		p, err := Spawn(root, false)
		if err != nil {
			return // the backend starts its own, and reports why it cannot
		}
		early.mu.Lock()
		early.p = p
		early.mu.Unlock()
	}()
}

// TakeEarly returns the launcher [Early] started if it started over root,
// once, waiting for its start to be done; otherwise nil, leaving it to
// DiscardEarly.
func TakeEarly(root string) *Process {
	early.mu.Lock()
	started := early.started
	early.mu.Unlock()
	if started == nil {
		return nil
	}
	<-started
	early.mu.Lock()
	defer early.mu.Unlock()
	p := early.p
	if p == nil || p.Root != root {
		return nil
	}
	early.p = nil
	return p
}

// DiscardEarly kills the launcher Early started unless it was taken.
func DiscardEarly() {
	early.mu.Lock()
	started := early.started
	early.mu.Unlock()
	if started == nil {
		return
	}
	<-started
	early.mu.Lock()
	p := early.p
	early.p = nil
	early.mu.Unlock()
	if p != nil {
		p.Kill()
	}
}
