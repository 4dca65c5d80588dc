package runner_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/session"
)

// A session is resumed by running again with its id: the model sees the
// earlier conversation.
func ExampleRunner_Run() {
	llm := agenttest.New(agenttest.Reply{Text: "Nice to meet you, Ada."}, agenttest.Reply{Text: "You are Ada."})
	assistant := llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "greeter", Model: llm}))
	r, _ := runner.New(runner.Config[struct{}]{Agent: assistant, Store: session.NewMemory()})
	ctx := context.Background()
	first, _ := agent.Collect(r.Run(ctx, "", "I am Ada."))
	second, _ := agent.Collect(r.Run(ctx, first.SessionID, "Who am I?"))
	fmt.Println(second.Text, len(llm.Requests()[1].Messages))
	// Output: You are Ada. 3
}
