package agentsandbox

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace/agentsandbox/internal/fakecluster"
)

// TestKeeperEndsProcessesWhenItsStreamDrops: a started process tree is
// ended by the keeper when the keeper's stream drops without a word, as
// it does when this process dies (SIGKILL); the process's own stream is
// left running, so only the keeper can end it. Without the keeper (keep
// disabled) the tree runs on: checked once by hand.
func TestKeeperEndsProcessesWhenItsStreamDrops(t *testing.T) {
	c := fakecluster.New(t, fakecluster.Template("t", ""))
	e, err := NewForClients(Clients{Config: c.Config, Kube: c.Kube, Sandboxes: c.Sandboxes, Extensions: c.Extensions},
		&Options{Template: "t", Namespace: fakecluster.Namespace, PollInterval: 5 * time.Millisecond, ReadyTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := e.Create(t.Context(), "keeper")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close(context.Background()) })
	w := ws.(*Workspace)
	p, err := w.Start(t.Context(), &backend.StartRequest{Request: backend.Request{Command: "sleep 4721 & sleep 4722"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Signal(os.Kill); <-p.Done() })
	// The shell and its two sleeps.
	if n := sleepers("sleep 472"); n < 3 {
		for range 100 {
			if n = sleepers("sleep 472"); n >= 3 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if n < 3 {
			t.Fatalf("%d processes of the tree run, want 3", n)
		}
	}
	w.keeperOf().sever()
	select {
	case <-p.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("the process runs on after its keeper's stream dropped (%d sleepers)", sleepers("sleep 472"))
	}
	for range 100 {
		if sleepers("sleep 472") == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("%d sleepers survive", sleepers("sleep 472"))
}

// sleepers counts this machine's live processes whose command line holds
// tag (the fake cluster runs a pod's commands here).
func sleepers(tag string) int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), tag) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if i := strings.LastIndexByte(string(st), ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
				continue
			}
		}
		n++
	}
	return n
}
