package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/paigasus/helikon/provider/openai/openaitest"
)

func TestRunsAgainstALocalOpenAIServer(t *testing.T) {
	srv := openaitest.NewServer(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{
			{ID: "call_1", Name: "lookup_spending", Args: `{"category":"Dining","month":"2026-10"}`},
			{ID: "call_2", Name: "budget_status", Args: `{"category":"Dining"}`},
		}},
		openaitest.Reply{Text: "You spent $312.40 of your $400 dining budget."},
	)
	defer srv.Close()
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.BaseURL()}
	var out, errb bytes.Buffer
	if code := run(context.Background(), nil, &out, &errb, func(k string) string { return env[k] }); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if strings.TrimSpace(out.String()) != "You spent $312.40 of your $400 dining budget." {
		t.Errorf("stdout %q", out.String())
	}
	second := string(srv.Requests()[1].Raw)
	if !strings.Contains(second, `\"total\":312.4`) || !strings.Contains(second, `\"limit\":400`) {
		t.Errorf("tool outputs did not reach the model: %s", second)
	}
}

func TestMissingKey(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run(context.Background(), nil, &out, &errb, func(string) string { return "" }); code != 1 || !strings.Contains(errb.String(), "OPENAI_API_KEY") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}
