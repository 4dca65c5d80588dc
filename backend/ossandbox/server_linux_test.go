//go:build linux

package ossandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
	"github.com/paigasus/helikon/internal/prelaunch"
	"github.com/paigasus/helikon/internal/proc"
	"github.com/paigasus/helikon/internal/proctest"
)

// serverBackend returns a backend whose commands start through the
// long-lived launcher, with the launcher running, or skips.
func serverBackend(t *testing.T) *Backend {
	t.Helper()
	b := launcherBackend(t)
	if !b.server {
		t.Skip("the long-lived launcher is unavailable here (no pid namespace or no tmpfs mount point)")
	}
	t.Cleanup(func() { b.Close() })
	runOK(t, b, "true")
	return b
}

// launcherPid returns the pid of b's running launcher, or 0.
func launcherPid(b *Backend) int {
	b.srv.mu.Lock()
	defer b.srv.mu.Unlock()
	if c := b.srv.cur; c != nil && !c.isDead() {
		return c.proc.Pid()
	}
	return 0
}

// alive reports whether pid names a process that has not exited.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f, ok := proc.StatFields(b)
	return ok && len(f) > 0 && f[0] != "Z"
}

// TestLauncherOncePerBackend: commands of one backend share its launcher;
// another backend, with another root, gets its own, whose commands cannot
// write the first one's root.
func TestLauncherOncePerBackend(t *testing.T) {
	b1 := serverBackend(t)
	pid := launcherPid(b1)
	runOK(t, b1, "true")
	if got := launcherPid(b1); got != pid || pid == 0 {
		t.Fatalf("launcher %d, then %d: want one launcher for the backend's commands", pid, got)
	}
	b2 := serverBackend(t)
	if launcherPid(b2) == pid {
		t.Fatal("two backends share a launcher")
	}
	if got := sandboxed(t, b2, nil, "write", filepath.Join(b1.Dir(), "x")); got.code != attackBlocked {
		t.Fatalf("a command of the second backend writing the first's root: %v; want blocked", got)
	}
}

// TestLauncherDescriptorsNotInherited: a command holds none of its
// launcher's descriptors: not the socket to the backend, not a request
// sent in a memfd (a large environment forces one), not another command's
// pipes.
func TestLauncherDescriptorsNotInherited(t *testing.T) {
	b := serverBackend(t)
	big := "HELIKON_BIG=" + strings.Repeat("x", 48<<10)
	for _, kind := range []string{"socket:", "memfd:", "pipe:"} {
		for _, env := range [][]string{nil, {big}} {
			res, err := b.Run(context.Background(), &backend.Request{
				Argv:   []string{attackBin(t), "fds", kind},
				SetEnv: append([]string{attackEnv + "=1"}, env...),
			})
			if err != nil || res.ExitCode == nil || *res.ExitCode != attackBlocked {
				out := ""
				if res != nil {
					out = string(res.Stdout) + string(res.Stderr)
				}
				t.Errorf("%s (environment of %d bytes): %v: %s; want none", kind, len(env)*len(big), err, out)
			}
		}
	}
}

// TestLauncherHidden: the launcher is not visible to its commands: its
// /proc entries (command line, status, environment, descriptors) cannot
// be read, although the caller sees them.
func TestLauncherHidden(t *testing.T) {
	b := serverBackend(t)
	pid := launcherPid(b)
	if _, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err != nil {
		t.Fatalf("control: the caller cannot read its launcher's command line: %v", err)
	}
	// In its commands' /proc, that of the launcher's pid namespace, the
	// launcher is pid 1.
	for _, f := range []string{"cmdline", "status", "environ", "fd", "fd/3"} {
		args := []string{"read", "/proc/1/" + f}
		if f == "fd" {
			args[0] = "list"
		}
		if got := sandboxed(t, b, nil, args...); got.code != attackBlocked {
			t.Errorf("%s: %v; want blocked", args, got)
		}
	}
}

// TestCommandsDoNotSeeEachOther: a command sees nothing of another command
// of the same backend running at the same time; cancelling that one kills
// it.
func TestCommandsDoNotSeeEachOther(t *testing.T) {
	b := serverBackend(t)
	marker := fmt.Sprintf("7%d.5", time.Now().UnixNano()%1_000_000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		res *backend.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := b.Run(ctx, &backend.Request{Command: "sleep " + marker})
		done <- result{res, err}
	}()
	proctest.WaitFor(t, "the first command to run", func() bool { return len(proctest.PidsWith(marker)) > 0 })
	got := runOK(t, b, `for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < "$f"; echo; done 2>/dev/null; ls /proc | grep -c '^[0-9]'`)
	if strings.Contains(got, marker) {
		t.Errorf("a command sees another command's process:\n%s", got)
	}
	cancel()
	r := <-done
	if !errors.Is(r.err, context.Canceled) {
		t.Errorf("the cancelled command: %+v, %v; want context.Canceled", r.res, r.err)
	}
	if left := proctest.PidsWith(marker); len(left) > 0 {
		t.Errorf("the cancelled command's processes outlived its call: %v", left)
	}
}

