package landlock

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRestrictThreadConfinesOnlyThatThread enforces a ruleset on one locked
// thread and checks that the thread is confined while the rest of the
// program is not.
func TestRestrictThreadConfinesOnlyThatThread(t *testing.T) {
	abi, err := ABI()
	if err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	inside, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	rs, err := Build(abi, Config{Rules: []Rule{
		{Path: inside, Access: ReadWrite},
		{Path: "/nonexistent-helikon", Access: ReadOnly, Optional: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()

	type outcome struct{ readOutside, writeInside error }
	var o outcome
	onDiscardedThread(func() {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			o = outcome{readOutside: err, writeInside: err}
			return
		}
		if err := rs.RestrictThread(); err != nil {
			o = outcome{readOutside: err, writeInside: err}
			return
		}
		_, o.readOutside = unix.Open(secret, unix.O_RDONLY, 0)
		fd, err := unix.Open(filepath.Join(inside, "f"), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
		}
		o.writeInside = err
	})
	if !errors.Is(o.readOutside, unix.EACCES) {
		t.Errorf("restricted thread read outside: err = %v, want EACCES", o.readOutside)
	}
	if o.writeInside != nil {
		t.Errorf("restricted thread write inside: %v", o.writeInside)
	}
	if _, err := os.ReadFile(secret); err != nil {
		t.Errorf("unrestricted goroutine cannot read: %v", err)
	}
}

// onDiscardedThread runs f on an OS thread that is locked for it and never
// unlocked, so that the runtime terminates the thread afterwards. Test
// functions run on goroutines, so the scheduler may hand one to the main
// thread, which the runtime parks instead of terminating; f never runs there,
// or the restriction would leak to every later goroutine. (The backend has
// its own copy of this; the test cannot import it.)
func onDiscardedThread(f func()) {
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() != unix.Getpid() {
			f()
			close(done)
			return
		}
		// Hold the main thread so that the goroutine below cannot land on
		// it, then give it back untouched.
		inner := make(chan struct{})
		go func() {
			runtime.LockOSThread()
			f()
			close(inner)
		}()
		<-inner
		runtime.UnlockOSThread()
		close(done)
	}()
	<-done
}

func TestBuildRejectsMissingRequiredPath(t *testing.T) {
	abi, err := ABI()
	if err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	if _, err := Build(abi, Config{Rules: []Rule{{Path: "/nonexistent-helikon", Access: ReadOnly}}}); err == nil {
		t.Fatal("Build succeeded with a missing required path")
	}
	if _, err := Build(0, Config{}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Build(abi 0) = %v, want ErrUnavailable", err)
	}
}

func TestFeaturesNameWhatTheABIAdds(t *testing.T) {
	if got := len(Features(7, false)); got != 6 {
		t.Errorf("abi 7 features = %d, want 6: %q", got, Features(7, false))
	}
	if got := len(Features(7, true)); got != 5 {
		t.Errorf("abi 7 with network features = %d, want 5", got)
	}
	if fsRights(3) != Truncate<<1-1 || fsRights(9) != ResolveUnix<<1-1 {
		t.Error("fsRights")
	}
}

// TestConnectTCPPorts restricts a thread's TCP connects to one port: a
// listener on that port is reachable, one on another port is not, and the
// control connects from an unrestricted thread to both.
func TestConnectTCPPorts(t *testing.T) {
	abi, err := ABI()
	if err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	if abi < 4 {
		t.Skipf("Landlock ABI %d has no TCP rules (4 needed)", abi)
	}
	var ports []uint16
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		ports = append(ports, uint16(ln.Addr().(*net.TCPAddr).Port))
	}
	dial := func(port uint16) error {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))), 5*time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, p := range ports {
		if err := dial(p); err != nil {
			t.Fatalf("control: %v", err)
		}
	}
	rs, err := Build(abi, Config{ConnectTCP: []uint16{ports[0]}})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var o struct{ allowed, other error }
	onDiscardedThread(func() {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			o.allowed = err
			return
		}
		if err := rs.RestrictThread(); err != nil {
			o.allowed = err
			return
		}
		o.allowed, o.other = dial(ports[0]), dial(ports[1])
	})
	if o.allowed != nil {
		t.Errorf("connect to the allowed port: %v", o.allowed)
	}
	if !errors.Is(o.other, unix.EACCES) {
		t.Errorf("connect to another port = %v; want EACCES", o.other)
	}
}

// TestAllowFD grants a directory by descriptor after Build: the restricted
// thread writes there, and still not in a sibling directory the ruleset
// does not name.
func TestAllowFD(t *testing.T) {
	abi, err := ABI()
	if err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	granted, other := t.TempDir(), t.TempDir()
	rs, err := Build(abi, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	fd, err := unix.Open(granted, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = rs.AllowFD(fd, ReadWrite)
	unix.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.AllowFD(-1, ReadWrite); err == nil {
		t.Error("AllowFD(-1) succeeded")
	}
	write := func(dir string) error {
		fd, err := unix.Open(filepath.Join(dir, "f"), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	var o struct{ granted, other error }
	onDiscardedThread(func() {
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			o.granted = err
			return
		}
		if err := rs.RestrictThread(); err != nil {
			o.granted = err
			return
		}
		o.granted, o.other = write(granted), write(other)
	})
	if o.granted != nil {
		t.Errorf("write beneath the descriptor's directory: %v", o.granted)
	}
	if !errors.Is(o.other, unix.EACCES) {
		t.Errorf("write elsewhere = %v; want EACCES", o.other)
	}
}

// TestOpenedRules: rules opened once grant in every ruleset built from
// them, name what was opened (not what the path names later), and a
// missing required path fails Open while an optional one is skipped.
func TestOpenedRules(t *testing.T) {
	abi, err := ABI()
	if err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	if _, err := Open([]Rule{{Path: "/nonexistent-helikon", Access: ReadOnly}}); err == nil {
		t.Fatal("Open succeeded with a missing required path")
	}
	base := t.TempDir()
	granted := filepath.Join(base, "granted")
	if err := os.Mkdir(granted, 0o700); err != nil {
		t.Fatal(err)
	}
	o, err := Open([]Rule{
		{Path: granted, Access: ReadWrite},
		{Path: "/nonexistent-helikon", Access: ReadOnly, Optional: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	// The path is replaced after Open: the rule follows the directory.
	moved := filepath.Join(base, "moved")
	if err := os.Rename(granted, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(granted, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(dir string) error {
		fd, err := unix.Open(filepath.Join(dir, "f"), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
		}
		return err
	}
	for range 2 { // twice: one Opened serves many rulesets
		rs, err := Build(abi, Config{Opened: []*Opened{o}})
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ moved, replacement error }
		onDiscardedThread(func() {
			if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
				got.moved = err
				return
			}
			if err := rs.RestrictThread(); err != nil {
				got.moved = err
				return
			}
			got.moved, got.replacement = write(moved), write(granted)
		})
		rs.Close()
		if got.moved != nil {
			t.Errorf("write beneath the opened directory: %v", got.moved)
		}
		if !errors.Is(got.replacement, unix.EACCES) {
			t.Errorf("write beneath what the path names now = %v; want EACCES", got.replacement)
		}
	}
}
