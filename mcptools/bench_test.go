package mcptools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/mcptools"
)

// BenchmarkServedCall measures one tools/call of a helikon tool from the
// go-sdk client over in-memory transports: argument check, permission
// pipeline, invocation and result encoding on both sides.
func BenchmarkServedCall(b *testing.B) {
	k := newKit(b)
	cs := serve(b, k.tools, nil, nil, "")
	params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hi","times":2}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkClientCall measures one call of an MCP tool through the helikon
// client (local validation, then the same round trip).
func BenchmarkClientCall(b *testing.B) {
	k := newKit(b)
	srv, err := mcptools.NewServer(helikon.MustToolset(k.tools...), nil)
	if err != nil {
		b.Fatal(err)
	}
	echo := toolsByName(b, connectInMemory(b, srv, nil))["echo"]
	tc := helikon.NewToolContext(context.Background(), app{}, nil)
	args := json.RawMessage(`{"text":"hi","times":2}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := echo.Invoke(tc, args); err != nil {
			b.Fatal(err)
		}
	}
}
