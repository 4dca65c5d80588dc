package workflow

import (
	"context"
	"errors"
	"iter"
	"slices"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
)

// step is a sub-agent that records each run in log and emits one event, or
// fails with err.
type step struct {
	name string
	log  *[]string
	err  error
}

func (s step) Name() string        { return s.name }
func (s step) Description() string { return "" }
func (s step) Run(_ context.Context, inv *agent.Invocation[struct{}]) iter.Seq2[*agent.Event, error] {
	return func(yield func(*agent.Event, error) bool) {
		*s.log = append(*s.log, s.name)
		if s.err != nil {
			yield(nil, s.err)
			return
		}
		yield(&agent.Event{Kind: agent.EventTextDelta, Agent: s.name, Depth: inv.RunContext().AgentDepth()}, nil)
	}
}

func newInv(maxDepth int) *agent.Invocation[struct{}] {
	return agent.NewInvocation(helikon.NewRunContext(struct{}{}, &helikon.RunConfig{MaxAgentDepth: maxDepth}), nil)
}

func TestRunRunsRoundsUntilNextSaysStop(t *testing.T) {
	var log []string
	var asked []int
	subs := []agent.Agent[struct{}]{step{"a", &log, nil}, step{"b", &log, nil}}
	next := func(rounds int) (bool, error) {
		asked = append(asked, rounds)
		return rounds < 3, nil
	}
	var depths []int
	for ev, err := range Run(context.Background(), newInv(0), subs, next) {
		if err != nil {
			t.Fatal(err)
		}
		depths = append(depths, ev.Depth)
	}
	if want := []string{"a", "b", "a", "b", "a", "b"}; !slices.Equal(log, want) {
		t.Errorf("ran %v, want %v", log, want)
	}
	if !slices.Equal(asked, []int{1, 2, 3}) {
		t.Errorf("next asked with %v, want [1 2 3]", asked)
	}
	if !slices.Equal(depths, []int{1, 1, 1, 1, 1, 1}) {
		t.Errorf("sub-agents ran at depths %v, want one level deeper", depths)
	}
}

func TestRunWithoutNextRunsOneRound(t *testing.T) {
	var log []string
	subs := []agent.Agent[struct{}]{step{"a", &log, nil}, step{"b", &log, nil}}
	if _, err := agent.Collect(Run(context.Background(), newInv(0), subs, nil)); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(log, []string{"a", "b"}) {
		t.Errorf("ran %v, want [a b]", log)
	}
}

func TestRunEndsAtTheFirstFailure(t *testing.T) {
	boom := errors.New("boom")
	stop := errors.New("stop")
	tests := []struct {
		name    string
		subs    func(log *[]string) []agent.Agent[struct{}]
		next    func(int) (bool, error)
		wantErr error
		wantLog []string
	}{
		{"a sub-agent's error", func(log *[]string) []agent.Agent[struct{}] {
			return []agent.Agent[struct{}]{step{"a", log, boom}, step{"b", log, nil}}
		}, func(int) (bool, error) { return true, nil }, boom, []string{"a"}},
		{"next's error", func(log *[]string) []agent.Agent[struct{}] {
			return []agent.Agent[struct{}]{step{"a", log, nil}}
		}, func(int) (bool, error) { return true, stop }, stop, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log []string
			var got error
			for _, err := range Run(context.Background(), newInv(0), tt.subs(&log), tt.next) {
				got = err
			}
			if !errors.Is(got, tt.wantErr) || !slices.Equal(log, tt.wantLog) {
				t.Errorf("error %v after %v, want %v after %v", got, log, tt.wantErr, tt.wantLog)
			}
		})
	}
}

func TestRunStopsWhenTheConsumerStops(t *testing.T) {
	var log []string
	subs := []agent.Agent[struct{}]{step{"a", &log, nil}, step{"b", &log, nil}}
	for range Run(context.Background(), newInv(0), subs, func(int) (bool, error) { return true, nil }) {
		break
	}
	if !slices.Equal(log, []string{"a"}) {
		t.Errorf("ran %v after the consumer stopped at the first event, want [a]", log)
	}
}

func TestRunFailsBeyondTheDepthLimit(t *testing.T) {
	var log []string
	inv, err := newInv(1).SubAgent() // already at the limit
	if err != nil {
		t.Fatal(err)
	}
	_, err = agent.Collect(Run(context.Background(), inv, []agent.Agent[struct{}]{step{"a", &log, nil}}, nil))
	if !errors.Is(err, helikon.ErrMaxAgentDepth) || len(log) > 0 {
		t.Errorf("error %v, ran %v; want a depth error before any sub-agent runs", err, log)
	}
}
