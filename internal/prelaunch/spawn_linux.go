package prelaunch

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Spawn starts a long-lived launcher in root, in a new user, mount and pid
// namespace whose ids are mapped by [UserNamespace] (mapRoot: to uid and
// gid 0; otherwise to the caller's own). Until its configuration is written to Config and closed, it
// waits, having done nothing but start its Go runtime; it exits when this
// program's ends of its pipe and socket close. root is the launcher's working
// directory, and [TakeEarly] matches it as given.
//
// It starts the launcher with syscall.ForkExec and a pidfd rather than
// os/exec: os.StartProcess first checks, once per program, that pidfds work,
// by forking and reaping a throwaway child (0.1–0.25 ms here), which would
// delay the launcher's start by as much; the kernels the OS sandbox needs
// (Landlock) all have CLONE_PIDFD.
func Spawn(root string, mapRoot bool) (*Process, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("launcher socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "launcher"), fds[1]
	defer syscall.Close(theirs)
	var pipe [2]int
	if err := syscall.Pipe2(pipe[:], syscall.O_CLOEXEC); err != nil {
		ours.Close()
		return nil, fmt.Errorf("launcher configuration pipe: %w", err)
	}
	defer syscall.Close(pipe[0])
	w := os.NewFile(uintptr(pipe[1]), "launcher configuration")
	null, err := syscall.Open(os.DevNull, syscall.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		ours.Close()
		w.Close()
		return nil, fmt.Errorf("launcher standard streams: %w", err)
	}
	defer syscall.Close(null)
	pidfd := -1
	attr := &syscall.ProcAttr{
		Dir: root,
		Env: env(),
		// The standard streams, then SocketFD and ConfigFD.
		Files: []uintptr{uintptr(null), uintptr(null), uintptr(null), uintptr(theirs), uintptr(pipe[0])},
		Sys: &syscall.SysProcAttr{
			Setsid:     true, // no terminal's signals
			Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
			PidFD:      &pidfd,
		},
	}
	UserNamespace(attr.Sys, mapRoot)
	// Descriptors this program opened without O_CLOEXEC must not reach
	// the launcher, whose commands would inherit them.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	pid, err := syscall.ForkExec("/proc/self/exe", []string{Arg0, "serve"}, attr)
	if err != nil {
		ours.Close()
		w.Close()
		return nil, fmt.Errorf("start the launcher: %w", err)
	}
	if pidfd < 0 { // a kernel before 5.2, far older than Landlock's
		_ = syscall.Kill(pid, syscall.SIGKILL)
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(pid, &ws, 0, nil)
		ours.Close()
		w.Close()
		return nil, errors.New("start the launcher: this kernel has no pidfds")
	}
	return &Process{Sock: ours, Config: w, Root: root, MapRoot: mapRoot, pid: pid, pidfd: pidfd}, nil
}

// lastCap is the highest capability a launcher keeps across its exec when
// it is not uid 0 of its user namespace: CAP_CHECKPOINT_RESTORE, the last
// capability of every kernel since Linux 5.9, older than any the OS sandbox
// runs on (Landlock ABI 3, Linux 6.2). A capability a later kernel adds is
// not kept, and the launcher needs none beyond these.
const lastCap = 40

// ambientCaps are capabilities 0 to lastCap.
var ambientCaps = func() []uintptr {
	c := make([]uintptr, lastCap+1)
	for i := range c {
		c[i] = uintptr(i)
	}
	return c
}()

// UserNamespace sets a's id maps for a launcher cloned into a new user
// namespace (CLONE_NEWUSER in a.Cloneflags). With mapRoot the caller's uid
// and gid become 0 inside, as unshare --map-root-user maps them; otherwise
// each is mapped to itself, as bwrap does, so that the launcher's commands
// run as the caller's own uid and gid. Either way the namespace maps
// nothing else, and setgroups is denied in it (an unprivileged process may
// map only its own ids, and only so).
//
// A process that creates a user namespace holds every capability in it,
// but execve recomputes the capabilities, and a uid other than 0 keeps
// none: the launcher mapped to the caller's uid is therefore given them all
// as ambient capabilities (set by the child before its exec, over its own
// namespace only), which execve keeps. It holds then what it would hold as
// uid 0 of the namespace, as its mounts and namespaces need; the thread
// that starts each command drops them, ambient set included, before the
// command runs.
func UserNamespace(a *syscall.SysProcAttr, mapRoot bool) {
	uid, gid := os.Getuid(), os.Getgid()
	inUID, inGID := uid, gid
	if mapRoot {
		inUID, inGID = 0, 0
	}
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: inUID, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: inGID, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	a.AmbientCaps = nil
	if inUID != 0 {
		a.AmbientCaps = ambientCaps
	}
}

// Signal sends sig to the launcher through its pidfd, which cannot name
// another process once the launcher is gone; after [Process.Wait] it returns
// [os.ErrProcessDone].
func (p *Process) Signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pidfd < 0 {
		return os.ErrProcessDone
	}
	if err := unix.PidfdSendSignal(p.pidfd, sig, nil, 0); err != nil {
		if errors.Is(err, unix.ESRCH) {
			return os.ErrProcessDone
		}
		return fmt.Errorf("signal the launcher: %w", err)
	}
	return nil
}

// Wait waits for the launcher to exit, reaps it and returns its status;
// every call returns the same.
func (p *Process) Wait() (syscall.WaitStatus, error) {
	p.reaped.Do(func() {
		for {
			_, err := syscall.Wait4(p.pid, &p.status, 0, nil)
			if err != syscall.EINTR {
				if err != nil {
					p.err = fmt.Errorf("reap the launcher: %w", err)
				}
				break
			}
		}
		p.mu.Lock()
		syscall.Close(p.pidfd)
		p.pidfd = -1
		p.mu.Unlock()
	})
	return p.status, p.err
}

// env is the launcher's environment (its commands get theirs with each
// request): its marker, and what spares its Go runtime work at start-up:
// GOMAXPROCS given (this program's, so that the runtime does not derive it
// from the CPU affinity and the cgroup's quota itself) and no memory
// profiling, which nothing reads in the launcher.
func env() []string {
	return []string{Env + "=1", "GOMAXPROCS=" + strconv.Itoa(runtime.GOMAXPROCS(0)), "GODEBUG=memprofilerate=0"}
}
