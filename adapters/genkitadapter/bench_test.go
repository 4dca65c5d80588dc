package genkitadapter_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/paigasus/helikon/adapters/genkitadapter"
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

// BenchmarkReadGenkitTool is the same Read as a Genkit tool (RunRaw: the
// action Genkit's generate loop runs for a tool request).
func BenchmarkReadGenkitTool(b *testing.B) {
	tb := benchToolbox(b)
	ts, err := genkitadapter.New(tb)
	if err != nil {
		b.Fatal(err)
	}
	var read ai.Tool
	for _, r := range ts.Tools() {
		if r.Name() == "Read" {
			read = r.(ai.Tool)
		}
	}
	ctx := context.Background()
	in := map[string]any{"path": "a.txt"}
	for b.Loop() {
		out, err := read.RunRaw(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		if m, ok := out.(map[string]any); ok && m["error"] != nil {
			b.Fatal(m["error"])
		}
	}
}
