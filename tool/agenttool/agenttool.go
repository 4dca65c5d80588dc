// Package agenttool exposes an agent as a tool: the model of a parent agent
// calls it with a request, the agent runs one level deeper on a conversation
// of its own that starts with that request, and its final answer is the
// tool's output.
//
// The sub-agent shares the parent run's state, actions, permission mode and
// permission pipeline: its own tool calls are checked exactly like the
// parent's. Its depth is counted; beyond the run's maximum agent depth
// (default [helikon.DefaultMaxAgentDepth]) the call fails with an error
// wrapping [helikon.ErrMaxAgentDepth], which the parent's model sees as an
// error result.
//
// # Sub-agent events
//
// When the tool runs inside an LLM agent (agent/llmagent), every event of
// the sub-agent (its turns, text deltas, tool calls, approval requests,
// denials and results, and the events of its own sub-agents) reaches the
// parent's event stream while the sub-agent runs, through the
// [agent.Forwarder] in the tool call's context. Each is tagged with
// [agent.Event.ForwardedBy] and the call's id, so it keeps the sub-agent's
// Agent and Depth and gets a Path ([agent.Event.Forwarded] reports true);
// all of them come before the parent's tool_result for the call. The
// sub-agent's events come in the order it emitted them; those of sub-agents
// running at the same time (parallel calls) interleave, and their Path tells
// them apart. A consumer that stops iterating, or a cancelled context, stops
// the sub-agent. Options.NoForward keeps the events private as before.
//
// A runner does not persist forwarded events: the sub-agent's conversation is
// its own, and only the parent's tool call and result enter the session. The
// usage of the sub-agent's model calls is in its forwarded turn_completed
// events and so in the run's total (run_completed), counted once.
//
// Not guaranteed: the sub-agent's conversation is not persisted anywhere; a
// resumed session has only its answer. Without a forwarder (the tool invoked
// outside an LLM agent, or NoForward) its usage is not in the run's total.
package agenttool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/model"
)

// Options configures an agent tool. The zero value (or nil) names the tool
// after the agent and describes it with the agent's description.
type Options struct {
	// Name is the tool's name as the model sees it ("": the agent's name).
	Name string
	// Description tells the model when to call the tool ("": the agent's
	// description).
	Description string
	// Effect is the tool's declared effect (default side-effect: the
	// sub-agent may do anything its own tools can).
	Effect helikon.Effect
	// NoForward keeps the sub-agent's events out of the parent's stream:
	// only its answer is returned, and its usage is not in the run's total.
	NoForward bool
}

// Tool is an agent exposed as a tool.
type Tool[C any] struct {
	helikon.ToolInfo
	agent     agent.Agent[C]
	noForward bool
}

type input struct {
	Request string `json:"request"`
}

type output struct {
	Response string `json:"response"`
}

// New returns agent a as a tool. It fails when the tool name (the agent's
// name unless opts gives one) is not a valid tool name.
func New[C any](a agent.Agent[C], opts *Options) (*Tool[C], error) {
	if opts == nil {
		opts = &Options{}
	}
	name := opts.Name
	if name == "" {
		name = a.Name()
	}
	if err := helikon.ValidateToolName(name); err != nil {
		return nil, fmt.Errorf("agenttool: agent %q: %w", a.Name(), err)
	}
	desc := opts.Description
	if desc == "" {
		desc = a.Description()
	}
	if desc == "" {
		desc = "Delegate a task to the agent " + name + "."
	}
	schema := &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"request": {Type: "string", Description: "the complete task for the agent: it sees nothing of this conversation but this text"},
		},
		Required:             []string{"request"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}
	out := &jsonschema.Schema{
		Type:       "object",
		Properties: map[string]*jsonschema.Schema{"response": {Type: "string"}},
		Required:   []string{"response"},
	}
	return &Tool[C]{
		ToolInfo:  helikon.ToolInfo{ToolName: name, ToolDescription: desc, InputSchema: schema, Output: out, ToolEffect: opts.Effect},
		agent:     a,
		noForward: opts.NoForward,
	}, nil
}

// Invoke runs the agent on the request and returns {"response": answer},
// forwarding the agent's events to the parent's stream (see the package
// doc).
func (t *Tool[C]) Invoke(tc *helikon.ToolContext[C], args json.RawMessage) (json.RawMessage, error) {
	var in input
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return nil, &helikon.InvalidArgsError{Tool: t.ToolName, Problems: []string{"send {\"request\": \"the task\"}: " + err.Error()}}
	}
	if strings.TrimSpace(in.Request) == "" {
		return nil, &helikon.InvalidArgsError{Tool: t.ToolName, Problems: []string{"request: must be a non-empty string describing the task"}}
	}
	parent, ok := agent.InvocationFromContext[C](tc)
	if !ok {
		return nil, helikon.Other(fmt.Errorf("agent tool %s can only run inside an agent run (its tool context carries no invocation)", t.ToolName))
	}
	inv, err := parent.Fork([]model.Message{model.UserMessage(in.Request)})
	if err != nil {
		return nil, helikon.Other(fmt.Errorf("agent %s was not started: %w", t.agent.Name(), err))
	}
	var forward agent.Forwarder
	if !t.noForward {
		forward = agent.ForwarderFromContext(tc)
	}
	// The sub-agent does not see this call's forwarder: its events reach the
	// parent through this loop, tagged, and its own tools get forwarders
	// from it.
	var ctx context.Context = tc
	if agent.ForwarderFromContext(tc) != nil {
		ctx = agent.ContextWithForwarder(tc, nil)
	}
	var answer string
	for ev, err := range t.agent.Run(ctx, inv) {
		if err != nil {
			return nil, helikon.Other(fmt.Errorf("agent %s failed: %w", t.agent.Name(), err))
		}
		if ev.Kind == agent.EventTurnCompleted && !ev.Forwarded() {
			for _, m := range ev.Messages {
				if m.Role == model.RoleAssistant && m.Text != "" {
					answer = m.Text
				}
			}
		}
		if forward != nil && !forward(ev.ForwardedBy(tc.CallID())) {
			// The parent's consumer stopped or the run was cancelled:
			// leaving the loop stops the sub-agent.
			return nil, helikon.Other(fmt.Errorf("agent %s was stopped: %w", t.agent.Name(), stopCause(tc)))
		}
	}
	return json.Marshal(output{Response: answer})
}

// errParentStopped is the cause of a stop when the parent's consumer stopped
// while the run's context is still live.
var errParentStopped = errors.New("the parent's event stream is no longer read")

func stopCause(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return errParentStopped
}
