//go:build linux

package ossandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
)

// attackBin returns this test binary, which doubles as the attack program.
func attackBin(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// newTestBackend builds a backend over a fresh root in which the attack
// program may run.
func newTestBackend(t testing.TB, opts Options) (*Backend, string) {
	t.Helper()
	root := t.TempDir()
	opts.ReadPaths = append(opts.ReadPaths, attackBin(t))
	if opts.Timeout == 0 {
		opts.Timeout = 20 * time.Second
	}
	b, err := New(root, &opts)
	if errors.Is(err, backend.ErrUnavailable) {
		t.Skipf("the OS sandbox is unavailable here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() }) // the session home
	b.settle()                      // the tests read and change the launcher's configuration
	return b, b.Dir()
}

// attackResult is an attack program's exit status and report.
type attackResult struct {
	code int
	out  string
}

func (r attackResult) String() string {
	return fmt.Sprintf("exit %d: %s", r.code, strings.TrimSpace(r.out))
}

// sandboxed runs the attack inside the backend.
func sandboxed(t *testing.T, b *Backend, stdin io.Reader, args ...string) attackResult {
	t.Helper()
	res, err := b.Run(context.Background(), &backend.Request{
		Argv:   append([]string{attackBin(t)}, args...),
		SetEnv: []string{attackEnv + "=1"},
		Stdin:  stdin,
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.ExitCode == nil {
		return attackResult{code: -res.Signal, out: string(res.Stdout) + string(res.Stderr)}
	}
	return attackResult{code: *res.ExitCode, out: string(res.Stdout) + string(res.Stderr)}
}

// unconfined runs the attack directly, as the control that proves the
// attack works when the guard is absent.
func unconfined(t *testing.T, dir string, stdin *os.File, args ...string) attackResult {
	t.Helper()
	cmd := exec.Command(attackBin(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), attackEnv+"=1")
	if stdin != nil {
		cmd.Stdin = stdin
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return attackResult{code: ee.ExitCode(), out: string(out)}
	}
	if err != nil {
		t.Fatalf("control run: %v", err)
	}
	return attackResult{code: 0, out: string(out)}
}

// attackCase is one attack. args builds the attack's arguments from the
// sandbox root and a directory outside it. control says whether the attack
// must succeed when run unconfined (proving that the sandbox, not the
// machine, stops it); a case where the unconfined run cannot succeed for
// this user says why in controlWhy.
type attackCase struct {
	name    string
	args    func(root, outside string) []string
	control bool
	skip    string // non-empty: the case is not contained on this machine for this caller (skipped, with this reason)
}

func isRoot() bool { return os.Geteuid() == 0 }

// TestAttacks runs every attack inside the sandbox, where it must be
// refused, and unconfined, where it must succeed.
func TestAttacks(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	home, _ := os.UserHomeDir()
	if _, err := os.ReadDir(home); err != nil {
		home = "" // no readable home (a system user): nothing to protect
	}
	victim := startVictim(t)

	// Listening sockets outside the root: pathname and abstract.
	sockDir := t.TempDir()
	sockPath := filepath.Join(sockDir, "daemon.sock")
	lnPath, err := net.Listen("unix", sockPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lnPath.Close() })
	abstract := fmt.Sprintf("@helikon-attack-%d", os.Getpid())
	lnAbs, err := net.Listen("unix", abstract)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lnAbs.Close() })
	lnTCP, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lnTCP.Close() })
	for _, ln := range []net.Listener{lnPath, lnAbs, lnTCP} {
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}

	// Landlock does not cover metadata (chmod, utimes, chown, xattrs):
	// root callers get a read-only mount view on their confining thread,
	// unprivileged callers one in the launcher's user namespace; without
	// user namespaces, unprivileged callers get none.
	metadata := ""
	if !isRoot() && !b.userns {
		metadata = "user namespaces are unavailable, so the read-only mount view that covers metadata is missing: " + b.usernsWhy
	}
	cases := []attackCase{
		{name: "write new file outside", args: func(r, o string) []string { return []string{"write", o + "/new"} }, control: true},
		{name: "overwrite file outside", args: func(r, o string) []string { return []string{"write", o + "/victim"} }, control: true},
		{name: "truncate file outside", args: func(r, o string) []string { return []string{"truncate", o + "/victim"} }, control: true},
		{name: "rename outside file into root", args: func(r, o string) []string { return []string{"rename", o + "/victim", r + "/stolen"} }, control: true},
		{name: "rename root file out", args: func(r, o string) []string { return []string{"rename", r + "/mine", o + "/planted"} }, control: true},
		{name: "hard link outside file into root", args: func(r, o string) []string { return []string{"link", o + "/victim", r + "/hl"} }, control: true},
		{name: "write through symlink to outside", args: func(r, o string) []string { return []string{"symlink-write", r + "/sym", o + "/victim"} }, control: true},
		{name: "chmod outside", args: func(r, o string) []string { return []string{"chmod", o + "/victim"} }, control: true, skip: metadata},
		{name: "touch outside", args: func(r, o string) []string { return []string{"touch", o + "/victim"} }, control: true, skip: metadata},
		{name: "chown outside", args: func(r, o string) []string { return []string{"chown", o + "/victim"} }, control: true, skip: metadata},
		{name: "setxattr outside", args: func(r, o string) []string { return []string{"setxattr", o + "/victim"} }, control: true, skip: metadata},
		{name: "chmod system file", args: func(r, o string) []string { return []string{"chmod", "/etc/hostname"} }, control: isRoot()},
		{name: "read file outside", args: func(r, o string) []string { return []string{"read", o + "/victim"} }, control: true},
		{name: "list HOME", args: func(r, o string) []string { return []string{"list", home} }, control: true, skip: ""},
		{name: "list /root", args: func(r, o string) []string { return []string{"list", "/root"} }, control: isRoot()},
		{name: "list /tmp", args: func(r, o string) []string { return []string{"list", os.TempDir()} }, control: true},
		{name: "read parent environ", args: func(r, o string) []string { return []string{"read", fmt.Sprintf("/proc/%d/environ", os.Getpid())} }, control: true},
		{name: "socket AF_INET", args: func(r, o string) []string { return []string{"socket", "2"} }, control: true},
		{name: "socket AF_INET6", args: func(r, o string) []string { return []string{"socket", "10"} }, control: true},
		{name: "socket AF_NETLINK", args: func(r, o string) []string { return []string{"socket", "16"} }, control: true},
		{name: "socket AF_PACKET", args: func(r, o string) []string { return []string{"socket", "17"} }, control: isRoot()},
		{name: "socket AF_INET with high bits set", args: func(r, o string) []string { return []string{"socket", "0x100000002"} }, control: true},
		{name: "tcp connect to loopback", args: func(r, o string) []string { return []string{"net-connect", lnTCP.Addr().String()} }, control: true},
		{name: "connect pathname unix socket outside", args: func(r, o string) []string { return []string{"connect-unix", sockPath} }, control: true},
		{name: "connect abstract unix socket", args: func(r, o string) []string { return []string{"connect-unix", abstract} }, control: true},
		{name: "io_uring", args: func(r, o string) []string { return []string{"io-uring"} }, control: ioUringEnabled()},
		{name: "clone with namespace flags", args: func(r, o string) []string { return []string{"clone-newuser"} }, control: true},
		{name: "unshare mount namespace", args: func(r, o string) []string { return []string{"unshare"} }, control: isRoot()},
		{name: "ptrace a process outside", args: func(r, o string) []string { return []string{"ptrace", strconv.Itoa(victim)} }, control: ptraceAllowed()},
		{name: "mount tmpfs", args: func(r, o string) []string { return []string{"mount", o} }, control: isRoot()},
		{name: "mknod device in root", args: func(r, o string) []string { return []string{"mknod", r + "/null"} }, control: isRoot()},
		{name: "prlimit a process outside", args: func(r, o string) []string { return []string{"prlimit", strconv.Itoa(victim)} }, control: true},
		{name: "setpriority a process outside", args: func(r, o string) []string { return []string{"setpriority", strconv.Itoa(victim)} }, control: true},
		{name: "signal a process outside", args: func(r, o string) []string { return []string{"signal", strconv.Itoa(victim)} }, control: true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.name == "list HOME" && home == "" {
				t.Skip("this user has no readable home directory")
			}
			if tc.skip != "" {
				t.Skip("not contained here for non-root callers: " + tc.skip)
			}
			outside := t.TempDir()
			mustWrite(t, filepath.Join(outside, "victim"), "secret")
			root := filepath.Join(b.Dir(), strconv.Itoa(i)) // each case its own corner of the root
			if err := os.Mkdir(root, 0o755); err != nil {
				t.Fatal(err)
			}
			mustWrite(t, filepath.Join(root, "mine"), "mine")
			args := tc.args(root, outside)
			got := sandboxed(t, b, nil, args...)
			if got.code != attackBlocked {
				t.Errorf("sandboxed %v: %v; want blocked", args, got)
			} else {
				t.Logf("sandboxed: %v", got)
			}
			if data, err := os.ReadFile(filepath.Join(outside, "victim")); err != nil || string(data) != "secret" {
				t.Errorf("victim file changed: %q, %v", data, err)
			}
			os.Remove(filepath.Join(root, "sym"))
			ctl := unconfined(t, root, nil, args...)
			switch {
			case tc.control && ctl.code != attackEscaped:
				t.Errorf("control (unconfined) %v: %v; the attack must work without the sandbox", args, ctl)
			case !tc.control:
				t.Logf("control (unconfined, not required to succeed here): %v", ctl)
			}
		})
	}
}

