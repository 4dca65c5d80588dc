package mcptools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/internal/proctest"
	"github.com/paigasus/helikon/tool/mcptools"
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

// BenchmarkHTTPReadEightClients measures Read calls over streamable HTTP on
// a loopback listener, made by 8 clients at once (each its own go-sdk
// session, as 8 editors or agents would be). It reports the throughput as
// calls/s and, steadier on a loaded machine, the CPU time of the process
// (clients and server) per call.
func BenchmarkHTTPReadEightClients(b *testing.B) {
	const clients = 8
	root := b.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte(strings.Repeat("a line of some notes\n", 100)), 0o600); err != nil {
		b.Fatal(err)
	}
	srv, err := mcptools.NewServer(helikon.MustToolset(builtinTools(b, root)...), nil)
	if err != nil {
		b.Fatal(err)
	}
	url := startHTTP(b, srv, nil)
	ctx := context.Background()
	sessions := make([]*mcp.ClientSession, clients)
	for i := range sessions {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		sessions[i] = cs
	}
	params := &mcp.CallToolParams{Name: "Read", Arguments: map[string]any{"path": "notes.txt"}}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	var wg sync.WaitGroup
	for _, cs := range sessions {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				res, err := cs.CallTool(ctx, params)
				if err != nil || res.IsError {
					b.Error(err, res)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHTTPAbandonedSessions opens b.N sessions over HTTP and abandons
// them; it reports the heap each one holds while it lives and what is left
// per session once all have idled out (2 s).
func BenchmarkHTTPAbandonedSessions(b *testing.B) {
	srv, err := mcptools.NewServer(helikon.MustToolset(newKit(b).tools...), nil)
	if err != nil {
		b.Fatal(err)
	}
	const idle = 2 * time.Second
	url := startHTTP(b, srv, &mcptools.HTTPOptions{MaxSessions: -1, SessionTimeout: idle})
	c := newRawClient(b, url, "")
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	b.ResetTimer()
	for range b.N {
		c.open()
	}
	b.StopTimer()
	// Sessions opened first may have idled out already: divide by those
	// still live.
	n, live := liveSessions(srv), heap()
	proctest.WaitFor(b, "the sessions idle out", func() bool { return liveSessions(srv) == 0 })
	after := heap()
	b.ReportMetric(float64(n), "sessions-live")
	b.ReportMetric(float64(int64(live)-int64(before))/float64(max(n, 1)), "B-live/session")
	b.ReportMetric(float64(int64(after)-int64(before))/float64(b.N), "B-left/session")
}
