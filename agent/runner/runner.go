// Package runner drives an agent through a run: it loads the session,
// restores the run state, appends the user's prompt, runs the agent, persists
// every completed turn, and frames the agent's events with run_started and
// run_completed (or run_failed).
//
// # Guarantees
//
//   - The prompt is persisted before the agent starts, and each completed
//     turn (its messages and the state after it) in one atomic store
//     append as soon as the agent reports it, even when the run's context
//     is cancelled just after. A crash loses at most the turn in progress.
//   - A session is run by one run at a time per runner: a second concurrent
//     run of the same session id fails with [ErrSessionBusy]. Runs on
//     different sessions are independent.
//   - Events forwarded from sub-agents with conversations of their own
//     (agent-as-tool; [agent.Event.Forwarded]) are passed on to the
//     consumer as they come but never persisted: the session holds the
//     conversation of the top-level agent (and of the workflow sub-agents
//     sharing it) only, so resuming it replays exactly what that agent saw.
//   - The usage on run_completed is the sum of every turn_completed in the
//     stream, forwarded ones included: every model call of the run, the
//     sub-agents' too, counted once each.
//   - Tracing is off unless Config.Tracer is set.
//   - [New] refuses a permission rule that names no tool of the agent's
//     (nor of Config.OtherTools), when the agent lists its tools
//     ([agent.ToolNamer]): such a rule would match nothing.
//   - A failed run is reported once, by the stream's error; the logger
//     hears of it at Debug only.
//
// # Not guaranteed
//
// Rules are not checked against tools that tool sources add at run time
// (an MCP server's): call [helikon.Permissions.CheckTools] once they are
// known.
//
// Two runners (or two processes) sharing one store may run the same session
// at once; the store keeps each append atomic but the conversation may then
// interleave. Use one runner per store, or session ids per process.
package runner

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/session"
	"github.com/paigasus/helikon/workspace"
)

// ErrSessionBusy is returned when a session is already being run.
var ErrSessionBusy = errors.New("the session is already being run")

// Config configures a runner. Agent is required; the zero value of every other
// field means the default.
type Config[C any] struct {
	// Agent is the top-level agent every run starts; it is required.
	Agent agent.Agent[C]
	// App is the application context handed to every tool.
	App C
	// Store persists sessions (nil: a new in-memory store).
	Store session.Store
	// Permissions is the pipeline every tool call passes (nil: no rules,
	// guards on, no approval handler: guarded calls are denied). Its rules
	// must name tools the agent has (see [New]).
	Permissions *helikon.Permissions
	// OtherTools are names of tools the agent does not have that the
	// permission rules may still name (see [New]): a program whose toolset
	// depends on its configuration, as helikon's CLI builds WebSearch only
	// with a search key, keeps one policy for all of them.
	OtherTools []string
	// Mode is the permission mode runs start in.
	Mode helikon.PermissionMode
	// Tracer receives OpenTelemetry spans (nil: tracing off).
	Tracer trace.Tracer
	// MaxAgentDepth bounds sub-agent nesting (0: the default, 8).
	MaxAgentDepth int
	// Logger receives diagnostics (nil: slog.Default()): run failures and
	// completions, both at Debug, since a failure also ends the run's
	// stream with its error and the caller reports it (logging it at Warn
	// as well printed every failure twice). Prompts, tool arguments and
	// outputs are never logged.
	Logger *slog.Logger
	// Workspaces, when set, holds a workspace per session: every run's
	// context names its session ([workspace.WithSession], through
	// [workspace.SessionFor]), so tools built on
	// [workspace.Sessions.ByContext] act in the workspace of the run's
	// session, which outlives the run (a session's next run finds its
	// files). [Runner.Close] closes them all.
	Workspaces *workspace.Sessions
	// Checkpoints, when set, is the tree the runner checkpoints before
	// each run, that is before each turn of a conversation: the
	// checkpoint's label names the session, so that [Runner.Undo],
	// [Runner.Rewind], [Runner.Diff] and [Runner.Checkpoints] find the
	// session's checkpoints again, in this process or another. A run whose
	// checkpoint fails fails before its prompt is saved (a full store
	// fails with an error matching [workspace.ErrCheckpointLimit]): an
	// operator who asked for checkpoints gets no turn without one. A local
	// workspace (package workspace/local) is one.
	Checkpoints workspace.Checkpointer
}

