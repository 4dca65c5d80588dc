// Package loopagent implements the loop agent: it runs its sub-agents in
// order, again and again, until one of their tools escalates (through
// ToolContext.Actions().Escalate()) or the maximum number of iterations is
// reached.
//
// Guarantees: an escalation stops the loop after the current iteration (the
// sub-agents after the one that escalated still run in that iteration), and
// the loop resets the escalation when it acts on it, so an enclosing loop
// does not stop too. Sub-agents run one level deeper, on the same
// conversation, state, actions and permission mode. Reaching MaxIterations
// ends the loop normally; a sub-agent's error ends it with that error.
package loopagent

import (
	"context"
	"errors"
	"iter"

	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/internal/workflow"
)

// DefaultMaxIterations bounds a loop whose configuration gives no maximum.
const DefaultMaxIterations = 10

// Config configures a loop agent.
type Config[C any] struct {
	// Name identifies the agent in events; it is required.
	Name string
	// Description says what the agent does; a parent that exposes it as a
	// tool (agenttool) shows it to its model.
	Description string
	// SubAgents run in order in every iteration.
	SubAgents []agent.Agent[C]
	// MaxIterations bounds the iterations (0: DefaultMaxIterations).
	MaxIterations int
}

// Agent is a loop agent.
type Agent[C any] struct {
	cfg Config[C]
}

// New returns a loop agent. It fails without a name or sub-agents.
func New[C any](cfg Config[C]) (*Agent[C], error) {
	if cfg.Name == "" {
		return nil, errors.New("loopagent: an agent needs a name")
	}
	if len(cfg.SubAgents) == 0 {
		return nil, errors.New("loopagent: agent " + cfg.Name + " has no sub-agents")
	}
	if cfg.MaxIterations <= 0 {
		cfg.MaxIterations = DefaultMaxIterations
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

// Run runs the loop.
func (a *Agent[C]) Run(ctx context.Context, inv *agent.Invocation[C]) iter.Seq2[*agent.Event, error] {
	actions := inv.RunContext().Actions()
	return workflow.Run(ctx, inv, a.cfg.SubAgents, func(rounds int) (bool, error) {
		if actions.Escalated() {
			actions.Reset()
			return false, nil
		}
		if err := ctx.Err(); err != nil {
			return false, err
		}
		return rounds < a.cfg.MaxIterations, nil
	})
}
