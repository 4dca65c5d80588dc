// Command explore_sandbox is the seed's explore-sandbox example: an agent
// that can inspect and change a directory with Read, Write, Edit and Bash.
// Bash runs on the host backend, which pins the working directory but does
// not contain the process, so, as in the seed, a deny rule on Bash gates it:
// the model is told the call was denied and must make do with the file
// tools, which are confined to the directory.
//
//	OPENAI_API_KEY=... go run ./examples/explore_sandbox DIR "Summarise the notes in this directory into SUMMARY.md"
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
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/provider/openai"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/tool/filetool"
	"github.com/paigasus/helikon/workspace/fsroot"
	"github.com/paigasus/helikon/workspace/local"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, "usage: explore_sandbox DIR PROMPT")
		return 2
	}
	sb, err := fsroot.Open(args[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	backend, err := host.New(sb.Dir(), nil)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	bash, err := bashtool.New[struct{}](backend, nil)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
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
	assistant, err := llmagent.NewBuilder[struct{}]().
		Name("sandbox-explorer").
		Model(llm).
		Instructions("You can inspect the sandbox with Read/Write/Edit/Bash. Bash may be denied; then use the file tools.").
		Tool(filetool.NewRead[struct{}](local.NewFS(sb), nil)).
		Tool(filetool.NewWrite[struct{}](local.NewFS(sb), nil)).
		Tool(filetool.NewEdit[struct{}](local.NewFS(sb), nil)).
		Tool(bash).
		Build()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	perms := &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("Bash")}}
	r, err := runner.New(runner.Config[struct{}]{Agent: assistant, Permissions: perms})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for ev, err := range r.Run(ctx, "", strings.Join(args[1:], " ")) {
		if err != nil {
			fmt.Fprintln(stderr, "\nerror:", err)
			return 1
		}
		switch ev.Kind {
		case agent.EventTextDelta:
			fmt.Fprint(stdout, ev.Text)
		case agent.EventPermissionDenied:
			fmt.Fprintf(stderr, "denied: %s: %s\n", ev.ToolCall.Name, ev.Reason)
		case agent.EventToolResult:
			status := "ok"
			if ev.ToolResult.IsError {
				status = string(ev.ToolResult.Kind)
			}
			fmt.Fprintf(stderr, "tool %s: %s\n", ev.ToolCall.Name, status)
		case agent.EventRunCompleted:
			fmt.Fprintln(stdout)
		}
	}
	return 0
}
