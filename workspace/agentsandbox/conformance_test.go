package agentsandbox_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/agentsandbox"
	"github.com/paigasus/helikon/workspace/agentsandbox/internal/fakecluster"
	"github.com/paigasus/helikon/workspace/workspacetest"
)

// TestConformance runs the workspace contract's suite against workspaces
// claimed on the fake cluster, over WebSocket and over SPDY.
func TestConformance(t *testing.T) {
	for _, spdy := range []bool{false, true} {
		t.Run(map[bool]string{false: "WebSocket", true: "SPDY"}[spdy], func(t *testing.T) {
			e, c := newEngine(t, agentsandbox.Options{Template: "t"}, fakecluster.Template("t", ""))
			c.Exec.RefuseWebSocket.Store(spdy)
			var n atomic.Int64
			workspacetest.Run(t, func(t *testing.T) workspace.Workspace {
				ws, err := e.Create(t.Context(), fmt.Sprintf("conf%d", n.Add(1)))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ws.Close(context.Background()) })
				return ws
			}, &workspacetest.Options{Remote: true, Engine: agentsandbox.EngineName})
		})
	}
}
