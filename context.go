package helikon

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
)

// DefaultMaxAgentDepth is the sub-agent nesting limit when none is configured:
// deep enough for agent-as-tool hierarchies people build, shallow enough that a
// model calling itself recursively stops quickly.
const DefaultMaxAgentDepth = 8

// State is run-scoped key/value state shared by every agent and tool of one
// run, sub-agents included. It is safe for concurrent use and its zero value
// is an empty store ready to use. Values should be JSON-encodable so that a
// session store can persist them.
type State struct {
	mu sync.Mutex
	m  map[string]any
}

// Get returns the value stored under key.
func (s *State) Get(key string) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok
}

// Set stores v under key.
func (s *State) Set(key string, v any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]any)
	}
	s.m[key] = v
}

// Delete removes key.
func (s *State) Delete(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, key)
}

// Update replaces the value under key with f(old, present) atomically with
// respect to every other method of s. f must not call methods of s.
func (s *State) Update(key string, f func(old any, present bool) any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]any)
	}
	old, ok := s.m[key]
	s.m[key] = f(old, ok)
}

// IncrementIfBelow atomically adds one to the integer counter under key when
// its current value is below limit, and reports the value after the call and
// whether it was incremented. A missing key counts as zero. It is the
// primitive for per-run caps shared across sub-agents, such as a maximum
// number of web fetches. A non-integer value under key is an error.
func (s *State) IncrementIfBelow(key string, limit int64) (int64, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	switch v := s.m[key].(type) {
	case nil:
	case int64:
		n = v
	case int:
		n = int64(v)
	case float64: // a counter restored from JSON
		n = int64(v)
	default:
		return 0, false, fmt.Errorf("helikon: state key %q holds %T, not a counter", key, v)
	}
	if n >= limit {
		return n, false, nil
	}
	if s.m == nil {
		s.m = make(map[string]any)
	}
	n++
	s.m[key] = n
	return n, true, nil
}

// Snapshot returns a shallow copy of every entry, for persistence.
func (s *State) Snapshot() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.m)
}

// Restore replaces every entry with a copy of m.
func (s *State) Restore(m map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m = maps.Clone(m)
}

// Actions lets a tool steer the agents around it. Its zero value is ready to
// use and safe for concurrent use.
type Actions struct {
	escalated atomic.Bool
}

// Escalate asks the enclosing loop agent to stop after its current
// iteration.
func (a *Actions) Escalate() { a.escalated.Store(true) }

// Escalated reports whether Escalate was called since the last Reset.
func (a *Actions) Escalated() bool { return a.escalated.Load() }

// Reset clears an escalation. A loop agent calls it when it has acted on one.
func (a *Actions) Reset() { a.escalated.Store(false) }

// modeCell is a permission mode shared by a run and its sub-agents that can
// only be tightened.
type modeCell struct {
	mu   sync.Mutex
	mode PermissionMode
}

// RunConfig configures a [RunContext]. The zero value (or nil) gives Default
// mode, a fresh State and [DefaultMaxAgentDepth].
type RunConfig struct {
	Mode          PermissionMode // the run's starting mode; it can only be tightened later
	MaxAgentDepth int            // 0: DefaultMaxAgentDepth
	State         *State         // nil: a new empty State (set it to resume a session)
}

// RunContext is everything a run shares between its agents and tools: the
// application context, session state, actions, the permission mode and the
// agent depth. Runners create one per run; tools see it only through
// the narrower [ToolContext].
type RunContext[C any] struct {
	app      C
	state    *State
	actions  *Actions
	mode     *modeCell
	depth    int
	maxDepth int
}

// NewRunContext returns the context of a new run with application context app.
func NewRunContext[C any](app C, cfg *RunConfig) *RunContext[C] {
	if cfg == nil {
		cfg = &RunConfig{}
	}
	rc := &RunContext[C]{
		app:      app,
		state:    cfg.State,
		actions:  &Actions{},
		mode:     &modeCell{mode: cfg.Mode},
		maxDepth: cfg.MaxAgentDepth,
	}
	if rc.state == nil {
		rc.state = &State{}
	}
	if rc.maxDepth <= 0 {
		rc.maxDepth = DefaultMaxAgentDepth
	}
	return rc
}

// App returns the application context.
func (rc *RunContext[C]) App() C { return rc.app }

// State returns the run-scoped state shared across sub-agents.
func (rc *RunContext[C]) State() *State { return rc.state }

// Actions returns the run's actions handle.
func (rc *RunContext[C]) Actions() *Actions { return rc.actions }

// PermissionMode returns the current permission mode.
func (rc *RunContext[C]) PermissionMode() PermissionMode {
	rc.mode.mu.Lock()
	defer rc.mode.mu.Unlock()
	return rc.mode.mode
}

