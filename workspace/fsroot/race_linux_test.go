//go:build linux

package fsroot_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/paigasus/helikon/workspace"
	"golang.org/x/sys/unix"
)

// A directory on the path is swapped for a symbolic link to the outside
// while writes and reads run through it. Nothing outside may be written or
// read. The swap is atomic (renameat2 RENAME_EXCHANGE), so at every instant
// d is either the real directory or a link out.
func TestSymlinkSwapRaceCannotEscape(t *testing.T) {
	fx := newFixture(t)
	ctx := context.Background()
	d := filepath.Join(fx.root, "d")
	other := filepath.Join(fx.root, "d.other")
	must(t, os.Mkdir(d, 0o755))
	must(t, os.WriteFile(filepath.Join(d, "secret.txt"), []byte("inside"), 0o644))
	must(t, os.Symlink("../outside", other))
	if err := unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("renameat2 RENAME_EXCHANGE is not available here (%v); the swap race cannot be run", err)
	}
	before := snapshot(t, filepath.Dir(fx.root), fx.root)

	stop := make(chan struct{})
	swapper := make(chan int)
	started := make(chan struct{})
	go func() {
		swaps := 0
		defer func() { swapper <- swaps }()
		for {
			if swaps == 16 {
				close(started)
			}
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
	<-started
	var wg sync.WaitGroup
	var reads, writes, denials int
	var mu sync.Mutex
	// Run until both sides of the swap have been seen (at least 300
	// rounds, at most 5000): how the two interleave is up to the scheduler.
	exercised := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return denials > 0 && writes+reads > 0
	}
	for w := range 2 {
		wg.Go(func() {
			for i := 0; i < 300 || !exercised() && i < 5000; i++ {
				_, err := fx.sb.WriteFile(ctx, fmt.Sprintf("d/w%d-%d.txt", w, i%5), []byte("PWNED"))
				f, _, rerr := fx.sb.OpenRegular("d/secret.txt")
				if rerr == nil {
					b, _ := readAll(f)
					if string(b) != "inside" {
						t.Errorf("read %q through a swapped directory", b)
					}
				}
				mu.Lock()
				if err == nil {
					writes++
				}
				if rerr == nil {
					reads++
				}
				if errors.Is(err, workspace.ErrOutside) {
					denials++
				}
				if errors.Is(rerr, workspace.ErrOutside) {
					denials++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(stop)
	swaps := <-swapper
	t.Logf("%d swaps; %d writes and %d reads succeeded inside; %d operations denied", swaps, writes, reads, denials)
	if after := snapshot(t, filepath.Dir(fx.root), fx.root); after != before {
		t.Errorf("the race reached outside the root:\nbefore %s\nafter  %s", before, after)
	}
	if denials == 0 || writes+reads == 0 {
		t.Error("the race was not exercised: every operation saw the same side of the swap")
	}
}
