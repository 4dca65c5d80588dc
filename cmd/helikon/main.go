// Command helikon runs tools AI agents can be trusted with: one tool or one
// command under a sandbox, an agent over the sandboxed toolset, an MCP server
// of the tools, an egress proxy. Run helikon --help for the commands.
//
// This binary holds the commands that need no model and stays small, so that
// it starts fast; the agent commands are in helikon-agent
// (cmd/helikon/helikon-agent), which it executes for them and finds next to
// itself or on PATH. Build both with CGO_ENABLED=0 go build -o bin/ ./cmd/...
package main

import (
	"os"

	"github.com/paigasus/helikon/cli"
	// Starts the OS sandbox's launcher during initialisation when the
	// command line is an unprivileged helikon exec.
	_ "github.com/paigasus/helikon/cli/earlylaunch"
)

func main() {
	os.Exit(cli.RunProcess(os.Args[1:]))
}
