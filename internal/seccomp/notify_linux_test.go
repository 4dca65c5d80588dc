package seccomp

import (
	"errors"
	"io"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// onFilteredThread installs the strict filter with setsid notified on a
// thread that is discarded afterwards, and runs f there.
func onFilteredThread(t *testing.T, f func(l *Listener) error) (*Listener, error) {
	t.Helper()
	arch, err := Native()
	if err != nil {
		t.Skip(err)
	}
	prog, err := Assemble(arch, Policy{Notify: []string{"setsid"}})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		l   *Listener
		err error
	}
	done := make(chan result, 1)
	lc := make(chan *Listener, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the runtime discards the thread
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- result{err: err}
			return
		}
		l, err := InstallThreadListener(prog)
		if err != nil {
			done <- result{err: err}
			return
		}
		lc <- l
		done <- result{l, f(l)}
	}()
	select {
	case l := <-lc:
		return l, nil
	case r := <-done:
		return nil, r.err
	}
}

// TestListenerFail notifies setsid made by the filtered thread itself and
// answers with an errno the kernel would never return for it.
func TestListenerFail(t *testing.T) {
	got := make(chan error, 1)
	l, err := onFilteredThread(t, func(*Listener) error {
		_, err := unix.Setsid()
		got <- err
		return nil
	})
	if err != nil {
		t.Skipf("seccomp user notification unavailable: %v", err)
	}
	defer l.Close()
	n, err := l.Next()
	if err != nil {
		t.Fatal(err)
	}
	if nr, _ := mustNative(t).Nr("setsid"); n.Nr != int32(nr) || n.Pid <= 0 {
		t.Errorf("notification %+v; want setsid from a thread", n)
	}
	if !l.Valid(n.ID) {
		t.Error("pending notification reported invalid")
	}
	if err := l.Fail(n.ID, unix.EXDEV); err != nil {
		t.Fatal(err)
	}
	if err := <-got; !errors.Is(err, unix.EXDEV) {
		t.Errorf("setsid = %v; want the supervisor's EXDEV", err)
	}
	if l.Valid(n.ID) {
		t.Error("answered notification still valid")
	}
}

// TestListenerContinueChild starts a child with Setsid from the filtered
// thread: its setsid, made between fork and exec, is notified with the
// child's pid, and the child runs once it is continued. When the thread and
// the child are gone, Next reports io.EOF.
func TestListenerContinueChild(t *testing.T) {
	started := make(chan *exec.Cmd, 1)
	l, err := onFilteredThread(t, func(*Listener) error {
		cmd := exec.Command("/bin/sh", "-c", "exit 7")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		err := cmd.Start()
		started <- cmd
		return err
	})
	if err != nil {
		t.Skipf("seccomp user notification unavailable: %v", err)
	}
	defer l.Close()
	n, err := l.Next()
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Continue(n.ID); err != nil {
		t.Fatal(err)
	}
	cmd := <-started
	if cmd.Process == nil {
		t.Fatal("child did not start")
	}
	if n.Pid != cmd.Process.Pid {
		t.Errorf("notified pid %d; child is %d", n.Pid, cmd.Process.Pid)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Errorf("child: %v; want exit 7", err)
	}
	eof := make(chan error, 1)
	go func() { _, err := l.Next(); eof <- err }()
	select {
	case err := <-eof:
		if !errors.Is(err, io.EOF) {
			t.Errorf("Next after the last task = %v; want io.EOF", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Next did not report that the filter has no task left")
	}
}

// TestListenerClose checks that Next returns once the listener is closed.
func TestListenerClose(t *testing.T) {
	hold := make(chan struct{})
	l, err := onFilteredThread(t, func(*Listener) error { <-hold; return nil })
	if err != nil {
		t.Skipf("seccomp user notification unavailable: %v", err)
	}
	defer close(hold)
	res := make(chan error, 1)
	go func() { _, err := l.Next(); res <- err }()
	time.Sleep(10 * time.Millisecond)
	l.Close()
	select {
	case err := <-res:
		if err == nil || errors.Is(err, io.EOF) {
			t.Errorf("Next after Close = %v; want a closed error", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Next did not return after Close")
	}
}

func mustNative(t *testing.T) *Arch {
	a, err := Native()
	if err != nil {
		t.Skip(err)
	}
	return a
}
