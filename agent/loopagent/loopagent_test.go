package loopagent_test

import (
	"context"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/loopagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/functiontool"
)

type App = struct{}

type empty struct{}

type progress struct {
	Step int64 `json:"step"`
}

// stepTool counts steps in the run state and escalates at escalateAt.
func stepTool(escalateAt int64) helikon.Tool[App] {
	return functiontool.Must(functiontool.New("step", "Do one step of the work.",
		func(tc *helikon.ToolContext[App], _ empty) (progress, error) {
			n, _, err := tc.State().IncrementIfBelow("steps", 1000)
			if err != nil {
				return progress{}, err
			}
			if n == escalateAt {
				tc.Actions().Escalate()
			}
			return progress{Step: n}, nil
		}, nil))
}

// worker calls step once per run, then answers.
func worker(name string, tools ...helikon.Tool[App]) (*llmagent.Agent[App], *agenttest.Model) {
	m := &agenttest.Model{Func: func(req *model.Request) agenttest.Reply {
		if len(tools) > 0 && req.Messages[len(req.Messages)-1].Role != model.RoleTool {
			return agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("", "step", `{}`)}}
		}
		return agenttest.Reply{Text: name + " done"}
	}}
	return llmagent.Must(llmagent.New(llmagent.Config[App]{Name: name, Model: m, Tools: tools})), m
}

func TestLoopStopsAfterTheIterationThatEscalated(t *testing.T) {
	w, wm := worker("worker", stepTool(3))
	reviewer, rm := worker("reviewer")
	loop, err := loopagent.New(loopagent.Config[App]{Name: "loop", SubAgents: []agent.Agent[App]{w, reviewer}, MaxIterations: 10})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := runner.New(runner.Config[App]{Agent: loop})
	res, err := agent.Collect(r.Run(context.Background(), "", "work"))
	if err != nil {
		t.Fatal(err)
	}
	if wm.Calls() != 6 {
		t.Errorf("worker model called %d times, want 6 (3 iterations × 2 turns)", wm.Calls())
	}
	if rm.Calls() != 3 {
		t.Errorf("reviewer ran %d times, want 3: the escalating iteration completes", rm.Calls())
	}
	if res.Text != "reviewer done" {
		t.Errorf("text = %q", res.Text)
	}
	// The conversation is shared: the reviewer saw the worker's answers.
	last := rm.Requests()[2]
	if !agenttest.Contains(last, "worker done") {
		t.Errorf("reviewer did not see the worker's answer")
	}
	for _, e := range res.Events {
		if e.Kind == agent.EventTurnStarted && e.Depth != 1 {
			t.Errorf("sub-agent event at depth %d, want 1", e.Depth)
		}
	}
}

func TestLoopStopsAtMaxIterations(t *testing.T) {
	w, wm := worker("worker", stepTool(-1))
	loop, _ := loopagent.New(loopagent.Config[App]{Name: "loop", SubAgents: []agent.Agent[App]{w}, MaxIterations: 4})
	r, _ := runner.New(runner.Config[App]{Agent: loop})
	if _, err := agent.Collect(r.Run(context.Background(), "", "work")); err != nil {
		t.Fatal(err)
	}
	if wm.Calls() != 8 {
		t.Errorf("model called %d times, want 8", wm.Calls())
	}
}

func TestNestedLoopEscalationStopsOnlyTheInnerLoop(t *testing.T) {
	w, wm := worker("worker", stepTool(2))
	inner, _ := loopagent.New(loopagent.Config[App]{Name: "inner", SubAgents: []agent.Agent[App]{w}, MaxIterations: 5})
	outer, _ := loopagent.New(loopagent.Config[App]{Name: "outer", SubAgents: []agent.Agent[App]{inner}, MaxIterations: 2})
	r, _ := runner.New(runner.Config[App]{Agent: outer})
	if _, err := agent.Collect(r.Run(context.Background(), "", "work")); err != nil {
		t.Fatal(err)
	}
	// Outer iteration 1: inner escalates at step 2. Outer iteration 2: the
	// counter passed 2, so the inner loop runs its 5 iterations.
	if got, want := wm.Calls(), 2*(2+5); got != want {
		t.Errorf("worker model called %d times, want %d", got, want)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := loopagent.New(loopagent.Config[App]{Name: "x"}); err == nil {
		t.Error("a loop without sub-agents was built")
	}
}
