// Package sequentialagent implements the sequential agent: it runs its
// sub-agents once each, in order, on the same conversation, so that each sees
// what the ones before it said and did. Sub-agents run one level deeper and
// share the run's state, actions and permission mode. The first error ends
// the run.
package sequentialagent

import (
	"context"
	"errors"
	"iter"

	"github.com/paigasus/helikon"
)

// Config configures a sequential agent.
type Config[C any] struct {
	Name        string
	Description string
	SubAgents   []helikon.Agent[C]
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

// Description returns the agent's description.
func (a *Agent[C]) Description() string { return a.cfg.Description }

// Run runs the sub-agents in order.
func (a *Agent[C]) Run(ctx context.Context, inv *helikon.Invocation[C]) iter.Seq2[*helikon.Event, error] {
	return func(yield func(*helikon.Event, error) bool) {
		sub, err := inv.SubAgent()
		if err != nil {
			yield(nil, err)
			return
		}
		for _, s := range a.cfg.SubAgents {
			for ev, err := range s.Run(ctx, sub) {
				if !yield(ev, err) || err != nil {
					return
				}
			}
		}
	}
}
