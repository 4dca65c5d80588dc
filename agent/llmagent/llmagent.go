// Package llmagent implements the LLM agent: an agent that calls a model,
// runs the tools the model asks for and feeds the results back, turn after
// turn, until the model answers without calling a tool.
//
// # Guarantees
//
//   - Every tool call passes the run's permission pipeline
//     ([helikon.Permissions.Check], with the run's current mode and the
//     agent depth) before the tool is invoked. A refused call is not
//     invoked; the model gets an error result saying why and the stream gets
//     a permission_denied event.
//   - Errors go back to the model, not up the stack: invalid arguments
//     (including malformed JSON), denials, other errors, unknown tool names
//     (the result lists the available tools) and panics (recovered into an
//     other error) all become error results and the run continues. The one
//     exception is the repair budget: a tool called with invalid arguments
//     in more than RepairBudget turns in a row (default once, then fail)
//     fails the run with an error wrapping [ErrRepairBudget] and the
//     [helikon.InvalidArgsError]. Several invalid calls of a tool in one
//     turn count once: the model has not seen any of their errors yet.
//   - Tool calls of one turn run concurrently, at most MaxParallelTools at a
//     time; permission checks (and so approval prompts) happen one by one in
//     call order before any of them starts; results are reported and fed
//     back in call order.
//   - Tools run on worker goroutines; the goroutine iterating the stream
//     waits for them and meanwhile passes on, unchanged and in the order
//     each arrives, the events their sub-agents forward through the
//     [agent.Forwarder] in every tool call's context (agent-as-tool, see
//     package agenttool). So the consumer's code always runs on the
//     iterating goroutine, and a sub-agent's events come before the
//     tool_result of the call that ran it. A consumer that stops iterating
//     while tools run cancels their context and stops their sub-agents; the
//     stream ends once every tool call has returned, leaving no goroutine
//     behind.
//   - A run stops with an error wrapping [ErrMaxTurns] after MaxTurns model
//     calls (default 20).
//   - Each completed turn is appended to the conversation and reported by
//     one turn_completed event; a turn interrupted by cancellation or an
//     error is not.
//
// # Not guaranteed
//
// The agent does not kill tools that ignore cancellation: a tool must honour
// its context (every built-in tool does). Tool arguments are never logged or
// put on spans, because they may hold secrets; tool names and call ids are.
package llmagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/agenttool"
)

// Defaults.
const (
	// DefaultMaxTurns bounds the model calls of one run: enough for real
	// multi-step tasks, few enough that a model stuck in a loop stops.
	DefaultMaxTurns = 20
	// DefaultMaxParallelTools bounds the tool calls of one turn running at
	// once.
	DefaultMaxParallelTools = 8
	// DefaultRepairBudget is in how many turns in a row the model may
	// repair invalid calls of one tool: the errors go back to the model once.
	DefaultRepairBudget = 1
)

// ErrMaxTurns is wrapped by the error of a run that hit its turn limit.
var ErrMaxTurns = errors.New("maximum number of turns exceeded")

// ErrRepairBudget is wrapped by the error of a run whose model kept sending
// invalid arguments to a tool.
var ErrRepairBudget = errors.New("the model did not repair its tool arguments")

// ToolSource contributes tools resolved at the start of each run, such as the
// tools of an MCP server.
type ToolSource[C any] interface {
	// Tools returns the source's current tools. It is called once per run;
	// an error fails the run, and a name that clashes with another tool of
	// the agent fails it too.
	Tools(ctx context.Context) ([]helikon.Tool[C], error)
}

