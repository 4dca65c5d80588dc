package docker

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/creack/pty"

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

// BenchmarkProcessStart is Start of `echo x` in a warm workspace until its
// first output byte and its end, beside a one-shot Run of the same command
// (the sub-benchmark run).
func BenchmarkProcessStart(b *testing.B) {
	ws := create(b, newEngine(b, Options{Isolate: true}))
	ctx := context.Background()
	b.Run("start", func(b *testing.B) {
		for b.Loop() {
			p, err := ws.Start(ctx, &backend.StartRequest{Request: backend.Request{Command: "echo x"}})
			if err != nil {
				b.Fatal(err)
			}
			if c, err := p.Output().Wait(ctx, 0, 0); err != nil || len(c.Data) == 0 {
				b.Fatalf("no output: %v", err)
			}
			if _, err := p.Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("run", func(b *testing.B) {
		for b.Loop() {
			if _, err := ws.Run(ctx, &backend.Request{Command: "echo x"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTerminalEcho is a line typed into cat on a terminal until the
// terminal's echo and cat's copy are back: a process started with a TTY
// (start), and `docker exec -it CONTAINER cat` on a pseudo-terminal of
// this process, driven the same way (docker-exec-it).
func BenchmarkTerminalEcho(b *testing.B) {
	ws := create(b, newEngine(b, Options{Isolate: true}))
	ctx := context.Background()
	want := []byte("ping\r\nping\r\n")
	b.Run("start", func(b *testing.B) {
		p, err := ws.Start(ctx, &backend.StartRequest{Request: backend.Request{Command: "exec cat"}, TTY: &backend.TermSize{Rows: 24, Cols: 80}})
		if err != nil {
			b.Fatal(err)
		}
		defer func() { p.Signal(os.Kill); <-p.Done() }()
		var cursor int64
		for b.Loop() {
			p.Input().Write([]byte("ping\n"))
			var got []byte
			for !bytes.Contains(got, want) {
				c, err := p.Output().Wait(ctx, cursor, 0)
				if err != nil || c.Closed && c.Next == c.Total {
					b.Fatalf("output ended: %v %q", err, got)
				}
				got = append(got, c.Data...)
				cursor = c.Next
			}
		}
	})
	b.Run("docker-exec-it", func(b *testing.B) {
		cmd := exec.Command("docker", "exec", "-it", ws.Info().ID, "cat")
		f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
		if err != nil {
			b.Skipf("docker exec -it on a terminal: %v", err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait(); f.Close() }()
		buf := make([]byte, 4096)
		for b.Loop() {
			f.Write([]byte("ping\n"))
			var got []byte
			for !bytes.Contains(got, want) {
				n, err := f.Read(buf)
				if err != nil {
					b.Fatalf("read: %v %q", err, got)
				}
				got = append(got, buf[:n]...)
			}
		}
	})
}
