package llmagent_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/functiontool"
)

type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

func ExampleBuilder() {
	add := functiontool.Must(functiontool.New("add", "Add two numbers.",
		func(_ *helikon.ToolContext[struct{}], in addArgs) (float64, error) { return in.A + in.B, nil },
		&functiontool.Options{Effect: helikon.EffectReadOnly}))
	// A scripted model stands in for a provider such as openai.New.
	llm := agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("c1", "add", `{"a":19.99,"b":4.5}`)}},
		agenttest.Reply{Text: "The total is 24.49."},
	)
	assistant, err := llmagent.NewBuilder[struct{}]().
		Name("calculator").
		Model(llm).
		Instructions("Use the add tool for arithmetic.").
		Tool(add).
		Build()
	if err != nil {
		panic(err)
	}
	r, _ := runner.New(runner.Config[struct{}]{Agent: assistant})
	for ev, err := range r.Run(context.Background(), "", "What is 19.99 + 4.5?") {
		if err != nil {
			panic(err)
		}
		switch ev.Kind {
		case agent.EventToolResult:
			fmt.Println("tool", ev.ToolCall.Name, "->", ev.ToolResult.Content)
		case agent.EventRunCompleted:
			fmt.Println(ev.Text)
		}
	}
	// Output:
	// tool add -> 24.49
	// The total is 24.49.
}
