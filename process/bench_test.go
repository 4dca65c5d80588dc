package process_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/tool/bashtool"
)

// benchBackends are the engines the benchmarks run on: the host backend,
// and the OS sandbox where this machine has it.
func benchBackends(b *testing.B) map[string]backend.Backend {
	dir := b.TempDir()
	out := map[string]backend.Backend{}
	h, err := host.New(dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	out["host"] = h
	if s := ossandbox.Probe(); s.Available {
		o, err := ossandbox.New(dir, nil)
		if err != nil {
			b.Fatal(err)
		}
		if c, ok := any(o).(io.Closer); ok {
			b.Cleanup(func() { c.Close() })
		}
		out["ossandbox"] = o
	}
	return out
}

// BenchmarkFirstOutputByte: from Start to the first byte of the process's
// output in the table (a shell that prints at once), and, beside it, a
// one-shot Run of the same command.
func BenchmarkFirstOutputByte(b *testing.B) {
	for name, be := range benchBackends(b) {
		tab, err := process.New(context.Background(), be, &process.Options{MaxProcesses: 4})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name+"/start", func(b *testing.B) {
			for b.Loop() {
				e, err := tab.Start(b.Context(), &backend.StartRequest{Request: backend.Request{Command: "echo x"}})
				if err != nil {
					b.Fatal(err)
				}
				c, err := e.ReadNew(b.Context(), 10*time.Second, 0)
				if err != nil || len(c.Data) == 0 {
					b.Fatalf("no output: %v", err)
				}
				if _, err := e.Process().Wait(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/run", func(b *testing.B) {
			for b.Loop() {
				if _, err := be.Run(b.Context(), &backend.Request{Command: "echo x"}); err != nil {
					b.Fatal(err)
				}
			}
		})
		tab.Close()
	}
}

// BenchmarkInputRoundTrip: a line written to a running cat until its copy
// is in the output.
func BenchmarkInputRoundTrip(b *testing.B) {
	for name, be := range benchBackends(b) {
		b.Run(name, func(b *testing.B) {
			tab, err := process.New(context.Background(), be, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer tab.Close()
			e, err := tab.Start(b.Context(), &backend.StartRequest{Request: backend.Request{Command: "cat"}})
			if err != nil {
				b.Fatal(err)
			}
			line := []byte("ping\n")
			for b.Loop() {
				if _, err := e.Write(line); err != nil {
					b.Fatal(err)
				}
				var got []byte
				for !bytes.Contains(got, line) {
					c, err := e.ReadNew(b.Context(), 10*time.Second, 0)
					if err != nil {
						b.Fatal(err)
					}
					got = append(got, c.Data...)
				}
			}
		})
	}
}

// BenchmarkReadNewOutputThroughTheTool: a line written to a running cat
// until BashOutput, invoked as a model's call is, returns its copy.
func BenchmarkReadNewOutputThroughTheTool(b *testing.B) {
	for name, be := range benchBackends(b) {
		b.Run(name, func(b *testing.B) {
			tab, err := process.New(context.Background(), be, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer tab.Close()
			out, err := bashtool.NewOutputTool[struct{}](tab)
			if err != nil {
				b.Fatal(err)
			}
			e, err := tab.Start(b.Context(), &backend.StartRequest{Request: backend.Request{Command: "cat"}})
			if err != nil {
				b.Fatal(err)
			}
			args := json.RawMessage(`{"bash_id": "` + e.ID + `", "wait_ms": 10000}`)
			tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
			line := []byte("ping\n")
			for b.Loop() {
				if _, err := e.Write(line); err != nil {
					b.Fatal(err)
				}
				var got string
				for !strings.Contains(got, "ping\n") {
					res, err := out.Invoke(tc, args)
					if err != nil {
						b.Fatal(err)
					}
					var r struct {
						Output string `json:"output"`
					}
					if err := json.Unmarshal(res, &r); err != nil {
						b.Fatal(err)
					}
					got += r.Output
				}
			}
		})
	}
}

// BenchmarkThroughput: a process printing as fast as it can (head -c of
// /dev/zero) into its ring, against the same program's output read by this
// process from a pipe (cat into a pipe): bytes per second, SetBytes.
func BenchmarkThroughput(b *testing.B) {
	const size = 64 << 20
	cmd := "head -c " + strconv.Itoa(size) + " /dev/zero"
	b.Run("pipe", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			c := exec.Command("sh", "-c", cmd)
			r, err := c.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Start(); err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, r)
			if err := c.Wait(); err != nil || n != size {
				b.Fatalf("%d bytes, %v", n, err)
			}
		}
	})
	for name, be := range benchBackends(b) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				p, err := backend.Start(b.Context(), be, &backend.StartRequest{Request: backend.Request{Command: cmd}})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.Wait(b.Context()); err != nil {
					b.Fatal(err)
				}
				if c := p.Output().Read(0, 1); c.Total != size {
					b.Fatalf("%d bytes", c.Total)
				}
			}
		})
	}
}

