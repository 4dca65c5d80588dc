package host_test

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
)

// TestProcessKillLeavesNoSurvivor is the attack of a process that outlives
// its kill: a daemon that leaves its session and process group. Its pid must
// be gone once the process is done.
func TestProcessKillLeavesNoSurvivor(t *testing.T) {
	b, err := host.New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := b.Start(t.Context(), &backend.StartRequest{Request: backend.Request{
		Command: `setsid sh -c 'sleep 300' & echo "pid $!"; wait`}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var out string
	for !strings.Contains(out, "\n") {
		c, err := p.Output().Wait(ctx, int64(len(out)), 0)
		if err != nil {
			t.Fatal(err)
		}
		out += string(c.Data)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(out, "pid ")))
	if err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	if err := p.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		// A zombie waiting for init to reap it is dead too.
		stat, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) == 0 || f[0] != "Z" {
			t.Fatalf("pid %d survived its process's kill: %s", pid, stat)
		}
	}
}
