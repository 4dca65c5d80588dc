//go:build linux

package ossandbox

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/landlock"
	"github.com/paigasus/helikon/internal/proc"
	"github.com/paigasus/helikon/internal/seccomp"
)

// An unprivileged caller's command is started by a launcher: this program
// re-executed through /proc/self/exe (like internal/proc's reaper, which it
// becomes) in a new user and mount namespace created at clone time, when the
// child is still single-threaded. An unprivileged thread of the
// multi-threaded caller cannot create those namespaces itself
// (unshare(CLONE_NEWUSER) needs a single-threaded process).
//
// The launcher, holding every capability over its own namespaces only:
//  1. makes its mount tree private, then every mount read-only and nosuid
//     except the root and the temporary directory (readOnlyView, the code
//     root callers use);
//  2. becomes the child subreaper (internal/proc.ServeReaper);
//  3. confines a new locked OS thread exactly as a root caller's confining
//     thread is confined once its namespaces exist: every capability dropped
//     (the bounding set included), no_new_privs, Landlock, seccomp;
//  4. forks the command from that thread, which the runtime then discards.
//
// The command runs as uid 0 of the user namespace, which is the caller's
// uid outside, without capabilities: the files outside the root it owns are
// on read-only mounts, so chmod, chown, utimes and setxattr on them fail.
// Any step failing means the command does not run: the launcher reports
// "unavailable" through the reaper's status descriptor and Run fails with an
// error wrapping [backend.ErrUnavailable].
const (
	launcherArg0 = "helikon-os-launcher"
	launcherEnv  = "HELIKON_INTERNAL_OSSANDBOX_LAUNCHER"
	// launcherConfigFD carries the launchConfig (ExtraFiles[1]); fd 3 is
	// the reaper's status descriptor (ExtraFiles[0]).
	launcherConfigFD = 4
	// launcherParentFD is a pidfd of the calling program (ExtraFiles[2],
	// with launchConfig.PidNS): readable once it has exited.
	launcherParentFD = 5
)

// launcherUnavailable is a test seam: when set, [New] behaves as if user
// namespaces failed with this error.
var launcherUnavailable error

// launchConfig is what the launcher needs, sent as JSON on launcherConfigFD.
type launchConfig struct {
	Probe   bool // confine a thread, start nothing, exit 0
	Root    string
	Tmp     string
	TmpFS   bool  // Tmp is the mount point of a fresh tmpfs (tmp_linux.go)
	TmpSize int64 // its size in bytes, 0 for the kernel's default
	RootRW  bool
	TmpRW   bool
	// PidNS: the launcher is the first process of a pid namespace of its
	// own (see launcherPidNS).
	PidNS   bool
	LastCap int
	ABI     int
	Rules   landlock.Config
	Filter  []byte // packFilter: base64 in JSON, decoded far faster than an array of objects
}

func init() {
	if len(os.Args) > 1 && os.Args[0] == launcherArg0 && os.Getenv(launcherEnv) == "1" {
		os.Exit(launcherMain(os.Args[1:]))
	}
}

