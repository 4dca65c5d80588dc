//go:build unix

package fsroot_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Write and Update over a FIFO, socket or device refuse it without
// blocking and leave it as it is: replacing /dev-like nodes or pipes other
// programs read is not a file edit.
func TestWritesRefuseSpecialFiles(t *testing.T) {
	fx := newFixture(t)
	must(t, syscall.Mkfifo(filepath.Join(fx.root, "fifo"), 0o644))
	want := map[string]string{"fifo": "named pipe"}
	if ln, err := listenUnix(filepath.Join(fx.root, "sock")); err == nil {
		defer ln.Close()
		want["sock"] = "socket"
	}
	if os.Geteuid() == 0 {
		if err := syscall.Mknod(filepath.Join(fx.root, "null"), syscall.S_IFCHR|0o666, 1<<8|3); err == nil {
			want["null"] = "device"
		}
	}
	ctx := context.Background()
	for name, what := range want {
		before, err := os.Lstat(filepath.Join(fx.root, name))
		must(t, err)
		_, err = fx.sb.WriteFile(ctx, name, []byte("x"))
		if err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("WriteFile(%s) = %v; want an error saying %q", name, err, what)
		}
		_, err = fx.sb.UpdateFile(ctx, name, 1<<20, func(b []byte) ([][]byte, error) { return [][]byte{b}, nil })
		if err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("UpdateFile(%s) = %v; want an error saying %q", name, err, what)
		}
		after, err := os.Lstat(filepath.Join(fx.root, name))
		if err != nil || !os.SameFile(before, after) || after.Mode() != before.Mode() {
			t.Errorf("%s was replaced or changed", name)
		}
	}
	assertNoTemps(t, fx.root)
}

// A new file gets 0666 less the umask, and a rewritten file keeps its
// narrower mode.
func TestWritePermissionsFollowUmaskAndNeverWiden(t *testing.T) {
	fx := newFixture(t)
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	ctx := context.Background()
	_, err := fx.sb.WriteFile(ctx, "new.txt", []byte("x"))
	must(t, err)
	if fi, _ := os.Stat(filepath.Join(fx.root, "new.txt")); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v under umask 077; want 0600", fi.Mode().Perm())
	}
	syscall.Umask(0)
	p := filepath.Join(fx.root, "private.txt")
	must(t, os.WriteFile(p, []byte("secret"), 0o600))
	must(t, os.Chmod(p, 0o600))
	_, err = fx.sb.UpdateFile(ctx, "private.txt", 0, func(b []byte) ([][]byte, error) {
		return [][]byte{b, []byte(" more")}, nil
	})
	must(t, err)
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("rewritten private file mode %v; want 0600 kept", fi.Mode().Perm())
	}
	// The temporary files' own modes are checked by filetool's kill test,
	// which sees the ones killed writers leave behind.
	_, err = fx.sb.WriteFile(ctx, "private.txt", []byte("rewritten"))
	must(t, err)
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
		t.Errorf("rewritten private file mode %v; want 0600 kept", fi.Mode().Perm())
	}
}
