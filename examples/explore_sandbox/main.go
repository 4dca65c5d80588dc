// Command explore_sandbox is the seed's explore-sandbox example: an agent
// that can inspect and change a directory with Read, Write, Edit and Bash,
// assembled by package toolbox as helikon run assembles them. The file tools
// are confined to the directory and Bash runs in the OS sandbox on it
// (Landlock and seccomp on Linux, Seatbelt on macOS; where it is
// unavailable the example stops with an error saying what to do). The
// permission pipeline lets file changes through (the accept-edits mode) and
// the read-only commands the allow rules name; any other command would be
// asked about, and with no one to ask it is denied: the model is told and
// must make do.
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
	"github.com/paigasus/helikon/provider/openai"
	"github.com/paigasus/helikon/toolbox"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) < 2 {
		fmt.Fprintln(stderr, "usage: explore_sandbox DIR PROMPT")
		return 2
	}
	tb, err := toolbox.New[struct{}](ctx, &toolbox.Options{
		Root:  args[0],
		Mode:  helikon.ModeAcceptEdits,
		Allow: helikon.MustParseRules("Bash(ls)", "Bash(cat)", "Bash(wc)", "Bash(grep)"),
	})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer tb.Close() // ends the workspace and the sandbox's helpers
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
		Instructions("You can inspect the sandbox with Read/Write/Edit/Bash. A command may be denied; then use the file tools.").
		Toolset(tb.Toolset()).
		Build()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	r, err := runner.New(runner.Config[struct{}]{Agent: assistant, Permissions: tb.Permissions(), Mode: tb.Mode()})
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
