// Package helikon is the core of the helikon SDK: the tool contract, the run
// and tool contexts, the three tool errors, and the permission pipeline
// (modes, rules, guards, policies, approval).
//
// # Start here
//
// Most programs want the contained toolset of package toolbox: Read,
// Write, Edit, Bash and WebFetch confined to a directory, Bash in the OS
// sandbox, every call through the permission pipeline (see
// Example_contained):
//
//	tb, err := toolbox.New[struct{}](ctx, &toolbox.Options{
//		Root:  dir,                                     // tools confined here; Bash in the OS sandbox
//		Mode:  helikon.ModeAcceptEdits,                 // file changes run without asking
//		Allow: helikon.MustParseRules("Bash(go test)"), // and so does this command
//	})
//	if err != nil {
//		return err // no OS sandbox here: the error says what to do
//	}
//	defer tb.Close() // stops the sandbox's helper processes
//	out, err := tb.Call(ctx, struct{}{}, "Read", json.RawMessage(`{"path":"go.mod"}`))
//
// An agent takes tb.Toolset() and tb.Permissions() (packages agent/llmagent
// and agent/runner). Calls neither read-only nor allowed are asked about,
// and denied when no one can be asked (toolbox.Options.Approver, with
// "always" answers); toolbox.Options.PolicyFiles reads the project's and
// the user's policy files as helikon run does.
//
// # The floors
//
// The core depends on nothing heavy (no OpenTelemetry, no provider SDK).
// Everything else is a floor above it, one folder per question
// (docs/design.md, "Where things go"):
//
//	toolbox        the contained toolset ready to use: the tools on a
//	               workspace, the pipeline, approvals, policy files
//	tool/...       every tool, a package each: functiontool (typed
//	               function tools), filetool (Read, Write, Edit),
//	               bashtool, webfetch, websearch, agenttool, mcptools
//	               (MCP server and client)
//	backend/...    one command, nothing kept: the execution-backend
//	               contract, host, ossandbox (the OS sandbox), microvm
//	               (a microVM per command), backendtest
//	workspace/...  one session, files and commands kept: the contract,
//	               local, docker, forkd, fsroot (the confinement root),
//	               execfs, workspacetest
//	policyfile     policy files (helikon's own, Claude Code's settings)
//	shellcmd       shell-accurate command analysis
//	ssrf, egress   the SSRF guard and the egress proxy
//	model          provider-neutral model types and the LLM interface
//	agent/...      the agents: LLM agent, runner, loop and sequential
//	provider/...   model providers (OpenAI, Anthropic) on the official SDKs
//	session/...    session persistence (in memory, SQLite)
//	cli/...        the helikon command line, as a library
//
// A tool implements [Tool]; optional parts of the contract (output schema,
// effect, targets) are optional interfaces checked with a type assertion.
// Every caller runs a call through [CheckCall] and [CheckedCall.Invoke]
// ([CallTool] does both): the JSON check, the permission pipeline, the
// call, and the sorting of what it returns into the three error kinds.
// A [Toolset] holds tools of one application-context type and rejects
// duplicate names when it is built. [Permissions] decides whether a call may
// run.
//
// What the core guarantees: a deny rule with a pattern denies a call of its
// tool whose targets the tool cannot report (fail closed), in every
// permission mode; a built-in guard asks before the operations it knows (see [Permissions]) even
// under Bypass and even when an allow rule matches, and denies when no one
// can be asked; a [PolicyDecision]'s zero value asks rather than allows; a
// run's mode can be tightened, never loosened; [KindOf] sorts every error
// into one of the three kinds (invalid arguments, denied, other), so a model
// is always told which it was.
//
// What it does not do: the permission pipeline decides on what a tool
// reports through [Targeter]; it does not confine what the tool then does.
// A tool that reports its targets wrongly, or a command that reaches a file
// or host its arguments do not name (a script, an alias, a redirect), is not
// stopped here: that is the job of the sandbox, the execution backend and the
// network guards (ssrf, egress). With no rules, no policy and Default mode,
// every call the guards do not stop is allowed: a nil [Permissions].Policy
// allows, it does not ask. A rule matches tool names exactly, so a rule
// naming no tool (bash(rm) for Bash(rm)) matches nothing; the pipeline
// never sees the whole toolset and cannot tell, so whoever assembles tools
// and rules calls [Permissions.CheckTools] (the agent runner and the CLI
// do) and refuses such a rule.
package helikon
