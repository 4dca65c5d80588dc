// Command helikon runs tools AI agents can be trusted with: one tool or one
// command under a sandbox, an agent over the sandboxed toolset, an MCP server
// of the tools, an egress proxy. Run helikon --help for the commands.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/term"

	"github.com/paigasus/helikon/cmd/helikon/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	env := &cli.Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		IsTerminal: func() bool { return term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stderr.Fd())) },
	}
	code := cli.Main(ctx, env, os.Args[1:])
	stop()
	os.Exit(code)
}
