//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
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