// Config configures an LLM agent. Name and Model are required; every other
// zero value means the default.
type Config[C any] struct {
	// Name identifies the agent in events and trace spans; it is required.
	Name string
	// Description says what the agent does; a parent that exposes it as a
	// tool shows it to its model.
	Description string
	// Instructions is the system prompt.
	Instructions string
	// Model answers every turn; it is required.
	Model model.LLM
	// Tools are offered to the model on every turn; their names must be
	// unique (New fails otherwise).
	Tools []helikon.Tool[C]
	// ToolSources add tools resolved at the start of each run, after Tools.
	ToolSources []ToolSource[C]
	// SubAgents are exposed to the model as tools named after them (see
	// package agenttool); they run one level deeper and share the run's
	// state, mode and permission pipeline.
	SubAgents []agent.Agent[C]
	// Settings are sent with every model call (zero: the provider's
	// defaults).
	Settings model.Settings
	// MaxTurns bounds the model calls of one run (0: DefaultMaxTurns).
	MaxTurns int
	// MaxParallelTools bounds the concurrent tool calls of one turn
	// (0: DefaultMaxParallelTools; 1 runs them one after another).
	MaxParallelTools int
	// RepairBudget is in how many turns in a row invalid calls of one tool
	// are fed back for repair before the run fails (0: DefaultRepairBudget; a
	// negative value fails at the first invalid call).
	RepairBudget int
	// Logger receives diagnostics (nil: slog.Default()). It never receives
	// tool arguments or outputs.
	Logger *slog.Logger
}

// Agent is an LLM agent. It is immutable and safe for concurrent runs.
type Agent[C any] struct {
	cfg       Config[C]
	tools     []helikon.Tool[C]
	set       *helikon.Toolset[C] // nil when there are tool sources
	defs      []model.ToolDef
	maxTurns  int
	parallel  int
	repair    int
	log       *slog.Logger
	chatSpan  string
	agentSpan string
	modelName string
}

var _ agent.Agent[struct{}] = (*Agent[struct{}])(nil)

