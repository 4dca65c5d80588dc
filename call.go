package helikon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/paigasus/helikon/internal/argcheck"
)

// ErrorInvalidJSON is the problem reported for arguments that are not JSON,
// in every place a call arrives (an agent's model, an MCP client, the CLI).
// Its text lives with the argument checker, which words every other problem
// of a call's arguments.
const ErrorInvalidJSON = argcheck.InvalidJSON

// CheckedCall is a tool call the permission pipeline allowed: the tool, the
// arguments to run it with (the policy's replacement, if it made one) and the
// targets the pipeline matched for them. Make one with [CheckCall]; run it
// with [CheckedCall.Invoke]. Checking and invoking are two steps because an
// agent checks the calls of a turn one by one, in call order (approvals are
// asked one at a time), and then runs the allowed ones in parallel.
type CheckedCall[C any] struct {
	tool     Tool[C]
	decision Decision
}

// CheckCall is the one way a tool call enters a tool: it checks that args is
// one JSON value, then runs the call of t through perms (nil: the zero
// [Permissions]) in rc's current permission mode, as a call of the agent at
// rc's depth. It returns the allowed call, or the error the caller reports to
// the model: an [*InvalidArgsError] for arguments that are not JSON, a
// [*DeniedError] with the pipeline's reason for a refusal. The [Decision] is
// returned in both cases, for callers that report which stage decided.
//
// Empty or all-blank arguments are the empty object, as models send them for
// tools without parameters.
func CheckCall[C any](ctx context.Context, rc *RunContext[C], perms *Permissions, t Tool[C], args json.RawMessage) (*CheckedCall[C], Decision, error) {
	args = trimJSON(args, "{}")
	if !json.Valid(args) {
		return nil, Decision{Reason: ErrorInvalidJSON}, &InvalidArgsError{Tool: t.Name(), Problems: []string{ErrorInvalidJSON}}
	}
	call := CallFor(t, args, rc.PermissionMode())
	call.AgentDepth = rc.AgentDepth()
	d := perms.Check(ctx, call)
	if !d.Allowed {
		return nil, d, d.Err()
	}
	return &CheckedCall[C]{tool: t, decision: d}, d, nil
}

// Tool returns the tool the call runs.
func (c *CheckedCall[C]) Tool() Tool[C] { return c.tool }

// Args returns the arguments the call runs with.
func (c *CheckedCall[C]) Args() json.RawMessage { return c.decision.Args }

// Invoke runs the call with tc and returns the tool's output, always valid
// JSON (an empty output is null), or an error of one of the three kinds.
// The tool sees the targets the pipeline matched through
// [ToolContext.Targets], so it need not work them out again, nor decode its
// arguments again when its Targets step did (see [Targets.WithDecoded]). An
// [*InvalidArgsError] that names no tool is given the tool's name; output
// that is not JSON is an other error (a bug in the tool); so is a panic in
// the tool, which does not take the caller down.
func (c *CheckedCall[C]) Invoke(tc *ToolContext[C]) (out json.RawMessage, err error) {
	name := c.tool.Name()
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, &PanicError{Tool: name, Value: v, Stack: debug.Stack()}
		}
	}()
	if tc.targets != c.decision.Targets {
		withTargets := *tc
		withTargets.targets = c.decision.Targets
		tc = &withTargets
	}
	out, err = c.tool.Invoke(tc, c.decision.Args)
	if err != nil {
		if ia := (*InvalidArgsError)(nil); errors.As(err, &ia) && ia.Tool == "" {
			ia.Tool = name
		}
		return nil, err
	}
	if out = trimJSON(out, "null"); json.Valid(out) {
		return out, nil
	}
	return nil, Other(fmt.Errorf("tool %s returned output that is not valid JSON (a bug in the tool)", name))
}

// CallTool checks a call of t with args (see [CheckCall]) in tc's run and,
// when it is allowed, invokes it with tc (see [CheckedCall.Invoke]). It is
// the whole path for callers that run one call at a time, such as the CLI's
// tool command and an MCP server.
func CallTool[C any](tc *ToolContext[C], perms *Permissions, t Tool[C], args json.RawMessage) (json.RawMessage, error) {
	c, _, err := CheckCall(tc, tc.Run(), perms, t, args)
	if err != nil {
		return nil, err
	}
	return c.Invoke(tc)
}

// trimJSON drops surrounding JSON white space; when nothing is left it
// returns empty (the empty object for arguments, null for output).
func trimJSON(b json.RawMessage, empty string) json.RawMessage {
	i, j := 0, len(b)
	for i < j && isJSONSpace(b[i]) {
		i++
	}
	for j > i && isJSONSpace(b[j-1]) {
		j--
	}
	if i == j {
		return json.RawMessage(empty)
	}
	return b[i:j]
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// PanicError is what a tool's panic becomes in [CheckedCall.Invoke]: an
// other error whose message tells the model it is a bug in the tool, with
// the panic's value and stack for the caller's log (never shown to the
// model).
type PanicError struct {
	Tool  string // the tool that panicked
	Value any    // the value passed to panic
	Stack []byte // the panicking goroutine's stack
}

// Error says the tool failed with an internal error, and that the arguments
// are not to blame.
func (e *PanicError) Error() string {
	return fmt.Sprintf("tool %s failed with an internal error (panic: %v); this is a bug in the tool, not in your arguments", e.Tool, e.Value)
}
