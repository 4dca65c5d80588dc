package agenttest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/model"
)

func TestScriptedModelStreamsAndRecords(t *testing.T) {
	m := agenttest.New(agenttest.Reply{Text: "hello", ToolCalls: []model.ToolCall{agenttest.Call("c", "lookup", `{"a":1}`)}, Usage: model.Usage{InputTokens: 4}})
	var text, name, args strings.Builder
	var resp *model.Response
	req := &model.Request{Messages: []model.Message{model.UserMessage("hi")}}
	for c, err := range m.Stream(context.Background(), req) {
		if err != nil {
			t.Fatal(err)
		}
		text.WriteString(c.Text)
		if c.ToolCall != nil {
			name.WriteString(c.ToolCall.Name)
			args.WriteString(c.ToolCall.ArgsFragment)
		}
		if c.Response != nil {
			resp = c.Response
		}
	}
	if text.String() != "hello" || name.String() != "lookup" || args.String() != `{"a":1}` {
		t.Errorf("deltas %q %q %q", text.String(), name.String(), args.String())
	}
	if resp.StopReason != model.StopToolCalls || resp.Usage.Requests != 1 || resp.Usage.InputTokens != 4 {
		t.Errorf("response %+v", resp)
	}
	if len(m.Requests()) != 1 || m.Requests()[0].Messages[0].Text != "hi" {
		t.Errorf("requests %+v", m.Requests())
	}
	if _, err := model.Generate(context.Background(), m, req); !errors.Is(err, agenttest.ErrScriptExhausted) {
		t.Errorf("exhausted script: %v", err)
	}
}
