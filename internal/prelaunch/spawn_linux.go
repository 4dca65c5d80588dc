package prelaunch

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Spawn starts a long-lived launcher in root, in a new user, mount and pid
// namespace. Until its configuration is written to Config and closed, it
// waits, having done nothing but start its Go runtime; it exits when this
// program's ends of its pipe and socket close. root is the launcher's working
// directory, and [TakeEarly] matches it as given.
func Spawn(root string) (*Process, error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("launcher socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "launcher"), os.NewFile(uintptr(fds[1]), "launcher")
	defer theirs.Close()
	r, w, err := os.Pipe()
	if err != nil {
		ours.Close()
		return nil, fmt.Errorf("launcher configuration pipe: %w", err)
	}
	defer r.Close()
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{Arg0, "serve"},
		Env:        env(),
		Dir:        root,
		ExtraFiles: []*os.File{theirs, r}, // SocketFD, ConfigFD
		SysProcAttr: &syscall.SysProcAttr{
			Setsid:                     true, // no terminal's signals
			Cloneflags:                 syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID,
			UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
			GidMappingsEnableSetgroups: false,
		},
	}
	// Descriptors this program opened without O_CLOEXEC must not reach
	// the launcher, whose commands would inherit them.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err := cmd.Start(); err != nil {
		ours.Close()
		w.Close()
		return nil, fmt.Errorf("start the launcher: %w", err)
	}
	return &Process{Cmd: cmd, Sock: ours, Config: w, Root: root}, nil
}

// env is the launcher's environment (its commands get theirs with each
// request): its marker, and what spares its Go runtime work at start-up:
// GOMAXPROCS given (this program's, so that the runtime does not derive it
// from the CPU affinity and the cgroup's quota itself) and no memory
// profiling, which nothing reads in the launcher.
func env() []string {
	return []string{Env + "=1", "GOMAXPROCS=" + strconv.Itoa(runtime.GOMAXPROCS(0)), "GODEBUG=memprofilerate=0"}
}
