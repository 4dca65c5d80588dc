// Package mcptools connects helikon tools and the Model Context Protocol in
// both directions, on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk/mcp).
//
// # Serving helikon tools
//
// [NewServer] (or [AddTools] on an existing *mcp.Server) exposes helikon
// tools as MCP tools: name, description, input schema and, where the tool has
// one, output schema. Every call made through MCP goes through the same steps
// as a call in a helikon run:
//
//  1. the arguments are checked against the tool's input schema; every
//     problem is listed in an isError result ("invalid arguments for tool …");
//  2. the permission pipeline ([helikon.Permissions.Check] with
//     [helikon.CallFor] in the server's mode) decides; a denial is an isError
//     result with the pipeline's reason. An "ask" (a guard that fires, a
//     policy that asks) goes to the client as an MCP elicitation when the
//     client declared the elicitation capability; otherwise the configured
//     [helikon.Approver] answers, and without one the call is denied. Before
//     protocol 2026-07-28 the server sends elicitation/create and waits; from
//     2026-07-28 the call returns the question as an input request
//     (SEP-2322) and the client calls again with the answer, which counts
//     only for the exact tool, arguments and reason it was asked about;
//  3. the tool runs with a [helikon.ToolContext] derived from the request's
//     context, so notifications/cancelled from the client cancels the call
//     (a tool that runs processes must kill them on cancellation, as the
//     helikon contract requires);
//  4. a tool error becomes a result with isError set whose text is exactly
//     the error's message, the one a model sees in a helikon run. The
//     result's _meta carries the error kind under [MetaError], so that a
//     helikon client restores the same tool error.
//
// While a call runs, a client that sent a progress token receives
// notifications/progress every [ServerOptions].ProgressInterval.
//
// Effects map to tool annotations by [Annotations] and back by [EffectOf];
// the mapping round-trips (see [Annotations]). A served tool's _meta also
// carries its effect under [MetaEffect].
//
// [ServeHTTP] serves the streamable HTTP transport. It binds to loopback by
// default, refuses to listen on any other address without a bearer token,
// checks the Host header (DNS rebinding) and refuses browser requests whose
// Origin is not explicitly allowed. [HTTPHandler], for mounting on a server
// of one's own, does the same checks and, without a token, serves loopback
// peers only. The stdio transport is the SDK's own (mcp.StdioTransport).
//
// Over HTTP, a call ends with its client: when the POST that carries it is
// dropped before the answer is sent, or its session is ended by DELETE, the
// call is cancelled (the handler sends its session notifications/cancelled,
// the protocol's own cancellation) and a tool that runs processes kills them.
// ServeHTTP does the same for every call when its context ends (SIGTERM in
// `helikon mcp`), then ends the sessions. A session that receives no message
// for [HTTPOptions].SessionTimeout ([DefaultSessionTimeout]) ends; at most
// [HTTPOptions].MaxSessions ([DefaultMaxSessions]) live at once, and an
// initialize beyond that is answered 503 with a JSON-RPC error saying what
// to do. Bodies over [MaxRequestBytes] are answered 413, a body that is not
// application/json 415, and a message with no method (and no result or
// error) 400. The scheme of "Authorization: Bearer" is case-insensitive.
//
// # Using MCP servers' tools
//
// [Connect] connects to an MCP server (a spawned command over stdio with
// [Command], an HTTP endpoint with [HTTP], or any mcp.Transport), lists its
// tools and wraps each as a [helikon.Tool]: the effect comes from the
// annotations (none: side effect; write only for tools a helikon server
// marks as write, since another server's closed world is not a sandbox),
// arguments are validated against the input schema before anything is sent,
// and failures map to the three tool errors.
// The list is fetched again on notifications/tools/list_changed, and a
// dropped connection is re-established on the next call. A [Source] is an
// llmagent.ToolSource: an agent sees the server's current tools at the start
// of each run:
//
//	src, err := mcptools.Connect[App](ctx, mcptools.Command("npx -y some-mcp-server"), nil)
//	...
//	agent, err := llmagent.NewBuilder[App]().Name("a").Model(m).ToolSource(src).Build()
//
// [Command] runs the server with this process's environment and privileges;
// [ContainedCommand] runs it under an execution backend (the OS sandbox),
// as helikon run --mcp does by default.
//
// [Toolset] merges several sources and local tools and reports name clashes
// at build time; [ClientOptions].Prefix resolves them.
//
// # Containing and relaying an MCP server
//
// [Wrap] puts helikon between an MCP host and a server it does not trust:
// it connects to the server (with [Contained], a stdio server run by an
// execution backend such as the OS sandbox, backend/ossandbox, which keeps
// it to its root, without the caller's home, credentials, environment or
// network, and kills everything it starts when it ends) and offers its
// tools to the host under their own names through [Wrapper.Server]. Each
// call is admitted exactly as a call of a served helikon tool (schema
// check, the permission pipeline on the name mcp__NAME__TOOL with the
// annotations as the effect, "ask" by elicitation) and relayed with the
// arguments the pipeline passed; the result comes back unchanged.
//
// Each tool's definition is pinned by its [Fingerprint] (in memory, or in
// a file with [LoadPins]). A tool changed after it was pinned, or added
// after the first listing, is held: offered with a neutral description and
// an empty schema, and refused until the host's user approves the new
// definition (shown to them in full). `helikon mcp wrap` is this package's
// Wrap over Contained on the OS sandbox.
//
// Wrap does not relay the server's instructions, prompts, resources or
// its requests to the host (sampling, elicitation, roots); it does not
// reconnect: when the server exits, [Wrapper.Run] returns. The host sees
// the definitions that were approved, but the guard compares definitions,
// not behaviour: a server that changes what a tool does without changing
// its definition, or changes the definition without sending
// tools/list_changed, is not caught until its list is fetched again.
// Tools first seen in the first listing are trusted on first use; with
// pins in a file, that is the first run.
//
// # What is guaranteed and what is not
//
// Served tools can do nothing over MCP that they could not do in a helikon
// run with the same permissions: the pipeline is not optional and there is no
// way for a client to change the mode or rules. The containment of the tools
// themselves (sandbox root, execution backend) is the tools' business and is
// exactly as strong as in a run.
//
// Each call through MCP runs with a run state of its own ([helikon.State]
// is not kept between calls), so a per-run cap kept in the state, such as
// webfetch's MaxUses, limits a single call, not a client's session.
//
// An MCP client is trusted to relay elicitations to a human honestly: a
// client that answers "accept" on its own approves the call. A server whose
// mode or rules must not be bypassed by a client should not rely on
// approvals; use dont-ask mode, which never asks.
//
// Tool annotations are hints written by the server. A helikon client takes
// the effect from them because that is the only description MCP offers; an
// untrusted server can claim read-only for a tool that is not. Set
// [ClientOptions].IgnoreAnnotations to treat every tool of such a server as a
// side effect. Tools of an MCP server report no targets, so permission rules
// with a pattern cannot allow them and deny rules with a pattern deny them
// (fail closed); bare tool-name rules work as usual.
//
// A call whose connection drops while it runs is reported as failed: it may
// or may not have run on the server, and it is not retried.
//
// The HTTP server keeps no event store, so a stream cannot be resumed: a
// client that loses the connection of a running call loses the call (it is
// cancelled, not left running for a result nobody can fetch). A running call
// keeps its session from idling out, however long it runs. A call that
// arrives in the same instant as the DELETE of its session may escape the
// cancellation and run to its end (the session's end waits for it). The
// session cap counts sessions, not clients: one client that opens sessions
// and abandons them can hold every slot until they idle out.
//
// The helikon client does not answer a foreign server's own elicitation,
// sampling or roots requests (it declares none of those capabilities), and
// it does not forward progress notifications of foreign tools.
package mcptools
