//go:build linux

package mcptools_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/tool/mcptools"
)

// BenchmarkWrapRelay measures one tools/call through the relay against the
// same call to the bare server: in memory (the relay's own cost: a second
// JSON-RPC hop, argument validation, the permission pipeline) and as a
// whole process over stdio (the hostile test server, bare with the SDK's
// CommandTransport and contained in the OS sandbox behind Wrap).
func BenchmarkWrapRelay(b *testing.B) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	host := func(b *testing.B, t mcp.Transport) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, t, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { cs.Close() })
		return cs
	}
	wrapped := func(b *testing.B, dial mcptools.Dialer) *mcp.ClientSession {
		w, err := mcptools.Wrap(ctx, dial, &mcptools.WrapOptions{Name: "bench", Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		hc, hs := mcp.NewInMemoryTransports()
		go w.Run(ctx, hs)
		b.Cleanup(func() { w.Close() })
		return host(b, hc)
	}
	run := func(b *testing.B, cs *mcp.ClientSession, name string, args map[string]any) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil || res.IsError {
				b.Fatalf("%v %v", err, res)
			}
		}
	}
	echo := map[string]any{"text": "hi"}
	b.Run("in-memory/bare", func(b *testing.B) {
		ct, st := mcp.NewInMemoryTransports()
		newUpstream(honest).srv.Connect(ctx, st, nil)
		run(b, host(b, ct), "echo", echo)
	})
	b.Run("in-memory/wrapped", func(b *testing.B) {
		ct, st := mcp.NewInMemoryTransports()
		newUpstream(honest).srv.Connect(ctx, st, nil)
		run(b, wrapped(b, mcptools.Transport(ct)), "echo", echo)
	})
	// The hostile server's attack tool with kind env is a cheap call that
	// never changes its definition.
	env := map[string]any{"kind": "env", "target": "PATH"}
	b.Run("process/bare", func(b *testing.B) {
		run(b, host(b, &mcp.CommandTransport{Command: exec.Command(hostileBinary(b))}), "attack", env)
	})
	b.Run("process/contained", func(b *testing.B) {
		bin := hostileBinary(b)
		sb, err := ossandbox.New(b.TempDir(), &ossandbox.Options{ReadPaths: []string{filepath.Dir(bin)}, Timeout: time.Hour})
		if errors.Is(err, backend.ErrUnavailable) {
			b.Skipf("the OS sandbox is unavailable here: %v", err)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { sb.Close() })
		run(b, wrapped(b, mcptools.Contained(sb, []string{bin}, nil)), "attack", env)
	})
}
