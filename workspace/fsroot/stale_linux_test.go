//go:build linux

package fsroot_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The clean-up of dead writers' temporary files must open only regular
// files. Another process can put a FIFO, a device node or a symbolic link
// under a temporary file's name; opening a device can have effects (a
// watchdog armed, a tape rewound), and a link leads to a file that is not a
// temporary file at all. inotify sees every open, so the test can tell.
func TestStaleTempCleanupOpensOnlyRegularFiles(t *testing.T) {
	fx := newFixture(t)
	sub := filepath.Join(fx.root, "sub")
	victim := filepath.Join(sub, "victim.txt")
	must(t, os.WriteFile(victim, []byte("not a temporary file"), 0o644))
	decoys := map[string]string{} // name -> file whose opening is watched
	fifo := filepath.Join(sub, ".a.helikon-0123456789abcdef.tmp")
	must(t, syscall.Mkfifo(fifo, 0o644))
	decoys[fifo] = fifo
	link := filepath.Join(sub, ".b.helikon-0123456789abcdef.tmp")
	must(t, os.Symlink("victim.txt", link))
	decoys[link] = victim
	if os.Geteuid() == 0 {
		dev := filepath.Join(sub, ".c.helikon-0123456789abcdef.tmp")
		if err := syscall.Mknod(dev, syscall.S_IFCHR|0o666, 1<<8|3); err == nil { // /dev/null's numbers
			decoys[dev] = dev
		}
	}
	in, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("no inotify here: %v", err)
	}
	defer unix.Close(in)
	for _, watched := range decoys {
		if _, err := unix.InotifyAddWatch(in, watched, unix.IN_OPEN); err != nil {
			t.Fatal(err)
		}
	}
	// A dead writer's real temporary file is still removed.
	dead := filepath.Join(sub, ".x.txt.helikon-fedcba9876543210.tmp")
	must(t, os.WriteFile(dead, []byte("half"), 0o600))

	_, err = fx.sb.WriteFile(context.Background(), "sub/x.txt", []byte("x"))
	must(t, err)

	buf := make([]byte, 4096)
	n, err := unix.Read(in, buf)
	if n > 0 {
		t.Errorf("writing next to decoy temporary files opened them (%d bytes of inotify open events): only regular files may be opened", n)
	} else if !errors.Is(err, unix.EAGAIN) {
		t.Fatalf("reading inotify events: %v", err)
	}
	for name := range decoys {
		if _, err := os.Lstat(name); err != nil {
			t.Errorf("%s, not a temporary file of ours, was removed: %v", filepath.Base(name), err)
		}
	}
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead writer's temporary file is still there (%v)", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "not a temporary file" {
		t.Errorf("victim.txt changed: %q", b)
	}
}