// TestCommandCannotSignalLauncher: a command cannot signal its launcher,
// through a descriptor of its /proc directory (the launcher has no pid in
// the command's pid namespace), nor by signalling everything it may
// (kill -1); the launcher lives on and runs the next command.
func TestCommandCannotSignalLauncher(t *testing.T) {
	b := serverBackend(t)
	pid := launcherPid(b)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		if got := sandboxed(t, b, nil, "proc-signal", "/proc/1", strconv.Itoa(int(sig))); got.code != attackBlocked {
			t.Errorf("signal %d to the launcher: %v; want blocked", sig, got)
		}
	}
	runOK(t, b, "kill -TERM -1; kill -KILL -1; true")
	if !alive(pid) || launcherPid(b) != pid {
		t.Fatalf("the launcher (pid %d) died of its command's signals", pid)
	}
}

// TestLauncherDeathFailsClosed: when the launcher is killed while a
// command runs, the command is killed with it (nothing of it is left
// when Run returns), Run fails, and the next command runs confined
// through a new launcher.
func TestLauncherDeathFailsClosed(t *testing.T) {
	b := serverBackend(t)
	pid := launcherPid(b)
	marker := fmt.Sprintf("7%d.25", time.Now().UnixNano()%1_000_000)
	done := make(chan error, 1)
	go func() {
		_, err := b.Run(context.Background(), &backend.Request{Command: "sleep " + marker + " & sleep " + marker + "; touch survived"})
		done <- err
	}()
	proctest.WaitFor(t, "the command to run", func() bool { return len(proctest.PidsWith(marker)) >= 2 })
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-done
	if !errors.Is(err, errLauncherDied) {
		t.Errorf("Run = %v; want errLauncherDied", err)
	}
	if left := proctest.PidsWith(marker); len(left) > 0 {
		t.Errorf("the command's processes outlived its launcher: %v", left)
	}
	if got := sandboxed(t, b, nil, "write", filepath.Join(t.TempDir(), "x")); got.code != attackBlocked {
		t.Errorf("after the launcher's death, a write outside: %v; want blocked", got)
	}
	if p := launcherPid(b); p == pid || p == 0 {
		t.Errorf("launcher %d after the death of %d: want a new one", p, pid)
	}
	if _, err := os.Stat(filepath.Join(b.Dir(), "survived")); err == nil {
		t.Error("the command ran on after its launcher died")
	}
}

// TestCloseKillsLauncher: Close kills the launcher; so does dropping the
// backend.
func TestCloseKillsLauncher(t *testing.T) {
	b := serverBackend(t)
	pid := launcherPid(b)
	b.Close()
	if alive(pid) {
		t.Errorf("the launcher (pid %d) outlived Close", pid)
	}
	runOK(t, b, "true") // usable again, with a new launcher
	if launcherPid(b) == 0 {
		t.Fatal("no launcher after Close and a command")
	}
	pid = droppedBackendLauncher(t, b.Dir())
	proctest.WaitFor(t, "the dropped backend's launcher to exit", func() bool {
		runtime.GC()
		return !alive(pid)
	})
}

