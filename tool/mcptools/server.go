package mcptools

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/internal/argcheck"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/version"
	"github.com/paigasus/helikon/workspace"
)

// MetaError is the key, in the _meta of an isError tool result, under which a
// helikon server puts the tool error's kind and details (an [ErrorMeta]).
const MetaError = "helikon/error"

// MetaEffect is the key, in the _meta of a tool a helikon server lists, under
// which it puts the tool's effect ("read_only", "write" or "side_effect").
// The helikon client needs it to take a tool as a write tool: see
// [Source.Tools].
const MetaEffect = "helikon/effect"

// DefaultProgressInterval is how often a running call reports progress to a
// client that asked for it: often enough that a client's idle timeout (the
// TypeScript SDK's default is 60 s) is reset many times over, rarely enough
// to cost nothing.
const DefaultProgressInterval = 5 * time.Second

// workspaceCloseTimeout bounds the removal of an ended session's workspace
// (a container or microVM to delete).
const workspaceCloseTimeout = 30 * time.Second

// ErrorMeta describes a tool error in a result's _meta under [MetaError].
type ErrorMeta struct {
	Kind         helikon.ErrorKind `json:"kind"`                    // invalid_args, denied or other
	Message      string            `json:"message"`                 // the error's own message (err.Error())
	Reason       string            `json:"reason,omitempty"`        // denied: the reason
	SchemaErrors []string          `json:"schema_errors,omitempty"` // invalid_args: the problems
}

// ServerOptions configures how helikon tools are served. The zero value (or
// nil) serves in Default mode with the zero [helikon.Permissions] (guards on,
// no rules), asking the client when a guard fires.
type ServerOptions[C any] struct {
	// Name and Version identify the server to clients; "" means "helikon"
	// and the running binary's build (see package version: module
	// version, VCS revision, Go version), as helikon version prints it.
	Name, Version string
	// Instructions are sent to clients at initialization.
	Instructions string
	// Permissions is the pipeline every call goes through; nil means the
	// zero value. Its Approver answers "ask" decisions for clients that do
	// not support elicitation; without one they are denied.
	Permissions *helikon.Permissions
	// Mode is the permission mode of every call.
	Mode helikon.PermissionMode
	// App is the application context passed to the tools.
	App C
	// NoElicitation stops "ask" decisions from being sent to the client:
	// only Permissions.Approver answers them.
	NoElicitation bool
	// ProgressInterval is the period of progress notifications for calls
	// that carry a progress token; 0 means [DefaultProgressInterval] and a
	// negative value sends none.
	ProgressInterval time.Duration
	// Logger receives one debug record per call (tool, outcome, duration); nil
	// means slog.Default. Arguments and outputs are never logged.
	Logger *slog.Logger
	// Sessions, when set, gives every client session a workspace of its
	// own: each call's context names the client's session
	// ([workspace.WithSession], see [WorkspaceSession]), so tools built on
	// [workspace.Sessions.ByContext] act in that session's workspace, and
	// the workspace is closed when the client's session ends. A transport
	// without session ids (stdio) names none: its calls go to the
	// ByContext fallback, which the caller closes.
	Sessions *workspace.Sessions
	// Metrics, when set, counts the calls (by tool and outcome), the calls
	// running and the permission decisions (by stage); see [Metrics].
	Metrics *Metrics
	// SessionEnded, when set, is called with the workspace session id
	// ([WorkspaceSession]) of every client session that ends, once it
	// ended; each call's context then names its client's session
	// ([workspace.WithSession]) even without Sessions. Tools keep
	// per-session state by it: the process tables of
	// process.Sessions, whose Close it should call.
	SessionEnded func(session string)
}

// WorkspaceSession is the workspace session id of the MCP session sid: sid
// itself is chosen by the SDK (or, over HTTP, echoed by the client) and may
// not be a valid session id, so it is hashed.
func WorkspaceSession(sid string) string {
	sum := sha256.Sum256([]byte(sid))
	return "mcp-" + hex.EncodeToString(sum[:16])
}