func launcherMain(argv []string) int {
	os.Unsetenv(launcherEnv)
	f := os.NewFile(launcherConfigFD, "launcher config")
	var c launchConfig
	err := json.NewDecoder(io.LimitReader(f, 4<<20)).Decode(&c)
	f.Close()
	if err != nil {
		return proc.ReportUnavailable("os sandbox launcher: read the configuration: " + err.Error())
	}
	td := tempDir{path: c.Tmp, tmpfs: c.TmpFS, size: c.TmpSize}
	viewTmp := c.Tmp
	if td.tmpfs {
		viewTmp = "" // mounted below, writable
	}
	if err := readOnlyView(c.Root, viewTmp, c.RootRW, c.TmpRW); err != nil {
		return proc.ReportUnavailable("os sandbox launcher: " + err.Error())
	}
	if c.PidNS {
		if err := launcherPidNS(); err != nil {
			return proc.ReportUnavailable("os sandbox launcher: " + err.Error())
		}
	}
	// The working directory was entered before the root was mounted over
	// itself writable: enter it again, through the new mount.
	wd, err := unix.Getwd()
	if err == nil {
		err = unix.Chdir(wd)
	}
	if err != nil {
		return proc.ReportUnavailable("os sandbox launcher: re-enter the working directory: " + err.Error())
	}
	filter, err := unpackFilter(c.Filter)
	if err != nil {
		return proc.ReportUnavailable("os sandbox launcher: " + err.Error())
	}
	rs, err := landlock.Build(c.ABI, c.Rules) // close-on-exec: the command never holds it
	if err != nil {
		return proc.ReportUnavailable("os sandbox launcher: " + err.Error())
	}
	if td.tmpfs {
		if err := mountTmpfs(rs, td); err != nil {
			return proc.ReportUnavailable("os sandbox launcher: " + err.Error())
		}
	}
	confine := func(fork func() error) error {
		return onDiscardedThread(func() error {
			if err := dropCapabilities(c.LastCap); err != nil {
				return err
			}
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				return fmt.Errorf("set no_new_privs: %w", err)
			}
			if err := rs.RestrictThread(); err != nil {
				return err
			}
			if err := seccomp.InstallThread(filter); err != nil {
				return err
			}
			if fork == nil {
				return nil
			}
			return fork()
		})
	}
	if c.Probe {
		if err := confine(nil); err != nil {
			fmt.Fprintf(os.Stderr, "confine: %v", err)
			return 125
		}
		return 0
	}
	return proc.ServeReaper(argv, confine)
}

// packFilter encodes a filter as struct sock_filter does, little-endian: 8
// bytes per instruction.
func packFilter(prog []bpf.RawInstruction) []byte {
	b := make([]byte, 0, 8*len(prog))
	for _, in := range prog {
		b = binary.LittleEndian.AppendUint16(b, in.Op)
		b = append(b, in.Jt, in.Jf)
		b = binary.LittleEndian.AppendUint32(b, in.K)
	}
	return b
}

// unpackFilter decodes packFilter's encoding.
func unpackFilter(b []byte) ([]bpf.RawInstruction, error) {
	if len(b) == 0 || len(b)%8 != 0 {
		return nil, fmt.Errorf("seccomp filter of %d bytes: not whole instructions", len(b))
	}
	prog := make([]bpf.RawInstruction, len(b)/8)
	for i := range prog {
		in := b[8*i:]
		prog[i] = bpf.RawInstruction{Op: binary.LittleEndian.Uint16(in), Jt: in[2], Jf: in[3], K: binary.LittleEndian.Uint32(in[4:])}
	}
	return prog, nil
}

