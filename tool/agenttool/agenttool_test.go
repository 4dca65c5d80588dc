package agenttool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/agenttool"
	"github.com/paigasus/helikon/tool/functiontool"
)

type App = struct{}

// selfSource gives an agent itself as a tool, for the recursion test.
type selfSource struct{ a *llmagent.Agent[App] }

func (s *selfSource) Tools(context.Context) ([]helikon.Tool[App], error) {
	t, err := agenttool.New[App](s.a, &agenttool.Options{Name: "delegate"})
	if err != nil {
		return nil, err
	}
	return []helikon.Tool[App]{t}, nil
}

func TestDepthLimitStopsARecursiveAgent(t *testing.T) {
	for _, limit := range []int{0, 3} {
		want := limit
		if want == 0 {
			want = helikon.DefaultMaxAgentDepth
		}
		var maxDepth atomic.Int64
		probe := functiontool.Must(functiontool.New("probe", "Report the depth.", func(tc *helikon.ToolContext[App], _ struct{}) (int, error) {
			d := int64(tc.AgentDepth())
			for {
				m := maxDepth.Load()
				if d <= m || maxDepth.CompareAndSwap(m, d) {
					break
				}
			}
			return int(d), nil
		}, &functiontool.Options{Effect: helikon.EffectReadOnly}))
		m := &agenttest.Model{Func: func(req *model.Request) agenttest.Reply {
			if res := agenttest.LastToolResults(req); res != nil {
				if len(res) == 1 {
					return agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("", "delegate", `{"request":"go deeper"}`), agenttest.Call("", "probe", `{}`)}}
				}
				return agenttest.Reply{Text: "unwound: " + res[0].Content}
			}
			return agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("", "probe", `{}`)}}
		}}
		src := &selfSource{}
		a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "recursive", Model: m, Tools: []helikon.Tool[App]{probe}, ToolSources: []llmagent.ToolSource[App]{src}}))
		src.a = a
		r, _ := runner.New(runner.Config[App]{Agent: a, MaxAgentDepth: limit})
		res, err := agent.Collect(r.Run(context.Background(), "", "start"))
		if err != nil {
			t.Fatal(err)
		}
		if got := maxDepth.Load(); got != int64(want) {
			t.Errorf("limit %d: deepest agent at depth %d, want %d", limit, got, want)
		}
		if !strings.Contains(res.Text, "maximum agent depth exceeded") {
			t.Errorf("limit %d: the model was not told about the depth limit: %s", limit, res.Text)
		}
	}
}

func TestSubAgentRunsUnderTheParentsPermissions(t *testing.T) {
	write := functiontool.Must(functiontool.New("Write", "Write.", func(tc *helikon.ToolContext[App], _ struct{}) (string, error) {
		tc.State().Set("wrote", true)
		return "written", nil
	}, &functiontool.Options{Effect: helikon.EffectWrite}))
	subModel := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("w", "Write", `{}`)}}, agenttest.Reply{Text: "sub answer"})
	sub := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "helper", Description: "Helps.", Model: subModel, Tools: []helikon.Tool[App]{write}}))
	parentModel := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("h", "helper", `{"request":"write it"}`)}}, agenttest.Reply{Text: "parent answer"})
	parent := llmagent.Must(llmagent.NewBuilder[App]().Name("parent").Model(parentModel).SubAgent(sub).Build())

	// A deny rule of the run stops the sub-agent's Write: the sub-agent
	// runs under the parent's pipeline.
	perms := &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("Write")}}
	r, _ := runner.New(runner.Config[App]{Agent: parent, Permissions: perms})
	if _, err := agent.Collect(r.Run(context.Background(), "s", "go")); err != nil {
		t.Fatal(err)
	}
	if !agenttest.Contains(subModel.Requests()[1], "denied by rule Write") {
		t.Error("the sub-agent's write was not denied by the run's rule")
	}
	if req := subModel.Requests()[0]; len(req.Messages) != 1 || req.Messages[0].Text != "write it" {
		t.Errorf("sub-agent conversation = %+v", req.Messages)
	}
	var out struct{ Response string }
	res := agenttest.LastToolResults(parentModel.Requests()[1])
	if err := json.Unmarshal([]byte(res[0].Content), &out); err != nil || out.Response != "sub answer" {
		t.Errorf("tool result = %+v", res)
	}
}

func TestInvokeOutsideARun(t *testing.T) {
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "x", Model: agenttest.New()}))
	tool, _ := agenttool.New[App](a, nil)
	tc := helikon.NewToolContext(context.Background(), App{}, nil)
	if _, err := tool.Invoke(tc, json.RawMessage(`{"request":"hi"}`)); err == nil {
		t.Fatal("ran without an invocation")
	}
	if _, err := tool.Invoke(tc, json.RawMessage(`{"request":""}`)); !errors.Is(err, helikon.ErrInvalidArgs) {
		t.Fatalf("empty request: %v", err)
	}
}
