package docker

import (
	"context"
	"os"
	"testing"

	"github.com/paigasus/helikon/backend"
)

// BenchmarkRunTrue is the Bash round trip of `true` in a warm workspace,
// in-process. Compare with `docker exec CONTAINER true` in the same run
// (BENCHMARKS.md): HELIKON_BENCH_CONTAINER_FILE, when set, receives the
// container's id for hyperfine.
func BenchmarkRunTrue(b *testing.B) {
	e := newEngine(b, Options{Isolate: true})
	ws := create(b, e)
	if f := os.Getenv("HELIKON_BENCH_CONTAINER_FILE"); f != "" {
		if err := os.WriteFile(f, []byte(ws.Info().ID), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	req := &backend.Request{Command: "true"}
	ctx := context.Background()
	for b.Loop() {
		res, err := ws.Run(ctx, req)
		if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkCreate is the first call: create, start and probe a workspace,
// then remove it. Compare with `docker run --rm IMAGE true`.
func BenchmarkCreate(b *testing.B) {
	e := newEngine(b, Options{Isolate: true})
	ctx := context.Background()
	for b.Loop() {
		ws, err := e.Create(ctx, session(b))
		if err != nil {
			b.Fatal(err)
		}
		if err := ws.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadSmallFile reads a small file through the isolated mode's
// file system (one exec).
func BenchmarkReadSmallFile(b *testing.B) {
	ws := create(b, newEngine(b, Options{Isolate: true}))
	ctx := context.Background()
	if _, err := ws.WriteFile(ctx, "small.txt", []byte("hello\n")); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		f, err := ws.Open(ctx, "small.txt")
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// BenchmarkWriteSmallFile writes a small file through the isolated mode's
// file system.
func BenchmarkWriteSmallFile(b *testing.B) {
	ws := create(b, newEngine(b, Options{Isolate: true}))
	ctx := context.Background()
	data := []byte("hello\n")
	for b.Loop() {
		if _, err := ws.WriteFile(ctx, "small.txt", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCreateFresh is the first call of a process: connect (New), then
// create, start and probe a workspace and remove it, with nothing that an
// earlier Create of the engine learnt (the image user's ids).
func BenchmarkCreateFresh(b *testing.B) {
	needDaemon(b)
	ctx := context.Background()
	for b.Loop() {
		e, err := New(ctx, &Options{Image: image(), Isolate: true})
		if err != nil {
			b.Fatal(err)
		}
		ws, err := e.Create(ctx, session(b))
		if err != nil {
			b.Fatal(err)
		}
		if err := ws.Close(ctx); err != nil {
			b.Fatal(err)
		}
		e.Close()
	}
}
