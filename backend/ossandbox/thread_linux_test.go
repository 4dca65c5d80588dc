//go:build linux

package ossandbox

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
)

// TestMainThreadNeverConfined confines many discarded threads, concurrently
// with an idle main thread that the scheduler hands goroutines to, and
// checks that the main thread (which the runtime parks rather than
// terminates) never got a restriction: it would then be shared with every
// later goroutine that lands on it.
func TestMainThreadNeverConfined(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				err := launcher.OnDiscardedThread(func() error {
					return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	st, err := os.ReadFile("/proc/self/task/" + strconv.Itoa(os.Getpid()) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(st)) {
		if v, ok := strings.CutPrefix(line, "NoNewPrivs:"); ok && strings.TrimSpace(v) != "0" {
			t.Fatal("the main thread was confined")
		}
	}
}