// New builds an agent. It fails on a missing name or model, and on invalid
// or duplicate tool names.
func New[C any](cfg Config[C]) (*Agent[C], error) {
	if cfg.Name == "" {
		return nil, errors.New("llmagent: an agent needs a name")
	}
	if cfg.Model == nil {
		return nil, fmt.Errorf("llmagent: agent %s has no model", cfg.Name)
	}
	a := &Agent[C]{cfg: cfg, maxTurns: cfg.MaxTurns, parallel: cfg.MaxParallelTools, repair: cfg.RepairBudget, log: cfg.Logger}
	if a.maxTurns <= 0 {
		a.maxTurns = DefaultMaxTurns
	}
	if a.parallel <= 0 {
		a.parallel = DefaultMaxParallelTools
	}
	switch {
	case a.repair == 0:
		a.repair = DefaultRepairBudget
	case a.repair < 0:
		a.repair = 0
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	a.tools = append(a.tools, cfg.Tools...)
	for _, sub := range cfg.SubAgents {
		t, err := agenttool.New(sub, nil)
		if err != nil {
			return nil, fmt.Errorf("llmagent: agent %s: sub-agent: %w", cfg.Name, err)
		}
		a.tools = append(a.tools, t)
	}
	set, err := helikon.NewToolset(a.tools...)
	if err != nil {
		return nil, fmt.Errorf("llmagent: agent %s: %w", cfg.Name, err)
	}
	if len(cfg.ToolSources) == 0 {
		a.set = set
		a.defs = toolDefs(a.tools)
	}
	a.modelName = cfg.Model.Name()
	a.chatSpan = "chat " + a.modelName
	a.agentSpan = "invoke_agent " + cfg.Name
	return a, nil
}

// ToolNames returns the names of every tool a run of a may call: its own
// tools, its sub-agents (a tool each) and, recursively, theirs. complete is
// false when some are known only at run time (tool sources, or a sub-agent
// that cannot list its tools). The runner checks the permission rules
// against them (see [agent.ToolNamer]).
func (a *Agent[C]) ToolNames() (names []string, complete bool) {
	complete = len(a.cfg.ToolSources) == 0
	for _, t := range a.tools {
		names = append(names, t.Name())
	}
	for _, sub := range a.cfg.SubAgents {
		n, ok := agent.ToolNamesOf(sub)
		names, complete = append(names, n...), complete && ok
	}
	return names, complete
}

// Must is like [New] but panics on error.
func Must[C any](a *Agent[C], err error) *Agent[C] {
	if err != nil {
		panic(err)
	}
	return a
}

// Name returns the agent's name.
func (a *Agent[C]) Name() string { return a.cfg.Name }

// Description returns the agent's description.
func (a *Agent[C]) Description() string { return a.cfg.Description }

// Model returns the agent's model.
func (a *Agent[C]) Model() model.LLM { return a.cfg.Model }

func toolDefs[C any](tools []helikon.Tool[C]) []model.ToolDef {
	defs := make([]model.ToolDef, len(tools))
	for i, t := range tools {
		defs[i] = model.ToolDefOf(t)
	}
	return defs
}

// Run runs the agent on the conversation of inv. See the package
// documentation for what it guarantees.
func (a *Agent[C]) Run(ctx context.Context, inv *agent.Invocation[C]) iter.Seq2[*agent.Event, error] {
	return func(yield func(*agent.Event, error) bool) {
		r := &run[C]{a: a, inv: inv, rc: inv.RunContext(), yield: yield}
		r.depth = r.rc.AgentDepth()
		r.main(ctx)
	}
}

// errStopped reports that the consumer stopped iterating.
var errStopped = errors.New("llmagent: the event consumer stopped")

type run[C any] struct {
	a       *Agent[C]
	inv     *agent.Invocation[C]
	rc      *helikon.RunContext[C]
	yield   func(*agent.Event, error) bool
	stopped bool
	depth   int
	turn    int
	set     *helikon.Toolset[C]
	defs    []model.ToolDef
	perms   *helikon.Permissions
	current *model.ToolCall // the call being checked, for approval events
	invalid map[string]int

	// The tool calls' side, set up by the first turn that runs tools (see
	// execute).
	calls    context.Context // the run's, cancelable, with the invocation and forwarder
	cancel   context.CancelFunc
	requests chan forwardRequest // forwarded events, to the stream's goroutine
	exited   chan struct{}       // a worker is done
	runnable []*pending[C]       // the calls of the current turn...
	next     atomic.Int64        // ...and the index of the next one to start
}

// emit stamps ev as the agent's own and yields it.
func (r *run[C]) emit(ev *agent.Event) bool {
	if r.stopped {
		return false
	}
	ev.Agent, ev.Depth, ev.Turn = r.a.cfg.Name, r.depth, r.turn
	return r.forward(ev)
}

// forward yields ev unchanged: an event of the agent's own, stamped by emit,
// or one a tool forwarded from its sub-agent. It runs only on the goroutine
// iterating the stream.
func (r *run[C]) forward(ev *agent.Event) bool {
	if r.stopped {
		return false
	}
	if !r.yield(ev, nil) {
		r.stopped = true
	}
	return !r.stopped
}

func (r *run[C]) fail(span trace.Span, err error) {
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
	if !r.stopped {
		r.stopped = true
		r.yield(nil, err)
	}
}

func (r *run[C]) main(ctx context.Context) {
	a := r.a
	ctx, span := r.inv.Tracer().Start(ctx, a.agentSpan, trace.WithSpanKind(trace.SpanKindInternal))
	defer span.End()
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("gen_ai.agent.name", a.cfg.Name),
			attribute.String("gen_ai.request.model", a.modelName),
		)
	}
	if err := r.resolveTools(ctx); err != nil {
		r.fail(span, err)
		return
	}
	r.perms = r.inv.Permissions()
	if inner := r.perms.Approver; inner != nil {
		cp := *r.perms
		cp.Approver = helikon.ApproverFunc(func(ctx context.Context, req *helikon.ApprovalRequest) (bool, error) {
			if !r.emit(&agent.Event{Kind: agent.EventApprovalRequested, ToolCall: r.current, Reason: req.Reason}) {
				return false, errStopped
			}
			named := *req
			named.Agent = a.cfg.Name
			return inner.Approve(ctx, &named)
		})
		r.perms = &cp
	}
	defer r.stopCalls()
	var total model.Usage
	for r.turn = 1; r.turn <= a.maxTurns; r.turn++ {
		if !r.emit(&agent.Event{Kind: agent.EventTurnStarted}) {
			return
		}
		req := &model.Request{
			Instructions: a.cfg.Instructions,
			Messages:     r.inv.Messages(),
			Tools:        r.defs,
			Settings:     a.cfg.Settings,
		}
		resp, err := r.callModel(ctx, req)
		if err != nil {
			if !errors.Is(err, errStopped) {
				r.fail(span, fmt.Errorf("llmagent %s: turn %d: model %s: %w", a.cfg.Name, r.turn, a.modelName, err))
			}
			return
		}
		total.Add(resp.Usage)
		msg := resp.Message
		msg.Role = model.RoleAssistant
		// runTools fills in missing call ids: work on a copy, the response
		// belongs to the model (a scripted one may hand out the same reply
		// to concurrent runs).
		msg.ToolCalls = slices.Clone(msg.ToolCalls)
		if len(msg.ToolCalls) == 0 {
			r.inv.Append(msg)
			usage := resp.Usage
			r.emit(&agent.Event{Kind: agent.EventTurnCompleted, Text: msg.Text, Messages: []model.Message{msg}, Usage: &usage})
			if span.IsRecording() {
				span.SetAttributes(attribute.Int64("gen_ai.usage.input_tokens", total.InputTokens), attribute.Int64("gen_ai.usage.output_tokens", total.OutputTokens))
			}
			return
		}
		results, runErr := r.runTools(ctx, &msg)
		if r.stopped {
			return
		}
		if err := ctx.Err(); err != nil {
			r.fail(span, fmt.Errorf("llmagent %s: turn %d: %w", a.cfg.Name, r.turn, err))
			return
		}
		toolMsg := model.Message{Role: model.RoleTool, ToolResults: results}
		r.inv.Append(msg, toolMsg)
		usage := resp.Usage
		if !r.emit(&agent.Event{Kind: agent.EventTurnCompleted, Messages: []model.Message{msg, toolMsg}, Usage: &usage}) {
			return
		}
		if runErr != nil {
			r.fail(span, runErr)
			return
		}
	}
	r.turn = a.maxTurns
	r.fail(span, fmt.Errorf("llmagent %s: %w (%d): the model was still calling tools; raise MaxTurns or give a narrower task", a.cfg.Name, ErrMaxTurns, a.maxTurns))
}

