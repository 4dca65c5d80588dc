package runner_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/session"
)

type noop struct{ helikon.ToolInfo }

func (noop) Invoke(*helikon.ToolContext[struct{}], json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`{}`), nil
}

var noopTool = &noop{helikon.ToolInfo{ToolName: "noop", ToolDescription: "does nothing", InputSchema: &jsonschema.Schema{Type: "object"}, ToolEffect: helikon.EffectReadOnly}}

// benchTurns is the number of tool-call turns per run in the benchmarks.
const benchTurns = 10

func benchAgent(b *testing.B) *llmagent.Agent[struct{}] {
	call := []model.ToolCall{{ID: "c", Name: "noop", Args: json.RawMessage(`{}`)}}
	m := &agenttest.Model{NoRecord: true, Func: func(req *model.Request) agenttest.Reply {
		if len(req.Messages) > 2*benchTurns {
			return agenttest.Reply{Text: "done"}
		}
		return agenttest.Reply{ToolCalls: call}
	}}
	return llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "bench", Model: m, Tools: []helikon.Tool[struct{}]{noopTool}}))
}

// BenchmarkRunnerToolTurn measures the runner's overhead per tool-call turn:
// a run of benchTurns turns, each calling a no-op tool, through the scripted
// in-process model, the permission pipeline (no rules, guards on), event
// emission and session persistence to the in-memory store (JSON encoding
// included). ns/turn and allocs/turn divide by the number of model turns.
func BenchmarkRunnerToolTurn(b *testing.B) {
	r, err := runner.New(runner.Config[struct{}]{Agent: benchAgent(b)})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		for _, err := range r.Run(ctx, "", "go") {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	turns := float64(b.N * (benchTurns + 1))
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/turns, "ns/turn")
}

// BenchmarkAgentToolTurn is BenchmarkRunnerToolTurn without the runner and
// its store: the LLM agent's loop alone.
func BenchmarkAgentToolTurn(b *testing.B) {
	a := benchAgent(b)
	ctx := context.Background()
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		rc := helikon.NewRunContext(struct{}{}, nil)
		inv := agent.NewInvocation(rc, &agent.InvocationConfig{History: []model.Message{model.UserMessage("go")}})
		for _, err := range a.Run(ctx, inv) {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N*(benchTurns+1)), "ns/turn")
}

// BenchmarkMemoryStoreIdleSession measures the memory an idle session of
// two turns (prompt, tool call, tool result, answer) holds in the in-memory
// store: bytes/session is the heap growth divided by the sessions stored.
func BenchmarkMemoryStoreIdleSession(b *testing.B) {
	msgs := []model.Message{
		model.UserMessage("How much did I spend on dining in October?"),
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "call_1", Name: "lookup_spending", Args: json.RawMessage(`{"category":"Dining","month":"2026-10"}`)}}},
		{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "call_1", Name: "lookup_spending", Content: `{"total":312.4,"count":18}`}}},
		{Role: model.RoleAssistant, Text: "You spent $312.40 on dining in October, over 18 transactions."},
	}
	state := map[string]any{"fetches": 1}
	ctx := context.Background()
	b.ReportAllocs()
	const n = 1000
	for b.Loop() {
		before := heapInUse()
		s := session.NewMemory()
		for i := range n {
			if err := s.Append(ctx, "s"+itoa(i), msgs, state); err != nil {
				b.Fatal(err)
			}
		}
		after := heapInUse()
		b.ReportMetric(float64(after-before)/n, "bytes/session")
		keep(s)
	}
}
