package loopagent_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/loopagent"
	"github.com/paigasus/helikon/agent/runner"
)

func ExampleNew() {
	// The step tool escalates on its third call, which ends the loop after
	// that iteration.
	w, _ := worker("worker", stepTool(3))
	loop, _ := loopagent.New(loopagent.Config[App]{Name: "until-done", SubAgents: []agent.Agent[App]{w}, MaxIterations: 10})
	r, _ := runner.New(runner.Config[App]{Agent: loop})
	res, _ := agent.Collect(r.Run(context.Background(), "", "work"))
	iterations := 0
	for _, e := range res.Events {
		if e.Kind == agent.EventToolResult {
			iterations++
		}
	}
	fmt.Println(iterations, res.Text)
	// Output: 3 worker done
}