func (r *run[C]) resolveTools(ctx context.Context) error {
	a := r.a
	if a.set != nil {
		r.set, r.defs = a.set, a.defs
		return nil
	}
	tools := append([]helikon.Tool[C](nil), a.tools...)
	for _, src := range a.cfg.ToolSources {
		ts, err := src.Tools(ctx)
		if err != nil {
			return fmt.Errorf("llmagent %s: tool source: %w", a.cfg.Name, err)
		}
		tools = append(tools, ts...)
	}
	set, err := helikon.NewToolset(tools...)
	if err != nil {
		return fmt.Errorf("llmagent %s: %w", a.cfg.Name, err)
	}
	r.set, r.defs = set, toolDefs(tools)
	return nil
}

func (r *run[C]) callModel(ctx context.Context, req *model.Request) (*model.Response, error) {
	ctx, span := r.inv.Tracer().Start(ctx, r.a.chatSpan, trace.WithSpanKind(trace.SpanKindClient))
	defer span.End()
	rec := span.IsRecording()
	if rec {
		span.SetAttributes(
			attribute.String("gen_ai.operation.name", "chat"),
			attribute.String("gen_ai.request.model", r.a.modelName),
		)
	}
	var resp *model.Response
	for c, err := range r.a.cfg.Model.Stream(ctx, req) {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
			return nil, err
		}
		if c.Text != "" && !r.emit(&agent.Event{Kind: agent.EventTextDelta, Text: c.Text}) {
			return nil, errStopped
		}
		if c.Response != nil {
			resp = c.Response
		}
	}
	if resp == nil {
		return nil, model.ErrNoResponse
	}
	if rec {
		span.SetAttributes(
			attribute.String("gen_ai.response.model", resp.Model),
			attribute.StringSlice("gen_ai.response.finish_reasons", []string{string(resp.StopReason)}),
			attribute.Int64("gen_ai.usage.input_tokens", resp.Usage.InputTokens),
			attribute.Int64("gen_ai.usage.output_tokens", resp.Usage.OutputTokens),
		)
	}
	return resp, nil
}

