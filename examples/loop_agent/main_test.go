package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/paigasus/helikon/provider/openai/openaitest"
)

func TestLoopStopsWhenTheToolEscalates(t *testing.T) {
	srv := openaitest.NewServer(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "submit_haiku", Args: `{"lines":["autumn rain","falls"]}`}}},
		openaitest.Reply{Text: "I will fix it."},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "submit_haiku", Args: `{"lines":["autumn rain falls","on the quiet temple roof","a crow shakes its wings"]}`}}},
		openaitest.Reply{Text: "Accepted."},
	)
	defer srv.Close()
	env := map[string]string{"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.BaseURL()}
	var out, errb bytes.Buffer
	if code := run(context.Background(), nil, &out, &errb, func(k string) string { return env[k] }); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if want := "autumn rain falls\non the quiet temple roof\na crow shakes its wings\n"; out.String() != want {
		t.Errorf("stdout %q", out.String())
	}
	if n := len(srv.Requests()); n != 4 {
		t.Errorf("%d model calls, want 4: the loop must stop after the escalating iteration", n)
	}
}
