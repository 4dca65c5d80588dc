package einoadapter_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	efs "github.com/cloudwego/eino/adk/filesystem"
	"github.com/paigasus/helikon/adapters/einoadapter"
	"github.com/paigasus/helikon/toolbox"
)

// benchToolbox is a toolbox on a directory holding a small file, with the
// host backend: the benchmarks measure the adapter, not a backend.
func benchToolbox(b *testing.B) *toolbox.Toolbox[struct{}] {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	tb, err := toolbox.New[struct{}](context.Background(), &toolbox.Options{Root: dir, Uncontained: true, DeferAsks: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tb.Close() })
	return tb
}

// BenchmarkReadDirect is a Read through the pipeline by Toolbox.Call.
func BenchmarkReadDirect(b *testing.B) {
	tb := benchToolbox(b)
	ctx := context.Background()
	args := json.RawMessage(`{"path":"a.txt"}`)
	for b.Loop() {
		if _, err := tb.Call(ctx, struct{}{}, "Read", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadBackend is the same Read through the eino backend (what
// eino's read_file tool calls).
func BenchmarkReadBackend(b *testing.B) {
	be, err := einoadapter.New(benchToolbox(b))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	req := &efs.ReadRequest{FilePath: "/a.txt"}
	for b.Loop() {
		if _, err := be.Read(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
}
