// Command loop_agent shows a loop agent that stops when a tool escalates: a
// poet writes a haiku and submits it with submit_haiku; the tool checks that
// it has three lines and, when it does, keeps it in the run state and calls
// Actions().Escalate(), which stops the loop after the current iteration.
// Otherwise the tool's answer tells the poet what to fix and the loop runs
// again, up to five times.
//
//	OPENAI_API_KEY=... go run ./examples/loop_agent "autumn rain"
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/loopagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/provider/openai"
	"github.com/paigasus/helikon/tool/functiontool"
)

// HaikuArgs are the arguments of submit_haiku.
type HaikuArgs struct {
	Lines []string `json:"lines" jsonschema:"the lines of the haiku"`
}

// HaikuOut is the result of submit_haiku.
type HaikuOut struct {
	Accepted bool   `json:"accepted"`
	Feedback string `json:"feedback"`
}

func submitHaiku(tc *helikon.ToolContext[struct{}], in HaikuArgs) (HaikuOut, error) {
	if len(in.Lines) != 3 {
		return HaikuOut{Feedback: fmt.Sprintf("a haiku has 3 lines, this has %d; write it again", len(in.Lines))}, nil
	}
	tc.State().Set("haiku", strings.Join(in.Lines, "\n"))
	tc.Actions().Escalate()
	return HaikuOut{Accepted: true, Feedback: "accepted"}, nil
}

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	topic := "autumn rain"
	if len(args) > 0 {
		topic = strings.Join(args, " ")
	}
	modelID := getenv("OPENAI_MODEL")
	if modelID == "" {
		modelID = "gpt-4.1-mini"
	}
	llm, err := openai.New(modelID, &openai.Options{Getenv: getenv})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	poet, err := llmagent.NewBuilder[struct{}]().
		Name("poet").
		Model(llm).
		Instructions("Write a haiku on the user's topic and submit it with submit_haiku. If it is not accepted, fix it.").
		Tool(functiontool.Must(functiontool.New("submit_haiku", "Submit a haiku for review.", submitHaiku, nil))).
		Build()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	loop, err := loopagent.New(loopagent.Config[struct{}]{Name: "haiku-loop", SubAgents: []agent.Agent[struct{}]{poet}, MaxIterations: 5})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	r, err := runner.New(runner.Config[struct{}]{Agent: loop})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	res, err := agent.Collect(r.Run(ctx, "haiku", topic))
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	sess, err := r.Store().Get(ctx, res.SessionID)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	haiku, ok := sess.State["haiku"].(string)
	if !ok {
		fmt.Fprintln(stderr, "no haiku was accepted within 5 iterations")
		return 1
	}
	fmt.Fprintln(stdout, haiku)
	fmt.Fprintf(stderr, "%d model calls\n", res.Usage.Requests)
	return 0
}
