package filetool_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/filetool"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/fsroot"
	"github.com/paigasus/helikon/workspace/local"
)

// makeLineFile writes a file of n lines of exactly width bytes each (newline
// included): "%09d" followed by x's.
func makeLineFile(tb testing.TB, p string, n, width int) {
	tb.Helper()
	f, err := os.Create(p)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	line := make([]byte, width)
	for i := range line {
		line[i] = 'x'
	}
	line[width-1] = '\n'
	for i := 1; i <= n; i++ {
		d := strconv.AppendInt(line[:0], int64(i), 10)
		copy(line[9-len(d):], d)
		for j := 0; j < 9-len(d); j++ {
			line[j] = '0'
		}
		w.Write(line[:width])
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// cpuTime returns the CPU time (user and system) this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per iteration since start. On a shared
// machine the wall-clock ns/op includes waiting for a CPU; this does not.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
}

// peakHeap runs f while sampling the heap in use, and returns the largest
// growth over the heap in use before f started.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var max uint64
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > base && ms.HeapAlloc-base > max {
				max = ms.HeapAlloc - base
			}
			select {
			case <-done:
				peak <- max
				return
			default:
			}
		}
	}()
	f()
	close(done)
	return <-peak
}

// BenchmarkReadWindow1GB reads lines 1,000,000 to 1,002,000 of a 1 GB file
// of 100-byte lines (10,000,000 lines; the window starts 100 MB in). It
// reports the time per read, the bytes allocated per read and, measured
// separately, the peak heap growth during one read. The file is generated
// once; the first read warms the page cache.
func BenchmarkReadWindow1GB(b *testing.B) {
	if testing.Short() {
		b.Skip("generates a 1 GB file; skipped under -short")
	}
	dir := b.TempDir()
	makeLineFile(b, filepath.Join(dir, "big.txt"), 10_000_000, 100)
	sb, err := fsroot.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	read := filetool.NewRead[app](local.NewFS(sb), nil)
	tc := helikon.NewToolContext(context.Background(), app{}, nil)
	args := json.RawMessage(`{"path":"big.txt","offset":1000000,"limit":2001}`)
	check := func(b *testing.B) {
		out, err := read.Invoke(tc, args)
		if err != nil {
			b.Fatal(err)
		}
		var res filetool.ReadResult
		json.Unmarshal(out, &res)
		if res.StartLine != 1_000_000 || res.EndLine != 1_002_000 || res.Content[:9] != "001000000" {
			b.Fatalf("wrong window: %d..%d %.20q", res.StartLine, res.EndLine, res.Content)
		}
	}
	b.Run("lines_1000000-1002000", func(b *testing.B) {
		check(b) // warm the page cache and check the result
		peak := peakHeap(func() { check(b) })
		b.ReportAllocs()
		cpu := cpuTime()
		for b.Loop() {
			if _, err := read.Invoke(tc, args); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
		b.ReportMetric(float64(peak), "peak-heap-B")
	})
}

// BenchmarkEdit50MB compares an Edit of one unique string in a 50 MB file
// (read, replace, write a temporary file, fsync, rename) with writing 50 MB
// with os.WriteFile (no fsync), and os.WriteFile followed by fsync.
func BenchmarkEdit50MB(b *testing.B) {
	dir := b.TempDir()
	const lines = 500_000 // of 100 bytes: 50 MB
	p := filepath.Join(dir, "big.txt")
	makeLineFile(b, p, lines, 100)
	content, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	sb, err := fsroot.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	edit := filetool.NewEdit[app](local.NewFS(sb), &filetool.EditOptions{MaxBytes: 64 << 20})
	tc := helikon.NewToolContext(context.Background(), app{}, nil)
	// Line 250000 is unique; swap it back and forth.
	args := []json.RawMessage{
		json.RawMessage(`{"path":"big.txt","old_string":"000250000xxx","new_string":"000250000yyy"}`),
		json.RawMessage(`{"path":"big.txt","old_string":"000250000yyy","new_string":"000250000xxx"}`),
	}
	b.Run("Edit", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		b.ReportAllocs()
		i := 0
		cpu := cpuTime()
		for b.Loop() {
			if _, err := edit.Invoke(tc, args[i%2]); err != nil {
				b.Fatal(err)
			}
			i++
		}
		reportCPU(b, cpu)
		if i%2 == 1 { // leave the file as it was for the next run
			edit.Invoke(tc, args[1])
		}
	})
	b.Run("os.WriteFile", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		cpu := cpuTime()
		for b.Loop() {
			if err := os.WriteFile(filepath.Join(dir, "plain.txt"), content, 0o644); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
	})
	b.Run("os.WriteFile+fsync", func(b *testing.B) {
		b.SetBytes(int64(len(content)))
		cpu := cpuTime()
		for b.Loop() {
			f, err := os.Create(filepath.Join(dir, "synced.txt"))
			if err != nil {
				b.Fatal(err)
			}
			f.Write(content)
			f.Sync()
			f.Close()
		}
		reportCPU(b, cpu)
	})
}

