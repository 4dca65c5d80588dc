package launcher

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/internal/landlock"
	"github.com/paigasus/helikon/internal/prelaunch"
	"github.com/paigasus/helikon/internal/proc/reaper"
	"github.com/paigasus/helikon/internal/seccomp"
)

// The launcher is started by package ossandbox as a reaper command
// (internal/proc re-executes this program) with argv[0] Arg0 and Env set to
// "1" instead of the reaper's, or as the long-lived launcher by
// internal/prelaunch, which defines them.
const (
	Arg0 = prelaunch.Arg0
	Env  = prelaunch.Env
	// ConfigFD carries the encoded [Config] (ExtraFiles[1]); fd 3 is the
	// reaper's status descriptor (ExtraFiles[0]).
	ConfigFD = prelaunch.ConfigFD
	// ParentFD is a pidfd of the calling program (ExtraFiles[2], with
	// [Config].PidNS): readable once it has exited.
	ParentFD = 5
)

// maxConfig bounds the configuration the launcher reads.
const maxConfig = 4 << 20

func init() {
	if len(os.Args) > 1 && os.Args[0] == Arg0 && os.Getenv(Env) == "1" {
		os.Exit(main(os.Args[1:]))
	}
}

func main(argv []string) int {
	os.Unsetenv(Env)
	if len(argv) > 0 && argv[0] == "serve" {
		checkPidfds()
	}
	f := os.NewFile(ConfigFD, "launcher config")
	data, err := readAll(f, maxConfig)
	f.Close()
	var c *Config
	if err == nil {
		c, err = Decode(data)
	}
	if err != nil {
		return reaper.ReportUnavailable("os sandbox launcher: read the configuration: " + err.Error())
	}
	if c.Serve {
		return serve(c)
	}
	if c.Net == NetProxy {
		// A launcher per command has no channel to pass the proxy's
		// socket back on; the backend never asks for it (fail closed).
		return reaper.ReportUnavailable("os sandbox launcher: the egress proxy needs the long-lived launcher")
	}
	viewTmp := c.Tmp
	if c.TmpFS {
		viewTmp = "" // mounted below, writable
	}
	if err := ReadOnlyView(c.Root, viewTmp, c.RootRW, c.TmpRW); err != nil {
		return reaper.ReportUnavailable("os sandbox launcher: " + err.Error())
	}
	if err := WritablePaths(c.Writable); err != nil {
		return reaper.ReportUnavailable("os sandbox launcher: " + err.Error())
	}
	if err := MountOverlays(nil, c.Overlays, true); err != nil {
		return reaper.ReportUnavailable("os sandbox launcher: " + err.Error())
	}
	if err := ProtectPaths(c.Root, c.ReadOnly); err != nil {
		return reaper.ReportUnavailable("os sandbox launcher: " + err.Error())
	}
	if c.PidNS {
		if err := pidNS(); err != nil {
			return reaper.ReportUnavailable("os sandbox launcher: " + err.Error())
		}
	}
	// The working directory was entered before the root was mounted over
	// itself writable: enter it again, through the new mount.
	wd, err := unix.Getwd()
	if err == nil {
		err = unix.Chdir(wd)
	}
	if err != nil {
		return reaper.ReportUnavailable("os sandbox launcher: re-enter the working directory: " + err.Error())
	}
	rs, err := landlock.Build(c.ABI, c.Rules) // close-on-exec: the command never holds it
	if err != nil {
		return reaper.ReportUnavailable("os sandbox launcher: " + err.Error())
	}
	if c.TmpFS {
		if err := MountTmpfs(rs, c.Tmp, c.TmpSize); err != nil {
			return reaper.ReportUnavailable("os sandbox launcher: " + err.Error())
		}
	}
	confine := func(fork func() error) error {
		return OnDiscardedThread(func() error {
			if c.Net == NetLoopback {
				// The command's own network namespace, loopback only.
				if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
					return fmt.Errorf("create the command's network namespace: %w", err)
				}
				if err := LoopbackUp(); err != nil {
					return err
				}
			}
			if err := DropCapabilities(c.LastCap); err != nil {
				return err
			}
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				return fmt.Errorf("set no_new_privs: %w", err)
			}
			if err := rs.RestrictThread(); err != nil {
				return err
			}
			if err := seccomp.InstallThread(c.Filter); err != nil {
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
	return reaper.Main(argv, confine)
}

func readAll(f *os.File, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("over %d bytes", limit)
	}
	return b, err
}

// pidNS completes the launcher's pid namespace, of which it is the first
// process: a /proc of its own (read-only, like every other mount of the
// view), so that the reaper's search for descendants reads the few
// processes of the namespace instead of every process of the machine (about
// 2 ms per command) and the command sees no process outside; and a watch on
// the calling program, which the reaper cannot do from inside (its parent's
// pid is 0 there): when the caller exits, the launcher exits, and the
// kernel kills everything left in the namespace.
//
// The reaper names processes by the pids /proc shows and its own pid (1):
// it must never run with a /proc of another pid namespace, where pid 1 is
// the machine's init and its children every service. Any doubt fails.
func pidNS() error {
	if err := mountProc(""); err != nil {
		return err
	}
	parent := ParentFD
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

// mountProc mounts a /proc of the pid namespace of which this process must
// be the first process, read-only, with the mount options data, and checks
// that it is that namespace's.
func mountProc(data string) error {
	if os.Getpid() != 1 {
		return fmt.Errorf("not the first process of a pid namespace (pid %d)", os.Getpid())
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, data); err != nil {
		return fmt.Errorf("mount /proc of the pid namespace: %w", err)
	}
	if self, err := os.Readlink("/proc/self"); err != nil || self != "1" {
		return fmt.Errorf("/proc is not the pid namespace's (/proc/self is %q: %v)", self, err)
	}
	return nil
}

// OnDiscardedThread runs f on an OS thread locked for it that is never
// unlocked: when f returns, the Go runtime terminates the thread instead of
// running other goroutines on it. The main thread is the exception (the
// runtime parks it forever instead of terminating it, and it would stay in
// the namespaces and cgroup), so f never runs there.
func OnDiscardedThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			errc <- f()
			return
		}
		// Hold the main thread, untouched, so that the goroutine below
		// cannot be scheduled on it, then give it back.
		inner := make(chan error, 1)
		go func() {
			runtime.LockOSThread()
			inner <- f()
		}()
		err := <-inner
		runtime.UnlockOSThread()
		errc <- err
	}()
	return <-errc
}

