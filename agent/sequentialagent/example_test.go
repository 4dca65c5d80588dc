package sequentialagent_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/agent/sequentialagent"
)

func ExampleNew() {
	drafter := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "drafter", Model: agenttest.New(agenttest.Reply{Text: "Draft: hello wrld"})}))
	editor := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "editor", Model: agenttest.New(agenttest.Reply{Text: "Final: hello world"})}))
	pipeline, _ := sequentialagent.New(sequentialagent.Config[App]{Name: "write-then-edit", SubAgents: []agent.Agent[App]{drafter, editor}})
	r, _ := runner.New(runner.Config[App]{Agent: pipeline})
	res, _ := agent.Collect(r.Run(context.Background(), "", "Write a greeting."))
	for _, e := range res.Events {
		if e.Kind == agent.EventTurnCompleted {
			fmt.Println(e.Agent+":", e.Text)
		}
	}
	// Output:
	// drafter: Draft: hello wrld
	// editor: Final: hello world
}