// NewServer returns an MCP server offering every tool of set. See [AddTools].
func NewServer[C any](set *helikon.Toolset[C], opts *ServerOptions[C]) (*mcp.Server, error) {
	if opts == nil {
		opts = &ServerOptions[C]{}
	}
	name, ver := opts.Name, opts.Version
	if name == "" {
		name = "helikon"
	}
	if ver == "" {
		ver = version.Get().String()
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: ver}, &mcp.ServerOptions{
		InitializedHandler: closeWorkspaceAtEnd(opts.Sessions, opts.SessionEnded, opts.Logger),
		Instructions:       opts.Instructions,
		// No logging capability: helikon logs through slog on the server side.
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	if err := AddTools(srv, set.Tools(), opts); err != nil {
		return nil, err
	}
	return srv, nil
}

// closeWorkspaceAtEnd returns the handler that, once a client session is
// initialised, waits for its end and closes its workspace; nil without
// sessions.
func closeWorkspaceAtEnd(sessions *workspace.Sessions, ended func(string), logger *slog.Logger) func(context.Context, *mcp.InitializedRequest) {
	if sessions == nil && ended == nil {
		return nil
	}
	if logger == nil {
		logger = slog.Default()
	}
	return func(_ context.Context, req *mcp.InitializedRequest) {
		ss := req.Session
		if ss == nil || ss.ID() == "" {
			return
		}
		go func() {
			ss.Wait()
			if ended != nil {
				ended(WorkspaceSession(ss.ID()))
			}
			if sessions == nil {
				return
			}
			// The session's context is gone: closing a remote workspace
			// gets a bounded one of its own.
			ctx, cancel := context.WithTimeout(context.Background(), workspaceCloseTimeout)
			defer cancel()
			if err := sessions.Close(ctx, WorkspaceSession(ss.ID())); err != nil {
				logger.Warn("closing the workspace of an ended MCP session", "session", WorkspaceSession(ss.ID()), "err", err)
			}
		}()
	}
}

// AddTools adds tools to srv, replacing tools of the same names. It fails,
// adding nothing, when two tools share a name, a name is invalid, or a schema
// is not an object schema helikon can validate against: these are
// programming errors caught before any client calls.
func AddTools[C any](srv *mcp.Server, tools []helikon.Tool[C], opts *ServerOptions[C]) error {
	if opts == nil {
		opts = &ServerOptions[C]{}
	}
	if _, err := helikon.NewToolset(tools...); err != nil {
		return fmt.Errorf("mcptools: %w", err)
	}
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand documents it)
	type entry struct {
		def *mcp.Tool
		h   mcp.ToolHandler
	}
	entries := make([]entry, 0, len(tools))
	for _, t := range tools {
		def, h, err := serveTool(t, opts, key)
		if err != nil {
			return err
		}
		entries = append(entries, entry{def, h})
	}
	for _, e := range entries {
		srv.AddTool(e.def, e.h)
	}
	return nil
}

func serveTool[C any](t helikon.Tool[C], opts *ServerOptions[C], key []byte) (*mcp.Tool, mcp.ToolHandler, error) {
	name := t.Name()
	in := t.Schema()
	if in.Type != "object" {
		return nil, nil, fmt.Errorf("mcptools: tool %s: MCP needs an input schema of type object, got %q", name, in.Type)
	}
	check, err := argcheck.Compile(in)
	if err != nil {
		return nil, nil, fmt.Errorf("mcptools: tool %s: input schema: %w", name, err)
	}
	def := &mcp.Tool{
		Name:        name,
		Description: t.Description(),
		InputSchema: in,
		Annotations: Annotations(helikon.EffectOf(t)),
		Meta:        mcp.Meta{MetaEffect: helikon.EffectOf(t).String()},
	}
	out := helikon.OutputSchemaOf(t)
	if out != nil {
		if _, err := out.Resolve(nil); err != nil {
			return nil, nil, fmt.Errorf("mcptools: tool %s: output schema: %w", name, err)
		}
		def.OutputSchema = out
	}
	c := &servedCall[C]{tool: t, check: check, opts: opts, key: key, hasOut: out != nil}
	return def, c.handle, nil
}

type servedCall[C any] struct {
	tool   helikon.Tool[C]
	check  *argcheck.Validator
	opts   *ServerOptions[C]
	key    []byte
	hasOut bool
}

func (c *servedCall[C]) logger() *slog.Logger {
	if c.opts.Logger != nil {
		return c.opts.Logger
	}
	return slog.Default()
}

