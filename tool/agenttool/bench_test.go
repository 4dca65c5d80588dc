package agenttool_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/agenttool"
)

type noop struct{ helikon.ToolInfo }

func (noop) Invoke(*helikon.ToolContext[App], json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

// BenchmarkSubAgentRun measures a run whose agent delegates once to a
// sub-agent that calls a no-op tool and answers: 4 model calls (scripted, in
// process), 2 tool calls, 8 sub-agent events. "forwarded" passes the
// sub-agent's events to the parent's stream, "private" (NoForward) drains
// them inside the tool as before; the difference is the cost of forwarding,
// reported per forwarded event.
func BenchmarkSubAgentRun(b *testing.B) {
	tool := &noop{helikon.ToolInfo{ToolName: "noop", ToolDescription: "does nothing", InputSchema: &jsonschema.Schema{Type: "object"}, ToolEffect: helikon.EffectReadOnly}}
	subCall := []model.ToolCall{agenttest.Call("n", "noop", `{}`)}
	parentCall := []model.ToolCall{agenttest.Call("h", "helper", `{"request":"go"}`)}
	script := func(call []model.ToolCall) *agenttest.Model {
		return &agenttest.Model{NoRecord: true, Func: func(req *model.Request) agenttest.Reply {
			if agenttest.LastToolResults(req) != nil {
				return agenttest.Reply{Text: "done"}
			}
			return agenttest.Reply{ToolCalls: call}
		}}
	}
	for _, bc := range []struct {
		name      string
		noForward bool
	}{{"forwarded", false}, {"private", true}} {
		b.Run(bc.name, func(b *testing.B) {
			helper := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "helper", Model: script(subCall), Tools: []helikon.Tool[App]{tool}}))
			at, err := agenttool.New[App](helper, &agenttool.Options{NoForward: bc.noForward, Effect: helikon.EffectReadOnly})
			if err != nil {
				b.Fatal(err)
			}
			parent := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "parent", Model: script(parentCall), Tools: []helikon.Tool[App]{at}}))
			r, _ := runner.New(runner.Config[App]{Agent: parent, Logger: slog.New(slog.DiscardHandler)})
			ctx := context.Background()
			forwarded := 0
			b.ReportAllocs()
			for b.Loop() {
				forwarded = 0
				for ev, err := range r.Run(ctx, "", "go") {
					if err != nil {
						b.Fatal(err)
					}
					if ev.Forwarded() {
						forwarded++
					}
				}
			}
			b.ReportMetric(float64(forwarded), "fwd-events/op")
		})
	}
}
