package runner_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/session"
)

// A session is resumed by running again with its id: the model sees the
// earlier conversation.
func ExampleRunner_Run() {
	model := agenttest.New(agenttest.Reply{Text: "Nice to meet you, Ada."}, agenttest.Reply{Text: "You are Ada."})
	agent := llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "greeter", Model: model}))
	r, _ := runner.New(runner.Config[struct{}]{Agent: agent, Store: session.NewMemory()})
	ctx := context.Background()
	first, _ := helikon.Collect(r.Run(ctx, "", "I am Ada."))
	second, _ := helikon.Collect(r.Run(ctx, first.SessionID, "Who am I?"))
	fmt.Println(second.Text, len(model.Requests()[1].Messages))
	// Output: You are Ada. 3
}
