//go:build linux

package fsroot_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/paigasus/helikon/workspace"
	"golang.org/x/sys/unix"
)

// The file itself, not a directory on its path, is swapped for a link to a
// file outside while reads and updates of it run. Nothing outside may be
// read or changed: the link is refused when RealPath sees it, os.Root
// refuses it when the open sees it, and the update's checks (the file it
// read is still the one named, and is not a link) catch it before the
// rename. Updates that do land replace the link's entry, which ends the
// race: the swapper then stops.
func TestFileSwapRaceCannotEscape(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	f := filepath.Join(fx.root, "f")
	other := filepath.Join(fx.root, "f.other")
	must(t, os.WriteFile(f, []byte("inside"), 0o644))
	must(t, os.Symlink("../outside/secret.txt", other))
	if err := unix.Renameat2(unix.AT_FDCWD, f, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE is not available here (%v); the swap race cannot be run", err)
	}
	before := snapshot(t, filepath.Dir(fx.root), fx.root)

	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		swaps := 0
		defer func() { swapped <- swaps }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, f, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE) == nil {
				swaps++
			}
		}
	}()
	var mu sync.Mutex
	outcomes := map[string]int{}
	note := func(what string) {
		mu.Lock()
		outcomes[what]++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 3000 {
			fl, _, err := fx.sb.OpenRegular("f")
			switch {
			case err == nil:
				b, _ := readAll(fl)
				if bytes.Contains(b, []byte(secret)) {
					t.Errorf("read the outside secret through a swapped file")
				}
				note("read")
			case errors.Is(err, workspace.ErrOutside):
				note("read denied")
			default:
				note("read failed: " + err.Error())
			}
		}
	})
	wg.Go(func() {
		for range 300 {
			_, err := fx.sb.UpdateFile(ctx, "f", 1<<20, func(old []byte) ([][]byte, error) {
				if bytes.Contains(old, []byte(secret)) {
					t.Errorf("an update was given the outside secret to change")
				}
				return [][]byte{old}, nil
			})
			switch {
			case err == nil:
				note("update")
			case errors.Is(err, workspace.ErrOutside):
				note("update denied")
			case errors.Is(err, workspace.ErrChanged), errors.Is(err, syscall.ELOOP):
				note("update refused")
			default:
				note("update failed: " + err.Error())
			}
		}
	})
	wg.Wait()
	close(stop)
	swaps := <-swapped
	t.Logf("%d swaps; outcomes %v", swaps, outcomes)
	if after := snapshot(t, filepath.Dir(fx.root), fx.root); after != before {
		t.Errorf("the race reached outside the root:\nbefore %s\nafter  %s", before, after)
	}
	if outcomes["read"]+outcomes["update"] == 0 || outcomes["read denied"]+outcomes["update denied"] == 0 {
		t.Log("the race was not exercised on both sides (the scheduler kept to one); the outside file is unchanged all the same")
	}
}

// A directory is swapped for a link to another directory inside the root
// (which os.Root allows) while reads and conditional writes go through it.
// The path a read reports must be the file it read, and a write that
// expects the path through the directory must not land in the link's
// target: the walk checks each descriptor it opens against its look-up,
// and the writes go through those descriptors. With that check removed,
// reads of private/secret report d/secret and writes land in private.
func TestSwapInsideTheRootIsReported(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	for name, content := range map[string]string{"private/secret": "PRIVATE", "private/f": "private", "d/secret": "public", "d/f": "public"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(fx.root, name)), 0o755))
		must(t, os.WriteFile(filepath.Join(fx.root, name), []byte(content), 0o644))
	}
	d, other := filepath.Join(fx.root, "d"), filepath.Join(fx.root, "d.link")
	must(t, os.Symlink("private", other))
	exchange := func() error { return unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE) }
	if err := exchange(); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE is not available here (%v); the swap race cannot be run", err)
	}
	must(t, exchange())

	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		swaps := 0
		defer func() { swapped <- swaps }()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if exchange() == nil {
				swaps++
			}
		}
	}()
	var mu sync.Mutex
	outcomes := map[string]int{}
	note := func(what string) {
		mu.Lock()
		outcomes[what]++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 20000 {
			f, _, real, err := fx.sb.OpenFile("d/secret")
			if err != nil {
				note("read failed")
				continue
			}
			b, _ := readAll(f)
			if want := map[string]string{"d/secret": "public", "private/secret": "PRIVATE"}[real]; string(b) != want {
				note("read " + string(b) + " as " + real)
				continue
			}
			note("read " + real)
		}
	})
	wg.Go(func() {
		for i := range 600 {
			var err error
			if i%2 == 0 {
				_, err = fx.sb.WriteFileExpect(ctx, "d/f", []byte("written"), []string{"d/f"})
			} else {
				_, err = fx.sb.UpdateFileExpect(ctx, "d/f", 1<<20, []string{"d/f"}, func(old []byte) ([][]byte, error) {
					if string(old) == "private" {
						note("update given private/f")
					}
					return [][]byte{[]byte("updated")}, nil
				})
			}
			switch ue := (*workspace.UnexpectedPathError)(nil); {
			case err == nil:
				note("write")
			case errors.As(err, &ue) && ue.Path == "private/f":
				note("write refused")
			default:
				note("write failed")
			}
		}
	})
	wg.Wait()
	close(stop)
	swaps := <-swapped
	t.Logf("%d swaps; outcomes %v", swaps, outcomes)
	for what, n := range outcomes {
		if strings.HasPrefix(what, "read PRIVATE") || strings.HasPrefix(what, "read public") || what == "update given private/f" {
			t.Errorf("%d times: %s", n, what)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(fx.root, "private", "f")); string(b) != "private" {
		t.Errorf("a write expecting d/f changed private/f to %q", b)
	}
	if ents, _ := os.ReadDir(filepath.Join(fx.root, "private")); len(ents) != 2 {
		t.Errorf("files were created in private: %v", ents)
	}
	if outcomes["read d/secret"] == 0 || outcomes["read private/secret"] == 0 {
		t.Log("the race was not exercised on both sides of the read (the scheduler kept to one)")
	}
}
