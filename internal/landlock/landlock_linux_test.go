package landlock

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

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
	done := make(chan outcome)
	// Hold this goroutine's thread so that the restricted goroutine cannot
	// land on it; if this is the main thread, which the runtime never
	// terminates, it stays unrestricted.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is discarded
		if unix.Gettid() == unix.Getpid() {
			o := outcome{readOutside: errors.New("landed on the main thread")}
			done <- o
			return
		}
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			done <- outcome{readOutside: err, writeInside: err}
			return
		}
		if err := rs.RestrictThread(); err != nil {
			done <- outcome{readOutside: err, writeInside: err}
			return
		}
		var o outcome
		_, o.readOutside = unix.Open(secret, unix.O_RDONLY, 0)
		fd, err := unix.Open(filepath.Join(inside, "f"), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err == nil {
			unix.Close(fd)
		}
		o.writeInside = err
		done <- o
	}()
	o := <-done
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