// pending is one tool call of a turn on its way through checking and
// execution.
type pending[C any] struct {
	call    *model.ToolCall
	tool    helikon.Tool[C]         // nil: unknown tool
	checked *helikon.CheckedCall[C] // nil: not allowed to run
	out     json.RawMessage
	err     error
}

// runTools checks and runs the tool calls of msg and returns their results
// in call order. The error is the repair-budget failure, reported after the
// turn has been recorded.
func (r *run[C]) runTools(ctx context.Context, msg *model.Message) ([]model.ToolResult, error) {
	calls := msg.ToolCalls
	ps := make([]pending[C], len(calls))
	nrun := 0
	for i := range calls {
		c := &calls[i]
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d_%d", r.turn, i)
		}
		p := &ps[i]
		p.call = c
		if !r.emit(&agent.Event{Kind: agent.EventToolCall, ToolCall: c}) {
			return nil, errStopped
		}
		t, ok := r.set.Lookup(c.Name)
		if !ok {
			p.err = helikon.Other(fmt.Errorf("there is no tool called %q; the available tools are: %s", c.Name, strings.Join(r.set.Names(), ", ")))
			continue
		}
		p.tool = t
		r.current = c
		checked, d, err := helikon.CheckCall(ctx, r.rc, r.perms, t, c.Args)
		r.current = nil
		if r.stopped {
			return nil, errStopped
		}
		if err != nil {
			p.err = err
			if helikon.KindOf(err) == helikon.KindDenied {
				if !r.emit(&agent.Event{Kind: agent.EventPermissionDenied, ToolCall: c, Reason: d.Reason}) {
					return nil, errStopped
				}
			}
			continue
		}
		p.checked = checked
		nrun++
	}

	if nrun > 0 {
		r.execute(ctx, ps, nrun)
		if r.stopped {
			return nil, errStopped
		}
	}

	results := make([]model.ToolResult, len(ps))
	failErr := r.countRepairs(ps)
	for i := range ps {
		p := &ps[i]
		results[i] = model.ToolResultFor(*p.call, p.out, p.err)
		if !r.emit(&agent.Event{Kind: agent.EventToolResult, ToolCall: p.call, ToolResult: &results[i]}) {
			return nil, errStopped
		}
	}
	return results, failErr
}

// forwardRequest is an event a tool's sub-agent forwards, on its way to the
// goroutine iterating the stream; ack carries back whether it was delivered.
type forwardRequest struct {
	ev  *agent.Event
	ack chan bool
}

// execute invokes the nrun permitted calls of ps on at most MaxParallelTools
// worker goroutines, taking them in call order (a model asking for thousands
// of calls does not get a goroutine each). Meanwhile the calling goroutine,
// the one iterating the stream, yields the events that the calls' sub-agents
// forward through the [agent.Forwarder] in their context: the consumer's
// code never runs on a worker. When the consumer stops iterating, the calls'
// context is cancelled and every later forward fails, which stops their
// sub-agents. execute returns once every worker has, so no goroutine outlives
// the turn (a tool that ignores cancellation delays it; see the package doc).
func (r *run[C]) execute(ctx context.Context, ps []pending[C], nrun int) {
	if r.calls == nil {
		// Once per run, not per turn: the calls' context lives as long as
		// the run (a consumer that stops ends both).
		calls, cancel := context.WithCancel(ctx)
		r.cancel = cancel
		r.requests = make(chan forwardRequest)
		r.exited = make(chan struct{}, r.a.parallel)
		r.calls = agent.ContextWithForwarder(agent.ContextWithInvocation(calls, r.inv), r.forwardFromTool)
	}
	r.runnable = r.runnable[:0]
	for i := range ps {
		if ps[i].checked != nil {
			r.runnable = append(r.runnable, &ps[i])
		}
	}
	r.next.Store(0)
	workers := min(r.a.parallel, nrun)
	for range workers {
		go r.work()
	}
	for running := workers; running > 0; {
		select {
		case req := <-r.requests:
			ok := r.forward(req.ev)
			if !ok {
				r.cancel()
			}
			req.ack <- ok
		case <-r.exited:
			running--
		}
	}
	clear(r.runnable) // the pending calls belong to the turn
}

