package agenttool_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/agenttool"
	"github.com/paigasus/helikon/tool/functiontool"
)

func ExampleNew() {
	researcher := llmagent.Must(llmagent.New(llmagent.Config[App]{
		Name: "researcher", Description: "Answers factual questions.",
		Model: agenttest.New(agenttest.Reply{Text: "Paris"}),
	}))
	tool, _ := agenttool.New[App](researcher, nil)
	lead := llmagent.Must(llmagent.New(llmagent.Config[App]{
		Name: "lead",
		Model: agenttest.New(
			agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("c1", "researcher", `{"request":"What is the capital of France?"}`)}},
			agenttest.Reply{Text: "The capital of France is Paris."},
		),
		Tools: []helikon.Tool[App]{tool},
	}))
	r, _ := runner.New(runner.Config[App]{Agent: lead})
	res, _ := agent.Collect(r.Run(context.Background(), "", "Capital of France?"))
	for _, e := range res.Events {
		if e.Kind == agent.EventToolResult {
			fmt.Println(e.ToolResult.Content)
		}
	}
	fmt.Println(res.Text)
	// Output:
	// {"response":"Paris"}
	// The capital of France is Paris.
}

// Example_forwardedEvents shows a sub-agent's activity in the parent's event
// stream: its events keep the sub-agent's name and depth and carry the id of
// the call that started it, and they all come before that call's result.
func Example_forwardedEvents() {
	lookup := functiontool.Must(functiontool.New("lookup", "Look a capital up.", func(_ *helikon.ToolContext[App], in struct {
		Country string `json:"country"`
	}) (string, error) {
		return "Paris", nil
	}, &functiontool.Options{Effect: helikon.EffectReadOnly}))
	researcher := llmagent.Must(llmagent.New(llmagent.Config[App]{
		Name: "researcher", Description: "Answers factual questions.",
		Model: agenttest.New(
			agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("r1", "lookup", `{"country":"France"}`)}},
			agenttest.Reply{Text: "Paris"},
		),
		Tools: []helikon.Tool[App]{lookup},
	}))
	lead := llmagent.Must(llmagent.New(llmagent.Config[App]{
		Name: "lead",
		Model: agenttest.New(
			agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("c1", "researcher", `{"request":"What is the capital of France?"}`)}},
			agenttest.Reply{Text: "The capital of France is Paris."},
		),
		SubAgents: []agent.Agent[App]{researcher},
	}))
	r, _ := runner.New(runner.Config[App]{Agent: lead})
	for ev, err := range r.Run(context.Background(), "", "Capital of France?") {
		if err != nil {
			fmt.Println(err)
			return
		}
		switch ev.Kind {
		case agent.EventToolCall, agent.EventToolResult:
			fmt.Printf("%*s%s %s %s path=%v\n", 2*ev.Depth, "", ev.Agent, ev.Kind, ev.ToolCall.Name, ev.Path)
		case agent.EventRunCompleted:
			fmt.Printf("%s (%d model calls)\n", ev.Text, ev.Usage.Requests)
		}
	}
	// Output:
	// lead tool_call researcher path=[]
	//   researcher tool_call lookup path=[c1]
	//   researcher tool_result lookup path=[c1]
	// lead tool_result researcher path=[]
	// The capital of France is Paris. (4 model calls)
}
