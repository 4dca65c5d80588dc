package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/provider/openai/openaitest"
)

// TestExploresWithFileToolsAndBashDenied: the allowed read-only command
// runs in the OS sandbox, the command no rule allows is denied (no one to
// ask), the file tools change the directory.
func TestExploresWithFileToolsAndBashDenied(t *testing.T) {
	if s := ossandbox.Probe(); !s.Available {
		t.Skipf("no OS sandbox: %s", s.Reason)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("buy milk\ncall mum\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := openaitest.NewServer(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "c1", Name: "Read", Args: `{"path":"notes.txt"}`},
			{ID: "c2", Name: "Bash", Args: `{"command":"touch pwned"}`},
			{ID: "c4", Name: "Bash", Args: `{"command":"wc -l notes.txt"}`},
		}},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c3", Name: "Write", Args: `{"path":"SUMMARY.md","content":"- milk\n- mum\n"}`}}},
		openaitest.Reply{Text: "Wrote SUMMARY.md."},
	)
	defer srv.Close()
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.BaseURL()}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{dir, "summarise"}, &out, &errb, func(k string) string { return env[k] }); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "SUMMARY.md")); string(got) != "- milk\n- mum\n" {
		t.Errorf("SUMMARY.md = %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); !os.IsNotExist(err) {
		t.Error("the denied Bash command ran")
	}
	if !strings.Contains(errb.String(), "denied: Bash") || !strings.Contains(out.String(), "Wrote SUMMARY.md.") {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
	second := string(srv.Requests()[1].Raw)
	if !strings.Contains(second, "buy milk") || !strings.Contains(second, "2 notes.txt") || !strings.Contains(second, "there is no one to ask") {
		t.Errorf("the model was not told the file content, the command's output and the denial: %s", second)
	}
}