// droppedBackendLauncher runs a command through a new backend over root,
// drops the backend and returns its launcher's pid.
func droppedBackendLauncher(t *testing.T, root string) int {
	b, err := New(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	runOK(t, b, "true")
	pid := launcherPid(b)
	if pid == 0 {
		t.Fatal("no launcher after a command")
	}
	return pid
}

// TestKillWhileStarting: a kill sent right behind the command, while the
// launcher is still confining it, kills the command as it starts: it
// never runs to its end.
func TestKillWhileStarting(t *testing.T) {
	b := serverBackend(t)
	c, err := b.srv.get(b)
	if err != nil {
		t.Fatal(err)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	marker := filepath.Join(b.Dir(), "ran")
	for i := range 5 {
		rc, err := c.spawn(&launcher.Request{Path: "/bin/sh", Argv: []string{"sh", "-c", "sleep 1; touch " + marker}, Env: []string{"PATH=/usr/bin:/bin"}}, [3]*os.File{devnull, devnull, devnull})
		if err != nil {
			t.Fatal(err)
		}
		rc.Kill()
		code, sig, err := rc.Wait()
		if err != nil || code != nil || sig != int(syscall.SIGKILL) {
			t.Fatalf("try %d: Wait = %v, %d, %v; want killed", i, code, sig, err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a command killed while it was being started ran to its end")
	}
}

// TestCommandSentBeforeReadyRefused: a command is sent to a new launcher
// before it is ready; when the launcher's set-up then fails (here its
// Landlock paths cannot be opened), the command was never read: it is
// refused as unavailable, which lets the first command fall back, and
// nothing of it ran.
func TestCommandSentBeforeReadyRefused(t *testing.T) {
	b := serverBackend(t)
	b.Close()
	b.readPaths = append(b.readPaths, "/nonexistent-helikon-read-path")
	c, err := b.srv.get(b)
	if err != nil {
		t.Fatalf("get = %v; want the launcher started, unprobed", err)
	}
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	marker := filepath.Join(b.Dir(), "ran")
	rc, err := c.spawn(&launcher.Request{Path: "/bin/sh", Argv: []string{"sh", "-c", "touch " + marker}, Env: []string{"PATH=/usr/bin:/bin"}}, [3]*os.File{devnull, devnull, devnull})
	if err == nil {
		_, _, err = rc.Wait()
	}
	if !errors.Is(err, backend.ErrUnavailable) || !strings.Contains(err.Error(), "did not start") {
		t.Errorf("a command sent to a launcher whose set-up fails: %v; want unavailable, the launcher did not start", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the command ran")
	}
	if !c.isDead() {
		t.Error("the launcher that did not start is not marked dead")
	}
}

// TestStartedLauncherTaken: a launcher started ahead of its backend
// (Options.Launcher) is the one the backend's first command goes through,
// confined by that backend's policy; one started in another root is not
// used (its working directory and mounts are that root's), and Close
// kills it.
func TestStartedLauncherTaken(t *testing.T) {
	b := serverBackend(t)
	b.Close()
	opts := b.opts
	opts.Launcher = StartLauncher(b.Dir())
	t.Cleanup(func() { opts.Launcher.Close() })
	taken, err := New(b.Dir(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taken.Close() })
	if got := sandboxed(t, taken, nil, "write", filepath.Join(t.TempDir(), "x")); got.code != attackBlocked {
		t.Errorf("through the launcher started ahead, a write outside the root: %v; want blocked", got)
	}
	<-opts.Launcher.started
	if opts.Launcher.c == nil {
		t.Fatal("the launcher started ahead did not start")
	}
	if got, want := launcherPid(taken), opts.Launcher.c.proc.Pid(); got != want {
		t.Errorf("the backend's launcher is %d; want %d, the one started ahead", got, want)
	}

	other := StartLauncher(t.TempDir())
	opts.Launcher = other
	elsewhere, err := New(b.Dir(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { elsewhere.Close() })
	runOK(t, elsewhere, "true")
	<-other.started
	if other.c == nil {
		t.Fatal("the second launcher started ahead did not start")
	}
	pid := other.c.proc.Pid()
	if launcherPid(elsewhere) == pid {
		t.Error("a backend took a launcher started in another root")
	}
	other.Close()
	if alive(pid) {
		t.Errorf("the launcher no backend took (pid %d) outlived Close", pid)
	}
}

// earlyOnce guards prelaunch.Early, which starts one launcher per program.
var earlyOnce sync.Once

// TestEarlyLauncherTaken: a launcher this program started during its
// initialisation (prelaunch.Early, as the helikon CLI does) is the one
// StartLauncher hands to a backend over the same root, and its commands are
// confined as any other launcher's.
func TestEarlyLauncherTaken(t *testing.T) {
	b := serverBackend(t)
	b.Close()
	ran := false
	earlyOnce.Do(func() { ran = true; prelaunch.Early(b.Dir()) })
	if !ran {
		t.Skip("prelaunch.Early starts one launcher per program, and an earlier run of this test took it")
	}
	t.Cleanup(prelaunch.DiscardEarly)
	opts := b.opts
	opts.Launcher = StartLauncher(b.Dir())
	t.Cleanup(func() { opts.Launcher.Close() })
	<-opts.Launcher.started
	if opts.Launcher.c == nil {
		t.Fatal("StartLauncher did not start or take a launcher")
	}
	early := opts.Launcher.c.proc
	argv, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", early.Pid()))
	if err != nil || !strings.HasPrefix(string(argv), prelaunch.Arg0+"\x00") {
		t.Fatalf("the launcher taken is %q (%v)", argv, err)
	}
	if p := prelaunch.TakeEarly(b.Dir()); p != nil {
		p.Kill()
		t.Fatal("StartLauncher left the launcher started at initialisation untaken and started its own")
	}
	taken, err := New(b.Dir(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taken.Close() })
	if got := sandboxed(t, taken, nil, "write", filepath.Join(t.TempDir(), "x")); got.code != attackBlocked {
		t.Errorf("through the launcher started at initialisation, a write outside the root: %v; want blocked", got)
	}
	if got, want := launcherPid(taken), early.Pid(); got != want {
		t.Errorf("the backend's launcher is %d; want %d, the one started at initialisation", got, want)
	}
}
