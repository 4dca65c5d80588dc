package agenttool_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/agenttool"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
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
			agenttest.Reply{ToolCalls: []helikon.ToolCall{agenttest.Call("c1", "researcher", `{"request":"What is the capital of France?"}`)}},
			agenttest.Reply{Text: "The capital of France is Paris."},
		),
		Tools: []helikon.Tool[App]{tool},
	}))
	r, _ := runner.New(runner.Config[App]{Agent: lead})
	res, _ := helikon.Collect(r.Run(context.Background(), "", "Capital of France?"))
	for _, e := range res.Events {
		if e.Kind == helikon.EventToolResult {
			fmt.Println(e.ToolResult.Content)
		}
	}
	fmt.Println(res.Text)
	// Output:
	// {"response":"Paris"}
	// The capital of France is Paris.
}
