// Package agent is the agent runtime's contract: the [Agent] interface that
// LLM and workflow agents implement, the [Invocation] an agent runs with
// (run context, permission pipeline, conversation, tracer), and the [Event]
// stream a run produces, with [Collect] to drain it.
//
// The implementations live in the packages below: llmagent (a model that
// calls tools), loopagent and sequentialagent (workflow agents), agenttool
// (an agent exposed as a tool), runner (drives the top-level agent and
// persists its session) and agenttest (a scripted model for tests).
package agent

import (
	"context"
	"iter"
	"slices"
	"sync"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/model"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Agent is anything that can take part in a run: an LLM agent, or a workflow
// agent (loop, sequential) that drives other agents. The implementations live
// in the packages under agent/; a runner (agent/runner) drives the top-level
// agent, persists the conversation and emits the run-level events.
//
// Run returns the agent's events as a stream. It reads the conversation from
// inv and appends the messages it produces to it; every message it appends is
// also reported, in order, by an [EventTurnCompleted] event, which is what a
// runner persists. The stream may also carry events forwarded from
// sub-agents with conversations of their own ([Event.Forwarded]), which an
// agent passes on unchanged. A failure ends the stream with a nil event and
// the error. Stopping the iteration early (break) stops the agent and
// everything it started.
type Agent[C any] interface {
	// Name identifies the agent in events and traces, and names the tool a
	// parent agent exposes it as.
	Name() string
	// Description says what the agent does; a parent agent that exposes it
	// as a tool shows it to its model.
	Description() string
	// Run runs the agent on inv's conversation; see the type's doc.
	Run(ctx context.Context, inv *Invocation[C]) iter.Seq2[*Event, error]
}

// Invocation is what an agent runs with: the run context (application
// context, state, actions, mode, depth), the permission pipeline, the tracer
// and the conversation so far. Workflow agents hand their sub-agents a
// [Invocation.SubAgent] view that shares the conversation; agent-as-tool gives
// its agent a [Invocation.Fork] with a conversation of its own.
type Invocation[C any] struct {
	rc     *helikon.RunContext[C]
	perms  *helikon.Permissions
	tracer trace.Tracer
	conv   *conversation
}

type conversation struct {
	mu   sync.Mutex
	msgs []model.Message
}

// InvocationConfig configures [NewInvocation]. The zero value (or nil) gives
// an empty conversation, a permission pipeline with no rules (guards on, no
// approval handler) and no tracing.
type InvocationConfig struct {
	// Permissions is the pipeline every tool call must pass (nil: the zero
	// [helikon.Permissions]).
	Permissions *helikon.Permissions
	// History is the conversation so far (copied).
	History []model.Message
	// Tracer receives the agents' OpenTelemetry spans (nil: a no-op
	// tracer). The core knows nothing of tracing: it enters here, at the
	// agent runtime.
	Tracer trace.Tracer
}

// NewInvocation returns the invocation of a top-level agent on rc.
func NewInvocation[C any](rc *helikon.RunContext[C], cfg *InvocationConfig) *Invocation[C] {
	if cfg == nil {
		cfg = &InvocationConfig{}
	}
	inv := &Invocation[C]{rc: rc, perms: cfg.Permissions, tracer: cfg.Tracer, conv: &conversation{msgs: slices.Clone(cfg.History)}}
	if inv.perms == nil {
		inv.perms = &helikon.Permissions{}
	}
	if inv.tracer == nil {
		inv.tracer = noop.NewTracerProvider().Tracer("helikon")
	}
	return inv
}

// Tracer returns the run's tracer (a no-op tracer when tracing is off).
func (inv *Invocation[C]) Tracer() trace.Tracer { return inv.tracer }

// RunContext returns the run context.
func (inv *Invocation[C]) RunContext() *helikon.RunContext[C] { return inv.rc }

// Permissions returns the permission pipeline every tool call must pass.
func (inv *Invocation[C]) Permissions() *helikon.Permissions { return inv.perms }

// Messages returns a copy of the conversation so far.
func (inv *Invocation[C]) Messages() []model.Message {
	inv.conv.mu.Lock()
	defer inv.conv.mu.Unlock()
	return slices.Clone(inv.conv.msgs)
}

// Len returns the number of messages in the conversation.
func (inv *Invocation[C]) Len() int {
	inv.conv.mu.Lock()
	defer inv.conv.mu.Unlock()
	return len(inv.conv.msgs)
}

// Append adds msgs to the conversation.
func (inv *Invocation[C]) Append(msgs ...model.Message) {
	inv.conv.mu.Lock()
	defer inv.conv.mu.Unlock()
	inv.conv.msgs = append(inv.conv.msgs, msgs...)
}

// SubAgent returns the invocation of a sub-agent one level deeper that shares
// the conversation, state, actions and mode of inv. It fails when the depth
// limit would be exceeded (see [helikon.RunContext.SubAgent]).
func (inv *Invocation[C]) SubAgent() (*Invocation[C], error) {
	rc, err := inv.rc.SubAgent()
	if err != nil {
		return nil, err
	}
	return &Invocation[C]{rc: rc, perms: inv.perms, tracer: inv.tracer, conv: inv.conv}, nil
}

// Fork returns the invocation of a sub-agent one level deeper with a
// conversation of its own, starting from history. It shares state, actions
// and mode with inv.
func (inv *Invocation[C]) Fork(history []model.Message) (*Invocation[C], error) {
	rc, err := inv.rc.SubAgent()
	if err != nil {
		return nil, err
	}
	return &Invocation[C]{rc: rc, perms: inv.perms, tracer: inv.tracer, conv: &conversation{msgs: slices.Clone(history)}}, nil
}

// EventKind says what an [Event] reports.
type EventKind string

// The kinds of event, as they appear in JSON.
const (
	// EventRunStarted opens a run (emitted by the runner).
	EventRunStarted EventKind = "run_started"
	// EventTurnStarted precedes each model call.
	EventTurnStarted EventKind = "turn_started"
	// EventTextDelta carries a fragment of the model's text as it arrives.
	EventTextDelta EventKind = "text_delta"
	// EventToolCall reports a tool call the model made, before it is checked.
	EventToolCall EventKind = "tool_call"
	// EventApprovalRequested is emitted just before the approval handler is
	// asked about a call.
	EventApprovalRequested EventKind = "approval_requested"
	// EventPermissionDenied reports a call the permission pipeline refused;
	// the tool was not invoked.
	EventPermissionDenied EventKind = "permission_denied"
	// EventToolResult reports the outcome of a call, in call order.
	EventToolResult EventKind = "tool_result"
	// EventTurnCompleted closes a turn and carries the messages it added to
	// the conversation (the assistant message and, when it called tools,
	// the tool message) and the usage of its model call.
	EventTurnCompleted EventKind = "turn_completed"
	// EventRunCompleted closes a successful run with the final text and
	// the total usage (emitted by the runner).
	EventRunCompleted EventKind = "run_completed"
	// EventRunFailed closes a failed run (emitted by the runner).
	EventRunFailed EventKind = "run_failed"
)

// Event is one element of a run's event stream. Kind says which fields are
// set. Events encode to JSON (the CLI's --json output).
type Event struct {
	// Kind says what the event reports and so which fields are set.
	Kind EventKind `json:"kind"`
	// Agent is the name of the agent that emitted the event.
	Agent string `json:"agent,omitempty"`
	// Depth is the agent depth (0 for the top-level agent).
	Depth int `json:"depth,omitempty"`
	// Path is set on events forwarded from a sub-agent that runs on a
	// conversation of its own (agent-as-tool, see [Forwarder]): the ids of
	// the tool calls that started it, outermost first. ["c1"] marks an event
	// of the sub-agent that the consumer's agent started with call c1;
	// ["c1", "c7"] one of the sub-agent that one started with its call c7.
	// It is empty for the events of the agent being run and of the workflow
	// sub-agents (loop, sequential) that share its conversation. See
	// [Event.Forwarded].
	Path []string `json:"path,omitempty"`
	// Turn is the turn number within the agent's run, from 1.
	Turn int `json:"turn,omitempty"`
	// SessionID is set on run_started.
	SessionID string `json:"session_id,omitempty"`
	// Text is the fragment (text_delta) or the final answer
	// (turn_completed, run_completed).
	Text string `json:"text,omitempty"`
	// ToolCall is set on tool_call, approval_requested, permission_denied.
	ToolCall *model.ToolCall `json:"tool_call,omitempty"`
	// ToolResult is set on tool_result.
	ToolResult *model.ToolResult `json:"tool_result,omitempty"`
	// Reason explains a denial or an approval request.
	Reason string `json:"reason,omitempty"`
	// Messages are the messages a turn added (turn_completed).
	Messages []model.Message `json:"messages,omitempty"`
	// Usage is the usage of a turn's model call (turn_completed) or of the
	// whole run (run_completed: every model call of the run, the forwarded
	// turns of sub-agents included, each counted once).
	Usage *model.Usage `json:"usage,omitempty"`
	// Error is the failure of run_failed.
	Error string `json:"error,omitempty"`
}

// Forwarded reports whether e was forwarded from a sub-agent with a
// conversation of its own (its Path is not empty). Such an event is there to
// be observed: the messages of a forwarded turn_completed belong to the
// sub-agent's conversation, not to the consumer's, so a runner does not
// persist them and [Collect] does not take its answer from them; their usage
// is part of the run's total.
func (e *Event) Forwarded() bool { return len(e.Path) > 0 }

// ForwardedBy returns a copy of e, an event of a sub-agent that the tool call
// callID runs, for the stream of the agent that made the call: callID is put
// in front of its Path. Everything else, Agent and Depth included, stays as
// the sub-agent set it; the copy shares e's messages and results, which
// neither may change.
func (e *Event) ForwardedBy(callID string) *Event {
	cp := *e
	cp.Path = make([]string, 0, len(e.Path)+1)
	cp.Path = append(append(cp.Path, callID), e.Path...)
	return &cp
}

// Forwarder passes the events of a sub-agent that a tool call runs to the
// event stream of the agent that made the call, while the call runs. An LLM
// agent (agent/llmagent) puts one in the context of every tool call; find it
// with [ForwarderFromContext]. Package tool/agenttool uses it; a tool of
// your own that runs a sub-agent can too.
//
// The tool passes each event of the sub-agent, tagged with
// [Event.ForwardedBy] and its call id, in the order the sub-agent emitted it.
// A call returns once the consumer of the parent's stream has handled the
// event, so the event is seen before whatever the sub-agent does next (such
// as asking for an approval). It returns false when the event was not
// delivered and none will be: the consumer stopped iterating, the run's
// context was cancelled or the call is over. The tool must then stop the
// sub-agent (stop iterating its stream) and return.
//
// A Forwarder is safe for concurrent use from any goroutine, but only while
// the tool call runs: a call after the tool returned may wait until the agent
// runs tools again or the run ends. The consumer's code always runs on the
// goroutine iterating the stream, never on the tool's.
type Forwarder func(ev *Event) bool

type forwarderKey struct{}

// ContextWithForwarder returns a copy of ctx that carries f (nil: none, which
// hides a forwarder ctx carries from the code that gets the copy).
func ContextWithForwarder(ctx context.Context, f Forwarder) context.Context {
	return context.WithValue(ctx, forwarderKey{}, f)
}

// ForwarderFromContext returns the forwarder ctx carries, or nil.
func ForwarderFromContext(ctx context.Context) Forwarder {
	f, _ := ctx.Value(forwarderKey{}).(Forwarder)
	return f
}

// RunResult is a run's stream collected by [Collect].
type RunResult struct {
	// Text is the final answer: the text of the last assistant message.
	Text string
	// Events are all the events of the stream, in order.
	Events []*Event
	// Usage is the run's total usage (from run_completed), or the sum of
	// the turns seen, forwarded ones included, when there is none.
	Usage model.Usage
	// SessionID is the session the run used (from run_started); pass it to
	// the runner again to continue the conversation.
	SessionID string
}

// Collect drains a run's event stream. It returns the result so far together
// with the first error. Forwarded events (see [Event.Forwarded]) are kept in
// Events and counted in Usage, but the answer is the run's own.
func Collect(seq iter.Seq2[*Event, error]) (*RunResult, error) {
	r := &RunResult{}
	var runUsage *model.Usage
	for ev, err := range seq {
		if ev != nil {
			r.Events = append(r.Events, ev)
			switch ev.Kind {
			case EventRunStarted:
				r.SessionID = ev.SessionID
			case EventTurnCompleted:
				if ev.Usage != nil {
					r.Usage.Add(*ev.Usage)
				}
				if ev.Forwarded() {
					break // a sub-agent's answer is not the run's
				}
				for _, m := range ev.Messages {
					if m.Role == model.RoleAssistant && m.Text != "" {
						r.Text = m.Text
					}
				}
			case EventRunCompleted:
				runUsage = ev.Usage
				if ev.Text != "" {
					r.Text = ev.Text
				}
			}
		}
		if err != nil {
			return r, err
		}
	}
	if runUsage != nil {
		r.Usage = *runUsage
	}
	return r, nil
}

type invocationKey struct{}

// ContextWithInvocation returns a copy of ctx that carries inv. An LLM agent
// puts its invocation in the context of every tool call, so that a tool that
// runs a sub-agent (agent-as-tool) continues the same run under the same
// permission pipeline.
func ContextWithInvocation[C any](ctx context.Context, inv *Invocation[C]) context.Context {
	return context.WithValue(ctx, invocationKey{}, inv)
}

// InvocationFromContext returns the invocation ctx carries, if any.
func InvocationFromContext[C any](ctx context.Context) (*Invocation[C], bool) {
	inv, ok := ctx.Value(invocationKey{}).(*Invocation[C])
	return inv, ok
}

// ToolNamer is implemented by agents that can list, once built, the names of
// every tool a run of them may call, sub-agents' included; complete is false
// when some are known only at run time. The runner uses it to check the
// permission rules against the tools there are ([helikon.Permissions.CheckTools]).
type ToolNamer interface {
	ToolNames() (names []string, complete bool)
}

// ToolNamesOf returns a's tool names when it is a [ToolNamer], and
// complete false otherwise.
func ToolNamesOf(a any) (names []string, complete bool) {
	if tn, ok := a.(ToolNamer); ok {
		return tn.ToolNames()
	}
	return nil, false
}
