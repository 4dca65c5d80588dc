package process_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/process"
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