// BenchmarkTerminalEcho: a line typed into cat on a terminal until both
// the terminal's echo and cat's copy are in the output.
func BenchmarkTerminalEcho(b *testing.B) {
	for name, be := range benchBackends(b) {
		b.Run(name, func(b *testing.B) {
			p, err := backend.Start(b.Context(), be, &backend.StartRequest{
				Request: backend.Request{Command: "exec cat"}, TTY: &backend.TermSize{Rows: 24, Cols: 80}})
			if err != nil {
				b.Fatal(err)
			}
			defer func() { p.Signal(os.Kill); <-p.Done() }()
			var cursor int64
			want := []byte("ping\r\nping\r\n")
			for b.Loop() {
				if _, err := p.Input().Write([]byte("ping\n")); err != nil {
					b.Fatal(err)
				}
				var got []byte
				for !bytes.Contains(got, want) {
					c, err := p.Output().Wait(b.Context(), cursor, 0)
					if err != nil || c.Closed && c.Next == c.Total {
						b.Fatalf("output ended: %v %q", err, got)
					}
					got = append(got, c.Data...)
					cursor = c.Next
				}
			}
		})
	}
}

// BenchmarkFiftyProcesses starts 50 processes in one table, each writing
// 2000 numbered lines (well within its ring) and then idling: every line
// must be there (no output lost), and the Go heap each idle process costs
// is reported (heap-B/proc), with the goroutines (goroutines/proc).
func BenchmarkFiftyProcesses(b *testing.B) {
	const n, lines = 50, 2000
	for name, be := range benchBackends(b) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				tab, err := process.New(context.Background(), be, &process.Options{MaxProcesses: n})
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				g0 := runtime.NumGoroutine()
				entries := make([]*process.Entry, n)
				for i := range entries {
					entries[i], err = tab.Start(b.Context(), &backend.StartRequest{Request: backend.Request{
						Command: `i=0; while [ $i -lt ` + strconv.Itoa(lines) + ` ]; do echo line-$i; i=$((i+1)); done; echo done; exec sleep 300`}})
					if err != nil {
						b.Fatal(err)
					}
				}
				for _, e := range entries {
					var got []byte
					for !bytes.Contains(got, []byte("done\n")) {
						c, err := e.ReadNew(b.Context(), 20*time.Second, 0)
						if err != nil || c.Missed > 0 {
							b.Fatalf("read: %v, missed %d", err, c.Missed)
						}
						got = append(got, c.Data...)
					}
					if k := bytes.Count(got, []byte("\n")); k != lines+1 {
						b.Fatalf("%d lines, want %d", k, lines+1)
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/n, "heap-B/proc")
				b.ReportMetric(float64(runtime.NumGoroutine()-g0)/n, "goroutines/proc")
				tab.Close()
			}
		})
	}
}
