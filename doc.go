// Package helikon is the core of the helikon SDK: the tool contract, the run
// and tool contexts, the three tool errors, and the permission pipeline
// (modes, rules, guards, policies, approval).
//
// The core depends on nothing heavy. The ready-made tools, execution
// backends, model providers, the agent runtime, MCP and the CLI live in
// packages above it:
//
//	functiontool   typed function tools: schemas inferred from Go types
//	sandbox        a directory opened as a confinement root
//	filetool       Read, Write and Edit over a sandbox
//	bashtool       the Bash tool, over any execution backend
//	backend/...    execution backends: host, OS-kernel sandbox, forkd microVMs
//	webfetch, websearch, ssrf, egress
//	                network tools, the SSRF guard and the egress proxy
//
// A tool implements [Tool]; optional parts of the contract (output schema,
// effect, targets) are optional interfaces checked with a type assertion.
// A [Toolset] holds tools of one application-context type and rejects
// duplicate names when it is built. [Permissions] decides whether a call may
// run.
package helikon
