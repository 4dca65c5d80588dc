//go:build linux

package ossandbox

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The attack programs are this test binary re-executed with attackEnv set:
// TestMain dispatches to runAttack before the testing package starts. This
// way the attacks are Go (no python or curl needed), compiled with the
// tests, and runnable by an unprivileged user from a binary built with
// go test -c, without a Go toolchain at run time.
const attackEnv = "HELIKON_OSSANDBOX_ATTACK"

// Exit statuses of an attack program.
const (
	attackEscaped = 0 // the attack did what it tried: the guard is absent
	attackBlocked = 3 // the kernel refused
	attackBroken  = 4 // the attack could not be set up
)

func TestMain(m *testing.M) {
	if os.Getenv(attackEnv) == "1" {
		os.Exit(runAttack(os.Args[1:]))
	}
	if os.Getenv(callerEnv) == "1" {
		os.Exit(runCaller(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// runAttack runs one attack and reports on stdout what happened.
func runAttack(args []string) int {
	if len(args) == 0 {
		fmt.Println("no attack named")
		return attackBroken
	}
	res := func(err error, what string) int {
		if err != nil {
			fmt.Printf("blocked: %s: %v\n", what, err)
			return attackBlocked
		}
		fmt.Printf("escaped: %s\n", what)
		return attackEscaped
	}
	arg := func(i int) string {
		if i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	switch args[0] {
	case "write":
		return res(os.WriteFile(arg(0), []byte("pwned"), 0o644), "write "+arg(0))
	case "truncate":
		return res(os.Truncate(arg(0), 0), "truncate "+arg(0))
	case "rename":
		return res(os.Rename(arg(0), arg(1)), "rename "+arg(0)+" -> "+arg(1))
	case "link":
		return res(os.Link(arg(0), arg(1)), "hard link "+arg(0)+" -> "+arg(1))
	case "symlink-write":
		// A symbolic link inside the root pointing outside, written through.
		if err := os.Symlink(arg(1), arg(0)); err != nil {
			fmt.Println("symlink:", err)
			return attackBroken
		}
		f, err := os.OpenFile(arg(0), os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.WriteString("pwned")
			f.Close()
		}
		return res(err, "write through symlink "+arg(0)+" -> "+arg(1))
	case "chmod":
		return res(os.Chmod(arg(0), 0o777), "chmod "+arg(0))
	case "touch":
		return res(unix.UtimesNano(arg(0), []unix.Timespec{{Sec: 1}, {Sec: 1}}), "utimes "+arg(0))
	case "chown":
		return res(os.Lchown(arg(0), os.Getuid(), os.Getgid()), "chown "+arg(0))
	case "setxattr":
		return res(unix.Setxattr(arg(0), "user.helikon", []byte("x"), 0), "setxattr "+arg(0))
	case "read":
		_, err := os.ReadFile(arg(0))
		return res(err, "read "+arg(0))
	case "list":
		_, err := os.ReadDir(arg(0))
		return res(err, "list "+arg(0))
	case "proc-signal":
		// Signal the process whose /proc directory is arg(0) through a
		// descriptor of that directory (which pidfd_send_signal takes as
		// a pidfd): no pid of the target's namespace needed.
		fd, err := unix.Open(arg(0), unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return res(err, "open "+arg(0))
		}
		sig, _ := strconv.Atoi(arg(1))
		return res(unix.PidfdSendSignal(fd, unix.Signal(sig), nil, 0), "signal "+arg(0))
	case "socket":
		fam, _ := strconv.ParseUint(arg(0), 0, 64)
		typ := uintptr(unix.SOCK_STREAM)
		if fam == unix.AF_PACKET || fam == unix.AF_NETLINK || fam&0xffffffff == unix.AF_PACKET {
			typ = unix.SOCK_RAW
		}
		fd, _, errno := unix.RawSyscall(unix.SYS_SOCKET, uintptr(fam), typ, 0)
		var err error
		if errno != 0 {
			err = errno
		} else {
			unix.Close(int(fd))
		}
		return res(err, fmt.Sprintf("socket(%#x)", fam))
	case "socket3":
		// socket(family, type, protocol), each parsed as a number.
		var a [3]uint64
		for i := range a {
			a[i], _ = strconv.ParseUint(arg(i), 0, 64)
		}
		fd, _, errno := unix.RawSyscall(unix.SYS_SOCKET, uintptr(a[0]), uintptr(a[1]), uintptr(a[2]))
		var err error
		if errno != 0 {
			err = errno
		} else {
			unix.Close(int(fd))
		}
		return res(err, fmt.Sprintf("socket(%#x, %#x, %#x)", a[0], a[1], a[2]))
	case "connect-unix":
		c, err := net.Dial("unix", arg(0))
		if err == nil {
			c.Close()
		}
		return res(err, "connect unix "+arg(0))
	case "io-uring":
		var params [120]byte
		fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
		if errno == 0 {
			unix.Close(int(fd))
			return res(nil, "io_uring_setup")
		}
		return res(errno, "io_uring_setup")
	case "clone-newuser":
		// os/exec makes the clone syscall with the namespace flags.
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER | unix.CLONE_NEWNS}
		return res(cmd.Run(), "clone(CLONE_NEWUSER|CLONE_NEWNS)")
	case "unshare":
		return res(unix.Unshare(unix.CLONE_NEWNS), "unshare(CLONE_NEWNS)")
	case "ptrace":
		pid, _ := strconv.Atoi(arg(0))
		err := unix.PtraceAttach(pid)
		if err == nil {
			var ws unix.WaitStatus
			_, _ = unix.Wait4(pid, &ws, unix.WALL, nil)
			_ = unix.PtraceDetach(pid)
		}
		return res(err, "ptrace attach "+arg(0))
	case "mount":
		err := unix.Mount("helikon", arg(0), "tmpfs", 0, "size=64k")
		if err == nil {
			_ = unix.Unmount(arg(0), unix.MNT_DETACH)
		}
		return res(err, "mount tmpfs on "+arg(0))
	case "mknod":
		err := unix.Mknod(arg(0), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3)))
		if err == nil {
			os.Remove(arg(0))
		}
		return res(err, "mknod char 1:3 "+arg(0))
	case "caps":
		// Privilege held after exec (run as a setuid-root copy).
		st, err := os.ReadFile("/proc/self/status")
		if err != nil {
			fmt.Println(err)
			return attackBroken
		}
		for line := range strings.Lines(string(st)) {
			if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
				if strings.Trim(strings.TrimSpace(v), "0") != "" || unix.Geteuid() == 0 && os.Getuid() != 0 {
					return res(nil, "privileged: CapEff "+strings.TrimSpace(v)+" euid "+strconv.Itoa(unix.Geteuid()))
				}
				return res(errors.New("no capabilities, euid "+strconv.Itoa(unix.Geteuid())), "gain privilege")
			}
		}
		return attackBroken
	case "tiocsti":
		high := arg(0) == "high"
		req := uintptr(unix.TIOCSTI)
		if high {
			req |= 0xdead << 32
		}
		// Make the terminal the controlling one, where an unprivileged
		// TIOCSTI is allowed (dev.tty.legacy_tiocsti permitting).
		_, _ = unix.Setsid()
		_ = unix.IoctlSetInt(0, unix.TIOCSCTTY, 0)
		c := byte('#')
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, 0, req, uintptr(unsafe.Pointer(&c)))
		if errno == 0 {
			return res(nil, "TIOCSTI")
		}
		if errno != unix.EPERM {
			fmt.Printf("TIOCSTI reached the tty driver: %v\n", errno)
			return attackEscaped // the filter did not stop it; the driver did
		}
		return res(errno, "TIOCSTI")
	case "tty-ioctls":
		// On the terminal helikon made (Start with TTY): type into it
		// (TIOCSTI, plain and with high bits) and reach the console
		// (TIOCLINUX). Blocked when the filter answers EPERM to each;
		// escaped when any reached the terminal's driver.
		_, _ = unix.Setsid()
		_ = unix.IoctlSetInt(0, unix.TIOCSCTTY, 0)
		c := byte('#')
		sub := byte(6) // TIOCL_GETSHIFTSTATE
		reached := false
		for _, r := range []struct {
			name string
			req  uintptr
			arg  unsafe.Pointer
		}{
			{"TIOCSTI", unix.TIOCSTI, unsafe.Pointer(&c)},
			{"TIOCSTI-high", unix.TIOCSTI | 0xdead<<32, unsafe.Pointer(&c)},
			{"TIOCLINUX", unix.TIOCLINUX, unsafe.Pointer(&sub)},
		} {
			_, _, errno := unix.Syscall(unix.SYS_IOCTL, 0, r.req, uintptr(r.arg))
			fmt.Printf("%s: %v\n", r.name, errno)
			if errno != unix.EPERM {
				reached = true
			}
		}
		if reached {
			return attackEscaped
		}
		return attackBlocked
	case "signal":
		pid, _ := strconv.Atoi(arg(0))
		return res(unix.Kill(pid, unix.SIGCONT), "signal "+arg(0))
	case "fds":
		// Look for any descriptor beyond stdio: a leak from the parent.
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			fmt.Println(err)
			return attackBroken
		}
		var leaked []string
		for _, e := range ents {
			n, _ := strconv.Atoi(e.Name())
			if n <= 2 {
				continue
			}
			target, _ := os.Readlink("/proc/self/fd/" + e.Name())
			if strings.Contains(target, arg(0)) {
				leaked = append(leaked, e.Name()+" -> "+target)
			}
		}
		if len(leaked) > 0 {
			return res(nil, "inherited "+strings.Join(leaked, ", "))
		}
		return res(errors.New("no descriptor of the parent's secret"), "inherit descriptors")
	case "net-connect":
		c, err := net.Dial("tcp", arg(0))
		if err == nil {
			c.Close()
		}
		return res(err, "connect "+arg(0))
	case "http-get":
		// A curl-like client that honours HTTP_PROXY and HTTPS_PROXY, as
		// curl does. TLS is not verified: the upstream is a test server.
		tr := &http.Transport{Proxy: http.ProxyFromEnvironment, TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
		c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		resp, err := c.Get(arg(0))
		if err != nil {
			fmt.Printf("error: %v\n", err)
			return attackBlocked
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		fmt.Printf("status %d\n%s", resp.StatusCode, body)
		return 0
	case "net-serve":
		// Not an attack: serve arg(1) over HTTP on arg(0) (a server the
		// next command of the session reaches), for at most a minute.
		ln, err := net.Listen("tcp", arg(0))
		if err != nil {
			fmt.Printf("error: %v\n", err)
			return attackBroken
		}
		fmt.Println("listening")
		body := arg(1)
		go func() {
			_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) }))
		}()
		time.Sleep(time.Minute)
		return 0
	case "http-bench":
		// Not an attack: GET arg(0) arg(1) times, over one kept-alive
		// connection, or a new one per request with arg(2) "new"; print
		// the mean time per request in nanoseconds.
		n, _ := strconv.Atoi(arg(1))
		tr := &http.Transport{Proxy: nil, DisableKeepAlives: arg(2) == "new"}
		c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		start := time.Now()
		for range n {
			resp, err := c.Get(arg(0))
			if err != nil {
				fmt.Printf("error: %v\n", err)
				return attackBroken
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		fmt.Printf("%d\n", time.Since(start).Nanoseconds()/int64(max(n, 1)))
		return 0
	case "udp":
		c, err := net.Dial("udp", arg(0))
		if err == nil {
			_, err = c.Write([]byte("ping"))
			c.Close()
		}
		return res(err, "udp to "+arg(0))
	case "rlimits":
		// Not an attack: report the limits this process started with.
		var parts []string
		for _, r := range []struct {
			name string
			res  int
		}{{"core", unix.RLIMIT_CORE}, {"cpu", unix.RLIMIT_CPU}, {"fsize", unix.RLIMIT_FSIZE}, {"as", unix.RLIMIT_AS}, {"nofile", unix.RLIMIT_NOFILE}} {
			var l unix.Rlimit
			if err := unix.Getrlimit(r.res, &l); err != nil {
				fmt.Println(err)
				return attackBroken
			}
			parts = append(parts, fmt.Sprintf("%s %d/%d", r.name, l.Cur, l.Max))
		}
		fmt.Println(strings.Join(parts, " "))
		return 0
	case "prlimit":
		// Lower another process's open-files limit: as damaging as a
		// signal (RLIMIT_CPU would have the kernel kill it), and outside
		// Landlock's signal scoping.
		pid, _ := strconv.Atoi(arg(0))
		lim := unix.Rlimit{Cur: 64, Max: 64}
		return res(unix.Prlimit(pid, unix.RLIMIT_NOFILE, &lim, nil), "prlimit open files of "+arg(0))
	case "setpriority":
		pid, _ := strconv.Atoi(arg(0))
		return res(unix.Setpriority(unix.PRIO_PROCESS, pid, 19), "setpriority of "+arg(0))
	case "traceme-stop":
		// Ask to be traced by the parent (which seccomp allows root
		// callers' commands, for the limits at exec), leave a background
		// process named by arg(0) in the namespace, then stop: a ptrace
		// stop is reported to the tracer's wait as if the command had
		// ended.
		bg := exec.Command("/bin/sleep", arg(0))
		if err := bg.Start(); err != nil {
			fmt.Println("background:", err)
			return attackBroken
		}
		if _, _, errno := unix.Syscall(unix.SYS_PTRACE, unix.PTRACE_TRACEME, 0, 0); errno != 0 {
			return res(errno, "PTRACE_TRACEME")
		}
		fmt.Println("traced; stopping")
		_ = unix.Kill(os.Getpid(), unix.SIGSTOP)
		// Resumed: wait for the background process, so that the command
		// only ends when it does.
		_ = bg.Wait()
		return res(nil, "resumed after a ptrace stop")
	case "traceme-thread-stop":
		// As traceme-stop, but from a thread other than the first: its
		// tracer must reap it by thread id once it dies, or the command's
		// first thread (its pid namespace's init) never finishes exiting.
		bg := exec.Command("/bin/sleep", arg(0))
		if err := bg.Start(); err != nil {
			fmt.Println("background:", err)
			return attackBroken
		}
		errc := make(chan error)
		traced := func() {
			runtime.LockOSThread() // never unlocked: the thread stays traced
			if unix.Gettid() == unix.Getpid() {
				errc <- errors.New("on the first thread")
				return
			}
			_, _, errno := unix.Syscall(unix.SYS_PTRACE, unix.PTRACE_TRACEME, 0, 0)
			if errno != 0 {
				errc <- errno
				return
			}
			errc <- nil
			select {} // keep the thread
		}
		go func() {
			runtime.LockOSThread()
			if unix.Gettid() == unix.Getpid() {
				// Hold the first thread so that the tracee lands on
				// another.
				go traced()
				select {}
			}
			traced()
		}()
		if err := <-errc; err != nil {
			return res(err, "PTRACE_TRACEME on another thread")
		}
		fmt.Println("traced; stopping")
		_ = unix.Kill(os.Getpid(), unix.SIGSTOP)
		_ = bg.Wait()
		return res(nil, "resumed after a ptrace stop")
	case "setcap":
		// A file capability (CAP_SETUID, permitted and effective) in a
		// version 2 security.capability attribute: the other way to make
		// a program that gains privilege at exec.
		if err := os.WriteFile(arg(0), []byte("x"), 0o755); err != nil {
			fmt.Println(err)
			return attackBroken
		}
		capv := make([]byte, 20)
		binary.LittleEndian.PutUint32(capv[0:], 0x02000000|1) // VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE
		binary.LittleEndian.PutUint32(capv[4:], 1<<unix.CAP_SETUID)
		return res(unix.Setxattr(arg(0), "security.capability", capv, 0), "set a file capability on "+arg(0))
	case "setid":
		return setIDAttack(arg(0), arg(1))
	case "mkdir-write":
		// The cross-directory and temp-dir operations that must work.
		err := os.MkdirAll(filepath.Dir(arg(0)), 0o755)
		if err == nil {
			err = os.WriteFile(arg(0), []byte("ok"), 0o644)
		}
		return res(err, "write "+arg(0))
	}
	fmt.Println("unknown attack", args[0])
	return attackBroken
}