// launcherPidNS completes the launcher's pid namespace, of which it is the
// first process: a /proc of its own (read-only, like every other mount of
// the view), so that the reaper's search for descendants reads the few
// processes of the namespace instead of every process of the machine (about
// 2 ms per command) and the command sees no process outside; and a watch
// on the calling program, which the reaper cannot do from inside (its
// parent's pid is 0 there): when the caller exits, the launcher exits, and
// the kernel kills everything left in the namespace.
//
// The reaper names processes by the pids /proc shows and its own pid (1):
// it must never run with a /proc of another pid namespace, where pid 1 is
// the machine's init and its children every service. Any doubt fails.
func launcherPidNS() error {
	if os.Getpid() != 1 {
		return fmt.Errorf("not the first process of a pid namespace (pid %d)", os.Getpid())
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("mount /proc of the pid namespace: %w", err)
	}
	if self, err := os.Readlink("/proc/self"); err != nil || self != "1" {
		return fmt.Errorf("/proc is not the pid namespace's (/proc/self is %q: %v)", self, err)
	}
	parent := launcherParentFD
	if _, err := unix.FcntlInt(uintptr(parent), unix.F_GETFD, 0); err != nil {
		return fmt.Errorf("no descriptor of the calling program: %w", err)
	}
	syscall.CloseOnExec(parent)
	go func() {
		fds := []unix.PollFd{{Fd: int32(parent), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err != nil || n > 0 {
				// The caller exited (or cannot be watched): nobody will
				// kill the tree for it.
				os.Exit(125)
			}
		}
	}()
	return nil
}

// startLauncher starts cmd, which internal/proc prepared to re-execute this
// program as the reaper, as the launcher instead, in a new user and mount
// namespace.
func (b *Backend) startLauncher(cmd *exec.Cmd, tmp tempDir, probe bool) error {
	return b.startLauncherNS(cmd, tmp, probe, b.pidNS)
}

func (b *Backend) startLauncherNS(cmd *exec.Cmd, tmp tempDir, probe, pidNS bool) error {
	if cmd.Path != "/proc/self/exe" || len(cmd.Args) < 2 || len(cmd.ExtraFiles) != 1 {
		// Only a reaper command (Tracking TrackReaper) can be turned into
		// the launcher; anything else would run without the namespaces.
		return fmt.Errorf("%w: os sandbox: the command is not started by a reaper", backend.ErrUnavailable)
	}
	data, err := json.Marshal(launchConfig{
		Probe:   probe,
		Root:    b.root,
		Tmp:     tmp.path,
		TmpFS:   tmp.tmpfs,
		TmpSize: tmp.size,
		RootRW:  b.rootRW,
		TmpRW:   b.tmpRW,
		PidNS:   pidNS,
		LastCap: b.lastCap,
		ABI:     b.abi,
		Rules:   b.rules(tmp),
		Filter:  packFilter(b.filter),
	})
	if err != nil {
		return fmt.Errorf("os sandbox: launcher configuration: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("os sandbox: launcher configuration pipe: %w", err)
	}
	defer r.Close()
	// In a goroutine: a configuration larger than the pipe's buffer would
	// otherwise block before the launcher exists to read it.
	go func() {
		_, _ = w.Write(data)
		w.Close()
	}()
	cmd.Args = append([]string{launcherArg0}, cmd.Args[1:]...)
	cmd.Env = append(cmd.Env[:len(cmd.Env):len(cmd.Env)], launcherEnv+"=1")
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNS
	if pidNS {
		pfd, err := unix.PidfdOpen(os.Getpid(), 0)
		if err != nil {
			return fmt.Errorf("%w: os sandbox: a pidfd of this program for the launcher: %w", backend.ErrUnavailable, err)
		}
		parent := os.NewFile(uintptr(pfd), "pidfd")
		defer parent.Close()
		cmd.ExtraFiles = append(cmd.ExtraFiles, parent)
		a.Cloneflags |= unix.CLONE_NEWPID
	}
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	a.GidMappingsEnableSetgroups = false
	// As for the confining thread (startConfined): descriptors this
	// program opened without O_CLOEXEC must not reach the launcher, whose
	// command would inherit them.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	return cmd.Start()
}

// probeLauncher runs the launcher once in probe mode: namespaces, read-only
// view and a confined thread, nothing started.
func (b *Backend) probeLauncher() error { return b.probeLauncherNS(b.pidNS) }

func (b *Backend) probeLauncherNS(pidNS bool) error {
	if launcherUnavailable != nil {
		return launcherUnavailable
	}
	var stderr bytes.Buffer
	cmd := &exec.Cmd{
		Path:       "/proc/self/exe",
		Args:       []string{"", "probe"},
		Env:        []string{},
		Stderr:     &stderr,
		ExtraFiles: []*os.File{nil},
	}
	td := tempDir{path: b.root}
	if b.tmpBase != "" {
		td = tempDir{path: b.tmpBase, tmpfs: true, size: 1 << 20}
	}
	if err := b.startLauncherNS(cmd, td, true, pidNS); err != nil {
		return err
	}
	if err := cmd.Wait(); err != nil {
		if msg := strings.TrimSpace(stderr.String()); msg != "" {
			return fmt.Errorf("%w: %s", err, msg)
		}
		return err
	}
	return nil
}

// usernsWhy reports why an unprivileged caller's commands run without the
// read-only view, for guarantees and doctor.
func usernsWhy(err error) string {
	switch {
	case errors.Is(err, unix.EPERM), errors.Is(err, unix.EACCES):
		return "user namespaces are not permitted here (kernel.unprivileged_userns_clone=0, user.max_user_namespaces=0, an AppArmor restriction, or a seccomp filter): " + err.Error()
	case errors.Is(err, unix.ENOSPC):
		return "the user namespace limit is reached: " + err.Error()
	}
	return err.Error()
}
