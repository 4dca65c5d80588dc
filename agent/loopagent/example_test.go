package loopagent_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent/loopagent"
	"github.com/paigasus/helikon/agent/runner"
)

func ExampleNew() {
	// The step tool escalates on its third call, which ends the loop after
	// that iteration.
	w, _ := worker("worker", stepTool(3))
	loop, _ := loopagent.New(loopagent.Config[App]{Name: "until-done", SubAgents: []helikon.Agent[App]{w}, MaxIterations: 10})
	r, _ := runner.New(runner.Config[App]{Agent: loop})
	res, _ := helikon.Collect(r.Run(context.Background(), "", "work"))
	iterations := 0
	for _, e := range res.Events {
		if e.Kind == helikon.EventToolResult {
			iterations++
		}
	}
	fmt.Println(iterations, res.Text)
	// Output: 3 worker done
}
