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
// Not guaranteed: the sub-agent's events (its deltas and tool calls) are not
// forwarded to the parent's event stream; only its answer is. Its
// conversation is not persisted by the runner, only the parent's tool call
// and result are.
package agenttool

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
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
}

// Tool is an agent exposed as a tool.
type Tool[C any] struct {
	helikon.ToolInfo
	agent helikon.Agent[C]
}

type input struct {
	Request string `json:"request"`
}

type output struct {
	Response string `json:"response"`
}

// New returns agent a as a tool. It fails when the tool name (the agent's
// name unless opts gives one) is not a valid tool name.
func New[C any](a helikon.Agent[C], opts *Options) (*Tool[C], error) {
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
		ToolInfo: helikon.ToolInfo{ToolName: name, ToolDescription: desc, InputSchema: schema, Output: out, ToolEffect: opts.Effect},
		agent:    a,
	}, nil
}

// Invoke runs the agent on the request and returns {"response": answer}.
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
	parent, ok := helikon.InvocationFromContext[C](tc)
	if !ok {
		return nil, helikon.Other(fmt.Errorf("agent tool %s can only run inside an agent run (its tool context carries no invocation)", t.ToolName))
	}
	inv, err := parent.Fork([]helikon.Message{helikon.UserMessage(in.Request)})
	if err != nil {
		return nil, helikon.Other(fmt.Errorf("agent %s was not started: %w", t.agent.Name(), err))
	}
	var answer string
	for ev, err := range t.agent.Run(tc, inv) {
		if err != nil {
			return nil, helikon.Other(fmt.Errorf("agent %s failed: %w", t.agent.Name(), err))
		}
		if ev.Kind == helikon.EventTurnCompleted {
			for _, m := range ev.Messages {
				if m.Role == helikon.RoleAssistant && m.Text != "" {
					answer = m.Text
				}
			}
		}
	}
	return json.Marshal(output{Response: answer})
}