func (c *servedCall[C]) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	start := time.Now()
	name := c.tool.Name()
	done := c.opts.Metrics.callStarted(name)
	res, outcome := c.call(ctx, req)
	done(outcome)
	attrs := []slog.Attr{slog.String("tool", name), slog.String("outcome", outcome), slog.Duration("duration", time.Since(start))}
	if t := callTenant(req); t != "" {
		attrs = append(attrs, slog.String("tenant", t))
	}
	c.logger().LogAttrs(ctx, slog.LevelDebug, "mcp tool call", attrs...)
	return res, nil
}

// call runs one call and returns its result and a word for the log.
func (c *servedCall[C]) call(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, string) {
	name := c.tool.Name()
	ctx, checked, rc, res, outcome := c.admit(ctx, req)
	if res != nil {
		return res, outcome
	}
	stop := c.reportProgress(ctx, req)
	out, err := checked.Invoke(rc.ToolContext(ctx, ""))
	stop()
	if err != nil {
		var pe *helikon.PanicError
		if errors.As(err, &pe) {
			c.logger().Error("tool panicked", "tool", name, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
		}
		return errorResult(name, err)
	}
	return c.successResult(out)
}

// admit checks a call's arguments against the tool's schema and runs it
// through the permission pipeline, asking the client where the pipeline
// asks. It returns the allowed call with the context and run context to
// run it in, or (checked nil) the result to send instead and a word for
// the log. [Wrapper] admits the calls it relays here too.
func (c *servedCall[C]) admit(ctx context.Context, req *mcp.CallToolRequest) (context.Context, *helikon.CheckedCall[C], *helikon.RunContext[C], *mcp.CallToolResult, string) {
	name := c.tool.Name()
	args, err := checkArgs(name, c.check, req.Params.Arguments)
	if err != nil {
		res, outcome := errorResult(name, err)
		return ctx, nil, nil, res, outcome
	}

	perms := helikon.Permissions{}
	if c.opts.Permissions != nil {
		perms = *c.opts.Permissions
	}
	var asker *elicitApprover
	if !c.opts.NoElicitation && clientElicits(req) {
		asker = &elicitApprover{req: req, key: c.key, modern: req.ProtocolVersion() >= modernProtocol}
		perms.Approver = asker
	}
	if (c.opts.Sessions != nil || c.opts.SessionEnded != nil) && req.Session != nil && req.Session.ID() != "" {
		ctx = workspace.WithSession(ctx, WorkspaceSession(req.Session.ID()))
	}
	if t := callTenant(req); t != "" {
		ctx = workspace.WithTenant(ctx, t)
	}
	rc := helikon.NewRunContext(c.opts.App, &helikon.RunConfig{Mode: c.opts.Mode})
	checked, d, err := helikon.CheckCall(ctx, rc, &perms, c.tool, args)
	if err != nil && asker != nil && len(asker.pending) > 0 && req.ProtocolVersion() >= modernProtocol {
		// Multi round-trip (SEP-2322): the client asks its user and
		// calls again with the answers; the call made with them is
		// the one decided.
		return ctx, nil, nil, &mcp.CallToolResult{InputRequests: asker.pending}, "input_required"
	}
	c.opts.Metrics.decided(d, err)
	if err != nil {
		res, outcome := errorResult(name, err)
		return ctx, nil, nil, res, outcome
	}
	return ctx, checked, rc, nil, ""
}

// successResult is the result of a call that returned out, which
// [helikon.CheckedCall.Invoke] guarantees is valid JSON.
func (c *servedCall[C]) successResult(out json.RawMessage) (*mcp.CallToolResult, string) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}
	// Structured content is required with an output schema and harmless
	// (and convenient for clients) for any JSON object.
	if c.hasOut || out[0] == '{' {
		res.StructuredContent = out
	}
	return res, "ok"
}

// errorResult turns a tool error into an isError result whose text is what
// a model sees for the error in a helikon run ([model.ToolResultFor]).
func errorResult(tool string, err error) (*mcp.CallToolResult, string) {
	kind := helikon.KindOf(err)
	em := ErrorMeta{Kind: kind, Message: err.Error()}
	switch kind {
	case helikon.KindDenied:
		var de *helikon.DeniedError
		if errors.As(err, &de) {
			em.Reason = de.Reason
		}
	case helikon.KindInvalidArgs:
		em.SchemaErrors = helikon.SchemaErrors(err)
	}
	res := &mcp.CallToolResult{
		Meta:    mcp.Meta{MetaError: em},
		Content: []mcp.Content{&mcp.TextContent{Text: model.ToolResultFor(model.ToolCall{Name: tool}, nil, err).Content}},
		IsError: true,
	}
	return res, string(kind)
}