// ReadOnlyView makes every mount of the thread's (private) mount namespace
// read-only and nosuid, then mounts the root and the temporary directory
// over themselves writable again (tmp only when it is not "", and each only
// where the host's mount was writable: rootRW, tmpRW). Landlock does not
// cover chmod, chown, utimes, extended attributes or mknod; a read-only
// mount refuses them all.
//
// The caller's thread must be in a mount namespace of its own, with
// CAP_SYS_ADMIN over it: a root caller's confining thread, or the launcher
// of an unprivileged caller's command in its user namespace.
func ReadOnlyView(root, tmp string, rootRW, tmpRW bool) error {
	// Private, so that nothing done here propagates to the host, and
	// read-only and nosuid, in one pass over the tree (mount attributes
	// never propagate).
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID, Propagation: unix.MS_PRIVATE}); err != nil {
		return fmt.Errorf("make mounts private and read-only: %w", err)
	}
	for _, d := range []struct {
		path string
		rw   bool
	}{{root, rootRW}, {tmp, tmpRW}} {
		if d.path == "" {
			continue
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, d.path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("clone mount of %s: %w", d.path, err)
		}
		if d.rw {
			// Only where the host mount was writable: the view never
			// grants what the host does not.
			err = unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY})
		}
		if err == nil {
			err = unix.MoveMount(fd, "", unix.AT_FDCWD, d.path, unix.MOVE_MOUNT_F_EMPTY_PATH)
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("mount %s writable: %w", d.path, err)
		}
	}
	return nil
}

// DropCapabilities empties the thread's bounding, ambient, effective,
// permitted and inheritable capability sets; lastCap is the highest
// capability the kernel knows (/proc/sys/kernel/cap_last_cap). uid 0 keeps
// owning root's files, which the read-only view protects.
func DropCapabilities(lastCap int) error {
	for c := 0; c <= lastCap; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop capabilities: %w", err)
	}
	return nil
}

// MountTmpfs mounts a fresh tmpfs (mode 0700, nosuid, nodev) of size bytes
// (0: the kernel's default, half the memory) at path in the calling
// thread's mount namespace, which must be private, and grants it read-write
// in rs by descriptor: the rule names this tmpfs, whatever the path
// resolves to later.
func MountTmpfs(rs *landlock.Ruleset, path string, size int64) error {
	fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("create the temporary directory's tmpfs: %w", err)
	}
	defer unix.Close(fs)
	opts := [][2]string{{"mode", "0700"}}
	if size > 0 {
		// Inodes cost memory too, and an empty file costs no size.
		opts = append(opts,
			[2]string{"size", strconv.FormatInt(size, 10)},
			[2]string{"nr_inodes", strconv.FormatInt(max(size/4096, 16384), 10)})
	}
	for _, o := range opts {
		if err := unix.FsconfigSetString(fs, o[0], o[1]); err != nil {
			return fmt.Errorf("configure the temporary directory's tmpfs (%s=%s): %w", o[0], o[1], err)
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return fmt.Errorf("create the temporary directory's tmpfs: %w", err)
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return fmt.Errorf("mount the temporary directory's tmpfs: %w", err)
	}
	defer unix.Close(mnt)
	if err := unix.MoveMount(mnt, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("mount the temporary directory's tmpfs on %s: %w", path, err)
	}
	return rs.AllowFD(mnt, landlock.ReadWrite)
}
