//go:build linux

package execfs_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/execfs"
)

// A directory on the path is swapped for a link out of the root, as a
// process inside the workspace could do, while writes and reads run
// through it. The swap is atomic (renameat2 RENAME_EXCHANGE), so at every
// instant d is the real directory or a link out; the walk may see one and
// the operation the other. Nothing outside may be written or read: the
// check after entering the directory (getcwd against the resolved path)
// refuses the link it went through.
func TestDirectorySwappedForALinkCannotRedirect(t *testing.T) {
	each(t, func(t *testing.T, sh shell) {
		if sh.name != "dash" && sh.name != "busybox" {
			t.Skip("two worlds are enough; each round is an exec")
		}
		base := t.TempDir()
		root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
		mustWrite(t, filepath.Join(outside, "secret.txt"), "outside")
		d, other := filepath.Join(root, "d"), filepath.Join(root, "d.other")
		mustWrite(t, filepath.Join(d, "secret.txt"), "inside")
		if err := os.Symlink("../outside", other); err != nil {
			t.Fatal(err)
		}
		if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE); err != nil {
			t.Skipf("renameat2 RENAME_EXCHANGE is not available here (%v)", err)
		}
		unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE)
		f, err := execfs.New(context.Background(), sh.r, root, &sh.opts)
		if err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		done := make(chan int)
		go func() {
			swaps := 0
			defer func() { done <- swaps }()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE) == nil {
					swaps++
				}
			}
		}()
		ctx := context.Background()
		var refused, ok int
		for i := 0; i < 200 || (refused == 0 || ok == 0) && i < 2000; i++ {
			_, werr := f.WriteFile(ctx, fmt.Sprintf("d/w%d.txt", i%4), []byte("PWNED"))
			fl, rerr := f.Open(ctx, "d/secret.txt")
			if rerr == nil {
				b, _ := io.ReadAll(fl)
				if string(b) != "inside" {
					t.Errorf("read %q through the swapped directory", b)
				}
			}
			for _, err := range []error{werr, rerr} {
				if err == nil {
					ok++
				} else {
					refused++
				}
			}
		}
		close(stop)
		swaps := <-done
		t.Logf("%d swaps, %d operations done, %d refused", swaps, ok, refused)
		es, _ := os.ReadDir(outside)
		for _, e := range es {
			if e.Name() != "secret.txt" {
				t.Errorf("%s was written outside the root", e.Name())
			}
		}
		if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "outside" {
			t.Errorf("the outside secret is %q", b)
		}
		for _, dir := range []string{d, other} {
			if es, err := os.ReadDir(dir); err == nil {
				for _, e := range es {
					if strings.Contains(e.Name(), ".helikon-") {
						t.Logf("temporary file left by a refused write: %s", e.Name())
					}
				}
			}
		}
	})
}

// A character device (here /dev/zero's, made as root) is neither read nor
// written: reading it would never end, writing it would write the device.
func TestDevicesAreNeverOpened(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making a device node needs root")
	}
	each(t, func(t *testing.T, sh shell) {
		f, root := newFS(t, sh, nil)
		if err := unix.Mknod(filepath.Join(root, "zero"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))); err != nil {
			t.Skipf("mknod: %v", err)
		}
		ctx := context.Background()
		if _, err := f.Open(ctx, "zero"); !errors.Is(err, workspace.ErrNotRegular) {
			t.Errorf("Open(zero) = %v, want ErrNotRegular", err)
		}
		if _, err := f.WriteFile(ctx, "zero", []byte("x")); !errors.Is(err, workspace.ErrNotRegular) {
			t.Errorf("WriteFile(zero) = %v, want ErrNotRegular", err)
		}
		if fi, err := os.Lstat(filepath.Join(root, "zero")); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("zero is no longer the device: %v, %v", fi, err)
		}
	})
}
