// Package workflow holds the run of the workflow agents (agent/loopagent and
// agent/sequentialagent): rounds of sub-agents, one after another, on the
// conversation of the agent that runs them. Each package adds only its rule
// for when the rounds end.
package workflow

import (
	"context"
	"iter"

	"github.com/paigasus/helikon/agent"
)

// Run returns the event stream of a workflow agent on inv. Its sub-agents
// run one level deeper than inv (see [agent.Invocation.SubAgent]), on inv's
// conversation, strictly one after another, and their events pass on
// unchanged and in order. After each round of all of subs, next is asked,
// with the number of rounds done (from 1), whether another runs; a nil next
// runs one round. An error from next ends the stream with it. A sub-agent's
// error, a depth limit or a consumer that stops reading ends the run at once.
func Run[C any](ctx context.Context, inv *agent.Invocation[C], subs []agent.Agent[C], next func(rounds int) (bool, error)) iter.Seq2[*agent.Event, error] {
	return func(yield func(*agent.Event, error) bool) {
		sub, err := inv.SubAgent()
		if err != nil {
			yield(nil, err)
			return
		}
		for rounds := 1; ; rounds++ {
			for _, s := range subs {
				for ev, err := range s.Run(ctx, sub) {
					if !yield(ev, err) || err != nil {
						return
					}
				}
			}
			if next == nil {
				return
			}
			more, err := next(rounds)
			if err != nil {
				yield(nil, err)
				return
			}
			if !more {
				return
			}
		}
	}
}