// work invokes the calls of the turn one after another until none is left.
func (r *run[C]) work() {
	defer func() { r.exited <- struct{}{} }()
	for k := r.next.Add(1) - 1; k < int64(len(r.runnable)); k = r.next.Add(1) - 1 {
		r.invoke(r.calls, r.runnable[k])
	}
}

// forwardFromTool is the [agent.Forwarder] of the tool calls: it hands ev
// to the goroutine iterating the stream, which is in execute while tools run,
// and waits for the outcome. It may be called from any goroutine.
func (r *run[C]) forwardFromTool(ev *agent.Event) bool {
	if ev == nil || r.calls.Err() != nil {
		return false
	}
	ack := make(chan bool, 1)
	select {
	case r.requests <- forwardRequest{ev, ack}:
		return <-ack
	case <-r.calls.Done():
		return false
	}
}

// stopCalls cancels the context of the run's tool calls, if any ran.
func (r *run[C]) stopCalls() {
	if r.cancel != nil {
		r.cancel()
	}
}

// countRepairs updates the repair budget after a turn and returns the
// repair-budget failure, if any. The budget counts turns, not calls: the
// model sees the errors of a turn only in the next one, so several invalid
// calls of one tool in a turn (parallel calls) are one strike. A turn in
// which every call of a tool was valid clears that tool's strikes.
func (r *run[C]) countRepairs(ps []pending[C]) error {
	const invalid, counted = 1, 2
	var turn map[string]int // tool name -> invalid or counted this turn
	for i := range ps {
		if p := &ps[i]; p.tool != nil && helikon.KindOf(p.err) == helikon.KindInvalidArgs {
			if turn == nil {
				turn = map[string]int{}
			}
			turn[p.call.Name] = invalid
		}
	}
	if turn == nil && r.invalid == nil {
		return nil // the common case: nothing to count, nothing to clear
	}
	var failErr error
	for i := range ps {
		p := &ps[i]
		if p.tool == nil {
			continue
		}
		name := p.call.Name
		switch turn[name] {
		case 0: // every call of the tool this turn was valid
			delete(r.invalid, name)
		case invalid:
			turn[name] = counted
			if r.invalid == nil {
				r.invalid = map[string]int{}
			}
			r.invalid[name]++
			if n := r.invalid[name]; n > r.a.repair && failErr == nil {
				failErr = fmt.Errorf("llmagent %s: tool %s was called with invalid arguments in %d turns in a row: %w: %w", r.a.cfg.Name, name, n, ErrRepairBudget, firstInvalid(ps, name))
			}
		}
	}
	return failErr
}

// firstInvalid returns the first invalid-arguments error of a call of tool.
func firstInvalid[C any](ps []pending[C], tool string) error {
	for i := range ps {
		if ps[i].call.Name == tool && helikon.KindOf(ps[i].err) == helikon.KindInvalidArgs {
			return ps[i].err
		}
	}
	return nil
}

func (r *run[C]) invoke(ctx context.Context, p *pending[C]) {
	ctx, span := r.inv.Tracer().Start(ctx, "execute_tool "+p.call.Name, trace.WithSpanKind(trace.SpanKindInternal))
	p.out, p.err = p.checked.Invoke(r.rc.ToolContext(ctx, p.call.ID))
	if pe := (*helikon.PanicError)(nil); errors.As(p.err, &pe) {
		r.a.log.Error("tool panicked", "agent", r.a.cfg.Name, "tool", p.call.Name, "call_id", p.call.ID, "panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
	}
	if span.IsRecording() {
		span.SetAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", p.call.Name),
			attribute.String("gen_ai.tool.call.id", p.call.ID),
			attribute.String("gen_ai.tool.type", "function"),
		)
		if p.err != nil {
			span.SetAttributes(attribute.String("error.type", string(helikon.KindOf(p.err))))
			span.SetStatus(codes.Error, p.err.Error())
		}
	}
	span.End()
}
