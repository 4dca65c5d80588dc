// Package agentcli implements the helikon CLI's agent commands: run, mcp,
// tool, fetch, search and policy, with the built-in tools they serve (Read,
// Write, Edit, Bash, WebFetch, WebSearch), terminal approvals, sessions and
// tracing. They need the model SDKs, the MCP SDK, SQLite and OpenTelemetry,
// so they are linked only into helikon-agent (cmd/helikon/helikon-agent),
// which the helikon binary executes for them; package cli is the frame they
// register with (cli.RegisterAgent) and holds the commands that need no
// model.
package agentcli
