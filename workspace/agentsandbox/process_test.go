package agentsandbox_test

import (
	"context"
	"testing"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/backendtest"
	"github.com/paigasus/helikon/workspace/agentsandbox"
	"github.com/paigasus/helikon/workspace/agentsandbox/internal/fakecluster"
)

// TestProcessConformance runs the process suite against a workspace of the
// fake cluster, over WebSocket and over SPDY. The fake's exec server has no
// terminal (it serves no tty and no resize stream), so the terminal cases
// are skipped: Start's terminal is not exercised here.
func TestProcessConformance(t *testing.T) {
	for _, spdy := range []bool{false, true} {
		t.Run(map[bool]string{false: "WebSocket", true: "SPDY"}[spdy], func(t *testing.T) {
			e, c := newEngine(t, agentsandbox.Options{Template: "t"}, fakecluster.Template("t", ""))
			c.Exec.RefuseWebSocket.Store(spdy)
			ws, err := e.Create(t.Context(), "proc")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ws.Close(context.Background()) })
			backendtest.RunProcesses(t, ws.(backend.Starter), &backendtest.ProcessOptions{NoTTY: true})
		})
	}
}
