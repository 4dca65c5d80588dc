// Command helikon-agent is the helikon CLI with its agent commands (run, mcp,
// tool, fetch, search, policy) as well as the others. The helikon binary
// executes it for those commands; it can also be run by itself. It links the
// model SDKs, the MCP SDK, SQLite and OpenTelemetry, which the helikon binary
// leaves out to start fast.
package main

import (
	"os"

	"github.com/paigasus/helikon/cli"
	_ "github.com/paigasus/helikon/cli/agentcli" // registers the agent commands
)

func main() {
	os.Exit(cli.RunProcess(os.Args[1:]))
}