// TestAttackTIOCSTI types into a terminal the command has as its standard
// input, with and without high bits in the request.
func TestAttackTIOCSTI(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	for _, variant := range []string{"plain", "high"} {
		got := sandboxed(t, b, tty, "tiocsti", variant)
		if got.code != attackBlocked {
			t.Errorf("sandboxed TIOCSTI %s: %v; want EPERM", variant, got)
		}
		ctl := unconfined(t, b.Dir(), tty, "tiocsti", variant)
		if ctl.code != attackEscaped {
			t.Errorf("control TIOCSTI %s: %v; want the request to reach the terminal", variant, ctl)
		}
	}
}

// TestAttackInheritedDescriptor checks that a descriptor this program opened
// without O_CLOEXEC does not reach the command.
func TestAttackInheritedDescriptor(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	secret := filepath.Join(t.TempDir(), "leaky-secret")
	mustWrite(t, secret, "secret")
	fd, err := syscall.Open(secret, syscall.O_RDONLY, 0) // deliberately without O_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	// Control first: the sandbox marks the descriptor close-on-exec.
	if ctl := unconfined(t, b.Dir(), nil, "fds", "leaky-secret"); ctl.code != attackEscaped {
		t.Fatalf("control: %v; want the descriptor inherited", ctl)
	}
	if got := sandboxed(t, b, nil, "fds", "leaky-secret"); got.code != attackBlocked {
		t.Errorf("sandboxed: %v; want no inherited descriptor", got)
	}
}

