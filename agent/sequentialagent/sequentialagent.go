// Package sequentialagent implements the sequential agent: it runs its
// sub-agents once each, in order, on the same conversation, so that each sees
// what the ones before it said and did. Sub-agents run one level deeper and
// share the run's state, actions, permission pipeline and mode. The first
// error ends the run.
//
// What it guarantees: sub-agents run strictly one after another, never
// concurrently; their events are passed on unchanged and in order; a
// sub-agent that fails, or a consumer that stops reading, ends the run before
// any later sub-agent starts. Nesting is bounded by the run's maximum agent
// depth (see helikon.RunConfig), which fails the run rather than recursing.
//
// What it does not do: it does not retry, skip or roll back a failed step
// (what the earlier sub-agents did, including tool calls with effects, stays
// done), and it gives no sub-agent more permissions than the run has.
package sequentialagent

import (
	"context"
	"errors"
	"iter"

	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/internal/workflow"
)

// Config configures a sequential agent.
type Config[C any] struct {
	// Name identifies the agent in events; it is required.
	Name string
	// Description says what the agent does; a parent that exposes it as a
	// tool (agenttool) shows it to its model.
	Description string
	// SubAgents run in this order; at least one is required.
	SubAgents []agent.Agent[C]
}

// Agent is a sequential agent.
type Agent[C any] struct {
	cfg Config[C]
}

// New returns a sequential agent. It fails without a name or sub-agents.
func New[C any](cfg Config[C]) (*Agent[C], error) {
	if cfg.Name == "" {
		return nil, errors.New("sequentialagent: an agent needs a name")
	}
	if len(cfg.SubAgents) == 0 {
		return nil, errors.New("sequentialagent: agent " + cfg.Name + " has no sub-agents")
	}
	return &Agent[C]{cfg: cfg}, nil
}

// Name returns the agent's name.
func (a *Agent[C]) Name() string { return a.cfg.Name }

// ToolNames returns the names of the tools of every sub-agent (see
// [agent.ToolNamer]).
func (a *Agent[C]) ToolNames() (names []string, complete bool) {
	complete = true
	for _, sub := range a.cfg.SubAgents {
		n, ok := agent.ToolNamesOf(sub)
		names, complete = append(names, n...), complete && ok
	}
	return names, complete
}

// Description returns the agent's description.
func (a *Agent[C]) Description() string { return a.cfg.Description }

// Run runs the sub-agents in order.
func (a *Agent[C]) Run(ctx context.Context, inv *agent.Invocation[C]) iter.Seq2[*agent.Event, error] {
	return workflow.Run(ctx, inv, a.cfg.SubAgents, nil)
}