// Runner runs an agent on sessions. It is safe for concurrent use.
type Runner[C any] struct {
	cfg   Config[C]
	store session.Store
	log   *slog.Logger

	mu   sync.Mutex
	busy map[string]bool
}

// New returns a runner. When the agent lists its tools ([agent.ToolNamer]:
// llmagent, sequentialagent and loopagent do, unless tool sources add
// tools at run time), New fails with an error wrapping a
// *[helikon.UnknownToolError] for each permission rule that names none of
// them; with tool sources, call [helikon.Permissions.CheckTools] yourself
// once their tools are known.
func New[C any](cfg Config[C]) (*Runner[C], error) {
	if cfg.Agent == nil {
		return nil, errors.New("runner: no agent")
	}
	if names, complete := agent.ToolNamesOf(cfg.Agent); complete {
		// A rule naming no tool of the agent's (a misspelt Bash, or bash)
		// would match nothing and leave the operator believing it holds.
		if err := cfg.Permissions.CheckTools(append(names, cfg.OtherTools...)); err != nil {
			return nil, fmt.Errorf("runner: %w", err)
		}
	}
	r := &Runner[C]{cfg: cfg, store: cfg.Store, log: cfg.Logger, busy: map[string]bool{}}
	if r.store == nil {
		r.store = session.NewMemory()
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	return r, nil
}

// Store returns the runner's session store.
func (r *Runner[C]) Store() session.Store { return r.store }

// Run runs the agent on prompt in the session called sessionID, creating the
// session when it does not exist; an empty sessionID starts a new session
// with a fresh id (reported by the run_started event). The stream ends with
// a run_completed event, or with a run_failed event paired with the error.
func (r *Runner[C]) Run(ctx context.Context, sessionID, prompt string) iter.Seq2[*agent.Event, error] {
	return func(yield func(*agent.Event, error) bool) {
		id := sessionID
		if id == "" {
			id = session.NewID()
		}
		failed := func(err error) {
			r.log.LogAttrs(ctx, slog.LevelDebug, "run failed", slog.String("agent", r.cfg.Agent.Name()), slog.String("session", id), slog.String("error", err.Error()))
			yield(&agent.Event{Kind: agent.EventRunFailed, Agent: r.cfg.Agent.Name(), SessionID: id, Error: err.Error()}, err)
		}
		if err := session.ValidateID(id); err != nil {
			failed(fmt.Errorf("runner: %w", err))
			return
		}
		if !r.acquire(id) {
			failed(fmt.Errorf("runner: session %s: %w; wait for the other run to end", id, ErrSessionBusy))
			return
		}
		defer r.release(id)

		var history []model.Message
		var stateMap map[string]any
		sess, err := r.store.Get(ctx, id)
		switch {
		case err == nil:
			history, stateMap = CompleteTurns(sess.Messages), sess.State
		case errors.Is(err, session.ErrNotFound):
		default:
			failed(fmt.Errorf("runner: loading session %s: %w", id, err))
			return
		}
		if r.cfg.Workspaces != nil {
			ctx = workspace.WithSession(ctx, workspace.SessionFor(id))
		}
		if r.cfg.Checkpoints != nil {
			if _, err := r.cfg.Checkpoints.Checkpoint(ctx, checkpointLabel(id, prompt)); err != nil {
				failed(fmt.Errorf("runner: checkpoint before the turn: %w", err))
				return
			}
		}
		state := &helikon.State{}
		state.Restore(stateMap)
		rc := helikon.NewRunContext(r.cfg.App, &helikon.RunConfig{Mode: r.cfg.Mode, MaxAgentDepth: r.cfg.MaxAgentDepth, State: state})
		inv := agent.NewInvocation(rc, &agent.InvocationConfig{Permissions: r.cfg.Permissions, History: history, Tracer: r.cfg.Tracer})
		user := model.UserMessage(prompt)
		inv.Append(user)
		// Persisting must not be skipped because the caller's context was
		// cancelled right after a turn completed.
		pctx := context.WithoutCancel(ctx)
		if err := r.store.Append(pctx, id, []model.Message{user}, state.Snapshot()); err != nil {
			failed(fmt.Errorf("runner: saving session %s: %w", id, err))
			return
		}
		if !yield(&agent.Event{Kind: agent.EventRunStarted, Agent: r.cfg.Agent.Name(), SessionID: id}, nil) {
			return
		}
		var usage model.Usage
		var text string
		for ev, err := range r.cfg.Agent.Run(ctx, inv) {
			if err != nil {
				failed(err)
				return
			}
			if ev.Kind == agent.EventTurnCompleted {
				// A forwarded turn belongs to a sub-agent's conversation:
				// it is not the session's, but its model call is the run's.
				if !ev.Forwarded() {
					if err := r.store.Append(pctx, id, ev.Messages, state.Snapshot()); err != nil {
						failed(fmt.Errorf("runner: saving session %s: %w", id, err))
						return
					}
					if ev.Text != "" {
						text = ev.Text
					}
				}
				if ev.Usage != nil {
					usage.Add(*ev.Usage)
				}
			}
			if !yield(ev, nil) {
				return
			}
		}
		r.log.LogAttrs(ctx, slog.LevelDebug, "run completed", slog.String("agent", r.cfg.Agent.Name()), slog.String("session", id),
			slog.Int64("requests", usage.Requests), slog.Int64("input_tokens", usage.InputTokens), slog.Int64("output_tokens", usage.OutputTokens))
		yield(&agent.Event{Kind: agent.EventRunCompleted, Agent: r.cfg.Agent.Name(), SessionID: id, Text: text, Usage: &usage}, nil)
	}
}

// ErrNoCheckpoints is returned by the checkpoint methods of a runner without
// [Config.Checkpoints].
var ErrNoCheckpoints = errors.New("the runner takes no checkpoints (Config.Checkpoints is not set)")

// checkpointPrefix starts the label of every checkpoint of session id.
func checkpointPrefix(id string) string { return "session " + id + ": " }

// checkpointLabel is the label of the checkpoint taken before the turn of
// session id that prompt starts.
func checkpointLabel(id, prompt string) string {
	if r := []rune(prompt); len(r) > 60 {
		prompt = string(r[:60]) + "…"
	}
	return checkpointPrefix(id) + prompt
}

// Checkpoints returns the checkpoints taken before the turns of session
// sessionID that are still kept, oldest first: the last one is the state
// before the last turn.
func (r *Runner[C]) Checkpoints(ctx context.Context, sessionID string) ([]workspace.CheckpointInfo, error) {
	if r.cfg.Checkpoints == nil {
		return nil, ErrNoCheckpoints
	}
	all, err := r.cfg.Checkpoints.Checkpoints(ctx)
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	var out []workspace.CheckpointInfo
	for _, c := range all {
		if strings.HasPrefix(c.Label, checkpointPrefix(sessionID)) {
			out = append(out, c)
		}
	}
	return out, nil
}

// turnCheckpoint returns the checkpoint taken before the n-th last turn
// of the session (1: the last), and those after it; n beyond the turns
// kept fails with an error matching [workspace.ErrNoCheckpoint].
func (r *Runner[C]) turnCheckpoint(ctx context.Context, sessionID string, n int) (workspace.CheckpointInfo, []workspace.CheckpointInfo, error) {
	list, err := r.Checkpoints(ctx, sessionID)
	if err != nil {
		return workspace.CheckpointInfo{}, nil, err
	}
	if n < 1 || n > len(list) {
		return workspace.CheckpointInfo{}, nil, fmt.Errorf("runner: session %s has %d turns with a checkpoint, not %d: %w", sessionID, len(list), n, workspace.ErrNoCheckpoint)
	}
	k := len(list) - n
	return list[k], list[k:], nil
}

// Diff returns what changed in the tree during the last n turns of the
// session and since (n = 1: the last turn's changes, and any made after
// it); n = 0 means since the oldest turn kept.
func (r *Runner[C]) Diff(ctx context.Context, sessionID string, n int) ([]workspace.Change, error) {
	if n == 0 {
		list, err := r.Checkpoints(ctx, sessionID)
		if err != nil {
			return nil, err
		}
		n = len(list)
	}
	c, _, err := r.turnCheckpoint(ctx, sessionID, n)
	if err != nil {
		return nil, err
	}
	changes, err := r.cfg.Checkpoints.Diff(ctx, c.ID, "")
	if err != nil {
		return nil, fmt.Errorf("runner: %w", err)
	}
	return changes, nil
}

// Undo is Rewind(ctx, sessionID, 1): it takes back the last turn's
// changes to the tree, those of its file tools and of its commands alike.
func (r *Runner[C]) Undo(ctx context.Context, sessionID string) (workspace.CheckpointInfo, error) {
	return r.Rewind(ctx, sessionID, 1)
}

// Rewind brings the tree back to where it was before the n-th last turn
// of the session, and drops that turn's checkpoint and the later ones, so
// that a second Undo takes back the turn before. It returns the
// checkpoint restored. It fails with [ErrSessionBusy] while the session
// runs. The conversation is not rewound: the session keeps its messages.
func (r *Runner[C]) Rewind(ctx context.Context, sessionID string, n int) (workspace.CheckpointInfo, error) {
	if !r.acquire(sessionID) {
		return workspace.CheckpointInfo{}, fmt.Errorf("runner: session %s: %w; wait for the run to end", sessionID, ErrSessionBusy)
	}
	defer r.release(sessionID)
	c, later, err := r.turnCheckpoint(ctx, sessionID, n)
	if err != nil {
		return c, err
	}
	if err := r.cfg.Checkpoints.Restore(ctx, c.ID); err != nil {
		return c, fmt.Errorf("runner: rewinding session %s: %w", sessionID, err)
	}
	for _, l := range later {
		if err := r.cfg.Checkpoints.DropCheckpoint(ctx, l.ID); err != nil && !errors.Is(err, workspace.ErrNoCheckpoint) {
			return c, fmt.Errorf("runner: rewinding session %s: %w", sessionID, err)
		}
	}
	return c, nil
}

// Close closes the workspaces of every session ([Config.Workspaces]); runs
// started after it fail in their first tool call that needs a workspace.
// Without Workspaces it does nothing.
func (r *Runner[C]) Close(ctx context.Context) error {
	if r.cfg.Workspaces == nil {
		return nil
	}
	return r.cfg.Workspaces.CloseAll(ctx)
}

func (r *Runner[C]) acquire(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.busy[id] {
		return false
	}
	r.busy[id] = true
	return true
}

func (r *Runner[C]) release(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.busy, id)
}

// CompleteTurns returns msgs without a trailing assistant message whose tool
// calls have no results: providers reject such a conversation. Stores written
// by a runner never hold one; this guards against stores written otherwise.
func CompleteTurns(msgs []model.Message) []model.Message {
	n := len(msgs)
	if n > 0 && msgs[n-1].Role == model.RoleAssistant && len(msgs[n-1].ToolCalls) > 0 {
		return msgs[:n-1]
	}
	return msgs
}
