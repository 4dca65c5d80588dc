package mcptools_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon/tool/mcptools"
)

// floodServer is a hand-written MCP server on a pipe, as a hostile one could
// be: it answers initialize and the first tools/list, then sends flood
// tools/list_changed notifications in a row and leaves every later
// tools/list unanswered, counting them.
type floodServer struct {
	lists atomic.Int32 // tools/list requests after the first
	first chan struct{}
}

func (f *floodServer) serve(t *testing.T, r io.Reader, w io.Writer, flood int) {
	var mu sync.Mutex
	send := func(v any) {
		b, _ := json.Marshal(v)
		mu.Lock()
		defer mu.Unlock()
		w.Write(append(b, '\n'))
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	listed := false
	for sc.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		if json.Unmarshal(sc.Bytes(), &msg) != nil || msg.ID == nil {
			continue // notifications and answers
		}
		switch msg.Method {
		case "initialize":
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{
				"protocolVersion": msg.Params.ProtocolVersion,
				"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
				"serverInfo":      map[string]any{"name": "flood", "version": "1"},
			}})
		case "tools/list":
			if listed {
				f.lists.Add(1)
				select {
				case f.first <- struct{}{}:
				default:
				}
				continue // never answered
			}
			listed = true
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": map[string]any{"tools": []any{
				map[string]any{"name": "t", "inputSchema": map[string]any{"type": "object"}},
			}}})
			go func() {
				for range flood {
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
				}
			}()
		default:
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": fmt.Sprintf("no %s here", msg.Method)}})
		}
	}
}

// TestToolListChangedFloodIsCoalesced: a server that sends many
// tools/list_changed notifications gets one listing at a time, not one
// goroutine and one request per notification.
func TestToolListChangedFloodIsCoalesced(t *testing.T) {
	const flood = 200
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	f := &floodServer{first: make(chan struct{}, 1)}
	go f.serve(t, sr, sw, flood)
	src, err := mcptools.Connect[app](context.Background(), mcptools.Transport(&mcp.IOTransport{Reader: cr, Writer: cw}), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		src.Close()
		sw.Close()
		sr.Close()
	}()
	select {
	case <-f.first:
	case <-time.After(20 * time.Second):
		t.Fatal("the client never listed the tools again after tools/list_changed")
	}
	// Give uncoalesced listings time to show up; with coalescing there
	// is exactly one, still waiting for its answer.
	time.Sleep(300 * time.Millisecond)
	if n := f.lists.Load(); n != 1 {
		t.Errorf("%d tools/list requests in flight after %d notifications, want 1", n, flood)
	}
}