// TightenMode switches the run (and every sub-agent sharing it) to mode m. It
// fails with an error wrapping [ErrModeLoosen] when m would loosen the current
// mode; see [PermissionMode.CanBecome].
func (rc *RunContext[C]) TightenMode(m PermissionMode) error {
	rc.mode.mu.Lock()
	defer rc.mode.mu.Unlock()
	if !rc.mode.mode.CanBecome(m) {
		return fmt.Errorf("helikon: cannot change permission mode from %s to %s: %w", rc.mode.mode, m, ErrModeLoosen)
	}
	rc.mode.mode = m
	return nil
}

// AgentDepth returns the nesting depth of the agent this context belongs to:
// 0 for the top-level agent.
func (rc *RunContext[C]) AgentDepth() int { return rc.depth }

// MaxAgentDepth returns the nesting limit.
func (rc *RunContext[C]) MaxAgentDepth() int { return rc.maxDepth }

// ErrMaxAgentDepth is returned (wrapped) by [RunContext.SubAgent] when the
// nesting limit would be exceeded.
var ErrMaxAgentDepth = errors.New("maximum agent depth exceeded")

// SubAgent returns the context for a sub-agent one level deeper. It shares the
// state, actions and permission mode of rc. It fails when the new depth
// would exceed the maximum.
func (rc *RunContext[C]) SubAgent() (*RunContext[C], error) {
	if rc.depth+1 > rc.maxDepth {
		return nil, fmt.Errorf("helikon: sub-agent at depth %d: %w (limit %d); an agent is probably calling itself", rc.depth+1, ErrMaxAgentDepth, rc.maxDepth)
	}
	child := *rc
	child.depth++
	return &child, nil
}

// ToolContext returns the view of rc that a tool call sees. ctx carries the
// call's cancellation and deadline; callID identifies the call (may be "").
func (rc *RunContext[C]) ToolContext(ctx context.Context, callID string) *ToolContext[C] {
	return &ToolContext[C]{Context: ctx, rc: rc, callID: callID}
}

// ToolContext is what a tool sees of the run: a narrow view of the
// [RunContext]. It is a [context.Context] (cancellation and deadline of the
// call, which a tool must honour) and gives the application context, session
// state, actions, permission mode and agent depth. It deliberately has
// no handle on the session store, so a tool cannot go around the runner's
// persistence.
type ToolContext[C any] struct {
	context.Context
	rc      *RunContext[C]
	callID  string
	targets *Targets
}

// NewToolContext returns a ToolContext for a single call outside of any run:
// a fresh RunContext with app and cfg. It is meant for tests and one-shot
// invocations such as the helikon CLI's tool command.
func NewToolContext[C any](ctx context.Context, app C, cfg *RunConfig) *ToolContext[C] {
	return NewRunContext(app, cfg).ToolContext(ctx, "")
}

// App returns the application context.
func (tc *ToolContext[C]) App() C { return tc.rc.app }

// State returns the run-scoped state shared across sub-agents.
func (tc *ToolContext[C]) State() *State { return tc.rc.state }

// Actions returns the actions handle; Actions().Escalate() stops an enclosing
// loop agent.
func (tc *ToolContext[C]) Actions() *Actions { return tc.rc.actions }

// PermissionMode returns the run's current permission mode.
func (tc *ToolContext[C]) PermissionMode() PermissionMode { return tc.rc.PermissionMode() }

// AgentDepth returns the depth of the agent making the call.
func (tc *ToolContext[C]) AgentDepth() int { return tc.rc.depth }

// MaxAgentDepth returns the nesting limit.
func (tc *ToolContext[C]) MaxAgentDepth() int { return tc.rc.maxDepth }

// Targets returns what the permission pipeline found this call touches: the
// targets the tool itself reported for exactly these arguments (see
// [Targeter]), handed on by [CheckedCall.Invoke] so that the tool need not
// work them out a second time, with the tool's decoding of the arguments
// when it stored one ([Targets.Decoded]). It is nil when the call did not come through
// [CheckCall] (a tool invoked directly) or the tool reports no targets; a
// tool that depends on its targets computes them itself then. The tool must
// not change them.
func (tc *ToolContext[C]) Targets() *Targets { return tc.targets }

// CallID returns the identifier of this tool call, or "".
func (tc *ToolContext[C]) CallID() string { return tc.callID }

// Run returns the run context behind tc. It is meant for tools that start
// sub-agents (agent-as-tool); it still gives no access to the session store.
func (tc *ToolContext[C]) Run() *RunContext[C] { return tc.rc }
