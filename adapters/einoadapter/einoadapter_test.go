package einoadapter_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cloudwego/eino/adk"
	"github.com/cloudwego/eino/adk/middlewares/filesystem"
	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/adapters/einoadapter"
	"github.com/paigasus/helikon/internal/adaptertest"
	"github.com/paigasus/helikon/toolbox"
)

// newRunner builds eino's ChatModelAgent with the filesystem middleware
// over a backend on tb, and its Runner with a checkpoint store.
func newRunner(tb *toolbox.Toolbox[struct{}], calls []call) (*adk.Runner, error) {
	ctx := context.Background()
	be, err := einoadapter.New(tb)
	if err != nil {
		return nil, err
	}
	fsmw, err := filesystem.NewMiddleware(ctx, &filesystem.Config{Backend: be, WithoutLargeToolResultOffloading: true})
	if err != nil {
		return nil, err
	}
	agent, err := adk.NewChatModelAgent(ctx, &adk.ChatModelAgentConfig{
		Name: "coder", Description: "edits files", Instruction: "help",
		Model:       &scripted{calls: calls},
		Middlewares: []adk.AgentMiddleware{fsmw, einoadapter.Middleware()},
	})
	if err != nil {
		return nil, err
	}
	return adk.NewRunner(ctx, adk.RunnerConfig{Agent: agent, CheckPointStore: &store{}}), nil
}

// TestRunnerDeniesAsksAndContains drives eino's own Runner and
// ChatModelAgent with a scripted model, in the OS sandbox and in a Docker
// workspace: an execute a deny rule stops stays denied (and the model
// reads why), a write_file lands, and an execute the policy asks about
// interrupts the run, is approved through eino's targeted resume, and runs
// contained (its effect is on disk, and Where.Check finds the marks of
// its containment).
func TestRunnerDeniesAsksAndContains(t *testing.T) {
	for _, w := range adaptertest.Wheres {
		t.Run(w.Name, func(t *testing.T) { testRunner(t, w) })
	}
}

func testRunner(t *testing.T, w adaptertest.Where) {
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
	r, err := newRunner(tb, []call{
		{"execute", `{"command":"rm keep.txt"}`},
		{"write_file", `{"file_path":"/w.txt","content":"written"}`},
		{"execute", `{"command":"` + adaptertest.Command + `"}`},
	})
	if err != nil {
		t.Fatal(err)
	}
	_, ints, err := drain(r.Query(ctx, "go", adk.WithCheckPointID("s1")))
	if err != nil {
		t.Fatal(err)
	}
	if len(ints) != 1 {
		t.Fatalf("%d interrupts, want the asked execute", len(ints))
	}
	q, ok := ints[0].Info.(*toolbox.Question)
	if !ok || q.Tool != "Bash" || !strings.Contains(string(q.Args), "touch made.txt") {
		t.Fatalf("interrupt info = %#v", ints[0].Info)
	}
	if _, err := os.Stat(filepath.Join(root, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("the asked command ran before its answer: %v", err)
	}
	it, err := r.ResumeWithParams(ctx, "s1", &adk.ResumeParams{Targets: map[string]any{ints[0].ID: toolbox.Yes}})
	if err != nil {
		t.Fatal(err)
	}
	text, ints, err := drain(it)
	if err != nil || len(ints) != 0 {
		t.Fatalf("resumed run: %v, %d interrupts", err, len(ints))
	}
	if !strings.Contains(text, "0 execute: error: denied:") {
		t.Errorf("the denied rm did not reach the model as a denial:\n%s", text)
	}
	if b, err := os.ReadFile(filepath.Join(root, "keep.txt")); err != nil || string(b) != "keep" {
		t.Errorf("keep.txt after the denied rm: %q, %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "w.txt")); err != nil || string(b) != "written" {
		t.Errorf("the write_file did not land: %q, %v\n%s", b, err, text)
	}
	if _, err := os.Stat(filepath.Join(root, "made.txt")); err != nil {
		t.Errorf("the approved command did not run: %v\n%s", err, text)
	}
	w.Check(t, root)
}