// reportProgress sends progress notifications while a call runs, when the
// client sent a progress token. The returned function stops them.
func (c *servedCall[C]) reportProgress(ctx context.Context, req *mcp.CallToolRequest) (stop func()) {
	token := req.Params.GetProgressToken()
	every := c.opts.ProgressInterval
	if every == 0 {
		every = DefaultProgressInterval
	}
	if token == nil || every < 0 || req.Session == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(every)
		defer tick.Stop()
		start := time.Now()
		for n := 1; ; n++ {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			msg := fmt.Sprintf("%s still running after %s", c.tool.Name(), time.Since(start).Round(time.Second))
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg}); err != nil {
				return
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

// modernProtocol is the first protocol version in which a server may not send
// requests to the client while serving one (SEP-2322 multi round-trip
// requests replace them).
const modernProtocol = "2026-07-28"

// clientElicits reports whether the calling client can show a form.
func clientElicits(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	// Neither form nor URL declared means form (older clients).
	return caps.Elicitation.Form != nil || caps.Elicitation.URL == nil
}

// approveField is the one field of the approval form.
const approveField = "approve"

var errNeedsInput = errors.New("waiting for the client's answer")

// elicitApprover asks the client's user through MCP elicitation. Before
// protocol 2026-07-28 it sends elicitation/create and waits; from 2026-07-28
// the call returns its questions as input requests, and the client calls
// again with the answers, which are found by question ID.
//
// A question's ID is an HMAC, under a key known only to this server, of the
// tool, the arguments and the reason, so an answer applies to exactly the
// call it was asked about and cannot be prepared by the client in advance.
type elicitApprover struct {
	req     *mcp.CallToolRequest
	key     []byte
	modern  bool
	pending mcp.InputRequestMap
}

func (a *elicitApprover) Approve(ctx context.Context, ar *helikon.ApprovalRequest) (bool, error) {
	params := &mcp.ElicitParams{
		Mode:    "form",
		Message: approvalMessage(ar),
		RequestedSchema: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				approveField: {Type: "boolean", Title: "Allow this call", Description: "true to let the call run, false to refuse it"},
			},
			Required: []string{approveField},
		},
	}
	if !a.modern {
		res, err := a.req.Session.Elicit(ctx, params)
		if err != nil {
			return false, err
		}
		return approved(res), nil
	}
	id := a.questionID(ar)
	if resp, ok := a.req.Params.InputResponses[id]; ok {
		res, ok := resp.(*mcp.ElicitResult)
		if !ok {
			return false, fmt.Errorf("the client answered the approval question with %T, not an elicitation result", resp)
		}
		return approved(res), nil
	}
	if a.pending == nil {
		a.pending = mcp.InputRequestMap{}
	}
	a.pending[id] = params
	return false, errNeedsInput
}

func (a *elicitApprover) questionID(ar *helikon.ApprovalRequest) string {
	m := hmac.New(sha256.New, a.key)
	for _, part := range [][]byte{[]byte(ar.Tool), ar.Args, []byte(ar.Reason)} {
		m.Write([]byte(fmt.Sprintf("%d:", len(part))))
		m.Write(part)
	}
	return "approve-" + hex.EncodeToString(m.Sum(nil)[:16])
}

func approved(res *mcp.ElicitResult) bool {
	if res == nil || res.Action != "accept" {
		return false
	}
	v, _ := res.Content[approveField].(bool)
	return v
}

// maxArgsInPrompt bounds the arguments shown in an approval prompt.
const maxArgsInPrompt = 2000

func approvalMessage(ar *helikon.ApprovalRequest) string {
	args := string(ar.Args)
	if len(args) > maxArgsInPrompt {
		args = args[:maxArgsInPrompt] + "…"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "helikon asks before running %s (%s): %s\n\nArguments: %s", ar.Tool, ar.Effect, ar.Reason, args)
	return b.String()
}