// TestAttackSetuidGainsNothing runs a setuid-root copy of the attack
// program (root only: only root can make one).
func TestAttackSetuidGainsNothing(t *testing.T) {
	if !isRoot() {
		t.Skip("needs root to create a setuid-root binary")
	}
	b, root := newTestBackend(t, Options{})
	suid := filepath.Join(root, "suid")
	data, err := os.ReadFile(attackBin(t))
	if err != nil {
		t.Fatal(err)
	}
	mustWrite(t, suid, string(data))
	// os.Chmod takes the set-user-ID bit as os.ModeSetuid: 0o4755 would
	// be 0o755.
	if err := os.Chmod(suid, 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(suid); err != nil || fi.Mode()&os.ModeSetuid == 0 {
		t.Fatalf("the copy is not set-user-ID: %v, %v", fi.Mode(), err)
	}
	res, err := b.Run(context.Background(), &backend.Request{Argv: []string{suid, "caps"}, SetEnv: []string{attackEnv + "=1"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == nil || *res.ExitCode != attackBlocked {
		t.Errorf("setuid copy in the sandbox: %s%s; want no capabilities", res.Stdout, res.Stderr)
	}
	if ctl := unconfined(t, root, nil, "caps"); ctl.code != attackEscaped {
		t.Errorf("control: %v; want capabilities held by root", ctl)
	}
}

func mustWrite(t testing.TB, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startVictim starts a process outside the sandbox for signal and ptrace
// attacks.
func startVictim(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "300")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd.Process.Pid
}

func ioUringEnabled() bool {
	b, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled")
	return err != nil || strings.TrimSpace(string(b)) == "0"
}

func ptraceAllowed() bool {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	if err != nil {
		return true // no Yama
	}
	return strings.TrimSpace(string(b)) == "0" || isRoot() && strings.TrimSpace(string(b)) != "3"
}