// BenchmarkSmallFileRoundTrip measures one call of each file tool on a small
// file the way a runner makes it (helikon.CallTool: the JSON check, the
// permission pipeline with its guards and an allow rule, the targets with
// their link resolution, the call, the output check): Read of a 40-line
// file, Write of 1 KiB, the two three directories down, and Edit of one
// line of the file.
func BenchmarkSmallFileRoundTrip(b *testing.B) {
	root := b.TempDir()
	sb, err := fsroot.Open(root)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sb.Close() })
	smallFileRoundTrips(b, root, benchFS(sb), func() func(*testing.B) {
		start := cpuTime()
		return func(b *testing.B) { reportCPU(b, start) }
	})
}

// smallFileRoundTrips runs the calls of BenchmarkSmallFileRoundTrip on
// fsys, whose root is root. measure starts the measurement of one tool's
// calls and returns what reports it.
func smallFileRoundTrips(b *testing.B, root string, fsys workspace.FS, measure func() func(*testing.B)) {
	var text []byte
	for i := range 40 {
		text = append(text, "line "+strconv.Itoa(i)+" of a small source file, about as long as code lines are\n"...)
	}
	if err := os.WriteFile(filepath.Join(root, "small.txt"), text, 0o644); err != nil {
		b.Fatal(err)
	}
	// The same file three directories down: what the walk of a path costs.
	nested := filepath.Join(root, "src", "pkg", "sub")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(nested, "small.txt"), text, 0o644); err != nil {
		b.Fatal(err)
	}
	perms := &helikon.Permissions{Allow: []helikon.Rule{helikon.MustParseRule("Read"), helikon.MustParseRule("Write"), helikon.MustParseRule("Edit")}}
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	for _, bc := range []struct {
		name string
		tool helikon.Tool[struct{}]
		args func(i int) json.RawMessage
	}{
		{"Read", filetool.NewRead[struct{}](fsys, nil), func(int) json.RawMessage {
			return json.RawMessage(`{"path":"small.txt"}`)
		}},
		{"Write", filetool.NewWrite[struct{}](fsys, nil), func(int) json.RawMessage {
			return json.RawMessage(`{"path":"out.txt","content":` + strconv.Quote(string(text[:1024])) + `}`)
		}},
		{"ReadNested", filetool.NewRead[struct{}](fsys, nil), func(int) json.RawMessage {
			return json.RawMessage(`{"path":"src/pkg/sub/small.txt"}`)
		}},
		{"WriteNested", filetool.NewWrite[struct{}](fsys, nil), func(int) json.RawMessage {
			return json.RawMessage(`{"path":"src/pkg/sub/out.txt","content":` + strconv.Quote(string(text[:1024])) + `}`)
		}},
		{"Edit", filetool.NewEdit[struct{}](fsys, nil), func(i int) json.RawMessage {
			// Alternate between two contents, so that every call edits.
			from, to := "line 7 of", "LINE 7 of"
			if i%2 == 1 {
				from, to = to, from
			}
			return json.RawMessage(`{"path":"small.txt","old_string":"` + from + `","new_string":"` + to + `"}`)
		}},
	} {
		// i outlives one run of the function below: the testing package
		// may run it more than once on the same file, and Edit must go
		// on alternating from where the file is.
		i := 0
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			report := measure()
			for b.Loop() {
				if _, err := helikon.CallTool(tc, perms, bc.tool, bc.args(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
			report(b)
		})
	}
}
