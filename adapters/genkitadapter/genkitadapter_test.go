package genkitadapter_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/adapters/genkitadapter"
	"github.com/paigasus/helikon/internal/adaptertest"
	"github.com/paigasus/helikon/toolbox"
)

// TestGenerateLoopDeniesAsksAndContains drives Genkit's own generate loop
// with a scripted model, in the OS sandbox and in a Docker workspace: a
// Bash call a deny rule stops stays denied, a Write lands, and a Bash call
// the policy asks about interrupts the generation, is approved through
// Genkit's restart, and runs contained (its effect is on disk, and
// Where.Check finds the marks of its containment).
func TestGenerateLoopDeniesAsksAndContains(t *testing.T) {
	for _, w := range adaptertest.Wheres {
		t.Run(w.Name, func(t *testing.T) { testGenerateLoop(t, w) })
	}
}

func testGenerateLoop(t *testing.T, w adaptertest.Where) {
	ctx := context.Background()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "keep.txt"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := &toolbox.Options{
		Root: root, DeferAsks: true,
		Mode: helikon.ModeAcceptEdits,
		Deny: helikon.MustParseRules("Bash(rm)"),
	}
	w.Open(t, root, opts)
	tb, err := toolbox.New[struct{}](ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	ts, err := genkitadapter.New(tb)
	if err != nil {
		t.Fatal(err)
	}
	g := genkit.Init(ctx)
	model := defineScripted(g, []call{
		{"Bash", `{"command":"rm keep.txt"}`},
		{"Write", `{"path":"w.txt","content":"written"}`},
		{"Bash", `{"command":"` + adaptertest.Command + `"}`},
	})
	resp, err := genkit.Generate(ctx, g, ai.WithModel(model), ai.WithPrompt("go"), ai.WithTools(ts.Tools()...))
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != ai.FinishReasonInterrupted || len(resp.Interrupts()) != 1 {
		t.Fatalf("finish %s with %d interrupts, want the asked Bash call interrupted", resp.FinishReason, len(resp.Interrupts()))
	}
	p := resp.Interrupts()[0]
	q, ok := ai.InterruptAs[toolbox.Question](p)
	if !ok || q.Tool != "Bash" || !strings.Contains(string(q.Args), "touch made.txt") {
		t.Fatalf("interrupt question = %+v, %v", q, ok)
	}
	if _, err := os.Stat(filepath.Join(root, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("the asked command ran before its answer: %v", err)
	}
	// A restart without the adapter's answer is asked again, never run.
	plain := ts.Tools()[0].(ai.Tool).Restart(p, nil)
	again, err := genkit.Generate(ctx, g, ai.WithModel(model), ai.WithMessages(resp.History()...), ai.WithTools(ts.Tools()...), ai.WithToolRestarts(plain))
	// Genkit v1.4.0 ends a restart that interrupts again with an error
	// (ai/generate.go, handleResumeOption).
	if err == nil && again.FinishReason != ai.FinishReasonInterrupted {
		t.Fatalf("a restart without an answer finished %s, want interrupted again", again.FinishReason)
	}
	if _, err := os.Stat(filepath.Join(root, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("a restart without an answer ran the command: %v", err)
	}
	answer, err := ts.Answer(p, toolbox.Yes)
	if err != nil {
		t.Fatal(err)
	}
	final, err := genkit.Generate(ctx, g, ai.WithModel(model), ai.WithMessages(resp.History()...), ai.WithTools(ts.Tools()...), ai.WithToolRestarts(answer))
	if err != nil {
		t.Fatal(err)
	}
	if final.FinishReason != ai.FinishReasonStop {
		t.Fatalf("resumed generation finished %s: %s", final.FinishReason, final.Text())
	}
	text := final.Text()
	if !strings.Contains(text, `0 Bash: {"error":"denied:`) {
		t.Errorf("the denied rm did not reach the model as a denial:\n%s", text)
	}
	if b, err := os.ReadFile(filepath.Join(root, "keep.txt")); err != nil || string(b) != "keep" {
		t.Errorf("keep.txt after the denied rm: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "w.txt")); err != nil || string(b) != "written" {
		t.Errorf("the Write did not land: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(root, "made.txt")); err != nil {
		t.Errorf("the approved command did not run: %v\n%s", err, text)
	}
	w.Check(t, root)
}
