package helikon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Behavior is what a [Policy] answers for a call.
type Behavior int

const (
	// BehaviorAsk asks the approval handler (and denies without one). It is
	// the zero value, so an unfilled decision never allows by accident.
	BehaviorAsk Behavior = iota
	// BehaviorAllow lets the call run.
	BehaviorAllow
	// BehaviorDeny refuses the call.
	BehaviorDeny
	// BehaviorReplace lets the call run with different arguments. The new
	// arguments pass the deny rules and guards again.
	BehaviorReplace
)

// PolicyDecision is a policy's answer.
type PolicyDecision struct {
	Behavior Behavior        // what to do; the zero value asks
	Reason   string          // why: shown to the model on deny, to the human on ask
	Args     json.RawMessage // the replacement arguments for BehaviorReplace
}

// PolicyAllow returns a decision that allows the call.
func PolicyAllow() PolicyDecision { return PolicyDecision{Behavior: BehaviorAllow} }

// PolicyDeny returns a decision that refuses the call for reason. (A tool
// refuses with the error [Denied]; a policy with this decision.)
func PolicyDeny(reason string) PolicyDecision {
	return PolicyDecision{Behavior: BehaviorDeny, Reason: reason}
}

// PolicyAsk returns a decision that asks the approval handler with prompt.
func PolicyAsk(prompt string) PolicyDecision {
	return PolicyDecision{Behavior: BehaviorAsk, Reason: prompt}
}

// PolicyReplace returns a decision that runs the call with args instead.
func PolicyReplace(args json.RawMessage) PolicyDecision {
	return PolicyDecision{Behavior: BehaviorReplace, Args: args}
}

// Call describes one tool call for the permission pipeline.
type Call struct {
	Tool       string          // the tool's name, as rules name it
	Effect     Effect          // the tool's declared effect (see [EffectOf])
	Args       json.RawMessage // the arguments the model sent
	Mode       PermissionMode  // the run's mode when the call is checked
	AgentDepth int             // 0 for the top-level agent's calls
	// Targeter reports what the call would touch; nil when the tool cannot
	// say (see [Targeter]).
	Targeter Targeter
}

// CallFor describes a call of t with args in mode.
func CallFor[C any](t Tool[C], args json.RawMessage, mode PermissionMode) Call {
	c := Call{Tool: t.Name(), Effect: EffectOf(t), Args: args, Mode: mode}
	if tg, ok := t.(Targeter); ok {
		c.Targeter = tg
	}
	return c
}

// Policy decides whether a call may run. It is consulted after rules, guards
// and the mode (see [Permissions]). Decide must be safe for concurrent use;
// an error from it denies the call.
type Policy interface {
	// Decide answers for call; targets is what the tool reported it would
	// touch, empty or partial when it could not say (see [Targeter]).
	Decide(ctx context.Context, call *Call, targets *Targets) (PolicyDecision, error)
}

// PolicyFunc adapts a function to [Policy].
type PolicyFunc func(ctx context.Context, call *Call, targets *Targets) (PolicyDecision, error)

// Decide calls f.
func (f PolicyFunc) Decide(ctx context.Context, call *Call, targets *Targets) (PolicyDecision, error) {
	return f(ctx, call, targets)
}

// ApprovalRequest is what an approval handler is asked.
type ApprovalRequest struct {
	Tool   string          // the tool's name
	Effect Effect          // the tool's declared effect
	Args   json.RawMessage // the arguments the call would run with
	// Reason says why approval is needed: the guard that fired or the
	// policy's prompt.
	Reason string
	// Guard is true when a built-in guard asked.
	Guard bool
	// AgentDepth is the depth of the agent whose call asks (0: the
	// top-level agent; more: a sub-agent).
	AgentDepth int
	// Agent names the agent whose call asks, when the agent says (an LLM
	// agent does); a handler may show it, since sub-agents ask through the
	// run's handler too.
	Agent string
	// Rule is the ask rule that asked, when one did (see
	// [Permissions].Ask): the operator wants this call asked every time, so
	// a handler should not answer it from a remembered "always".
	Rule string
	// Targets is what the call would touch, as its tool reported it; nil
	// when the tool could not say. A handler may use it to offer a rule
	// (see [AllowedBy]).
	Targets *Targets
}

// Approver resolves "ask" decisions, typically by asking a human. Approve
// returns true to allow the call. An error denies it.
type Approver interface {
	// Approve asks about req; it may block until a human answers, and
	// should return when ctx is cancelled.
	Approve(ctx context.Context, req *ApprovalRequest) (bool, error)
}

// ApproverFunc adapts a function to [Approver].
type ApproverFunc func(ctx context.Context, req *ApprovalRequest) (bool, error)

// Approve calls f.
func (f ApproverFunc) Approve(ctx context.Context, req *ApprovalRequest) (bool, error) {
	return f(ctx, req)
}

// Stage names the step of the pipeline that decided a call.
type Stage string

// The pipeline's stages, in evaluation order.
const (
	StageDenyRule  Stage = "deny_rule"
	StageGuard     Stage = "guard"
	StageAskRule   Stage = "ask_rule"
	StageAllowRule Stage = "allow_rule"
	StageMode      Stage = "mode"
	StagePolicy    Stage = "policy"
	StageApproval  Stage = "approval"
)

// Decision is the outcome of [Permissions.Check].
type Decision struct {
	// Allowed is true when the call may run (with Args).
	Allowed bool
	// Args are the arguments to run the call with: the call's own, or the
	// policy's replacement.
	Args json.RawMessage
	// Stage is the step that decided.
	Stage Stage
	// Reason explains a denial (and, for information, some approvals).
	Reason string
	// Asked is true when the approval handler was consulted.
	Asked bool
	// Rule is the rule that decided, when a deny, ask or allow rule did:
	// one that matched the call (for allow rules that together covered a
	// call, the one that matched its first target).
	Rule Rule
	// Matches, when allow rules decided, are the rules that matched each
	// of the call's targets (for a Bash line, each command), in order.
	Matches []RuleMatch
	// Targets is what the tool reported the call with Args touches, when
	// the call is allowed and the tool reported it (see [Targeter]); nil
	// otherwise. [CheckedCall.Invoke] hands it to the tool.
	Targets *Targets
}

// Err returns a *DeniedError for a denial, and nil when the call is allowed.
func (d Decision) Err() error {
	if d.Allowed {
		return nil
	}
	return &DeniedError{Reason: d.Reason}
}

// Permissions is the permission pipeline: rules, guards, mode, policy and
// approval. The zero value has no rules, guards on, no policy and no
// approval handler: in Default mode it allows every call the guards do not
// stop. It is safe for concurrent use as long as its fields are not changed.
//
// Evaluation order, first match wins:
//
//  1. deny rules: a matching deny rule denies, in every mode.
//  2. guards: a write to a protected file is denied, in every mode and even
//     with NoGuards. Any other guard that fires asks the approval handler,
//     in every mode, even when an allow rule matches; without a handler (or
//     in DontAsk) the call is denied. Approval lets evaluation continue;
//     in Plan, a call that is not read-only and no allow rule matches is
//     denied by the mode without the question, whose yes could not help.
//  3. ask rules: a matching ask rule asks the approval handler, in every
//     mode (Bypass included) and even when an allow rule matches; approval
//     allows the call, and DontAsk or no handler denies it.
//  4. allow rules: a matching allow rule allows (even in Plan and DontAsk).
//  5. mode: Bypass allows; DontAsk denies; Plan denies anything not
//     read-only; AcceptEdits allows write-effect tools.
//  6. policy: allow, deny, ask or replace the arguments (which then pass
//     steps 1 to 3 again). No policy allows.
//  7. approval: "ask" goes to the approval handler; no handler denies.
type Permissions struct {
	// Deny rules refuse matching calls in every mode; a pattern rule also
	// refuses calls whose targets are unknown.
	Deny []Rule
	// Ask rules send matching calls to the approval handler even where an
	// allow rule or the mode would allow them; they match as deny rules do
	// (any target, and every call whose targets are unknown for a pattern
	// rule).
	Ask []Rule
	// Allow rules permit matching calls without asking, even in Plan and
	// DontAsk; a call passes only when every target it reports is covered.
	Allow []Rule
	// Protected are files no call may write, in any mode and even with
	// NoGuards: the CLI puts its policy files here, so that an agent cannot
	// loosen its own policy. See [ProtectedFile] for what is and is not
	// seen.
	Protected []ProtectedFile
	// NoGuards switches the built-in guards off.
	NoGuards bool
	// Home is the home directory the remove guard protects; "" means the
	// current user's.
	Home string
	// Policy decides the calls no rule or mode settled. Nil allows them:
	// in Default and AcceptEdits modes a call that no rule, guard or mode
	// stopped then runs without asking, Bash included. To ask instead,
	// install a Policy that returns [BehaviorAsk] (with an Approver to
	// answer), or run in DontAsk with allow rules.
	Policy Policy
	// Approver answers "ask" decisions (nil: they are denied).
	Approver Approver
}

// Check runs call through the pipeline. Most callers want [CheckCall],
// which also validates the arguments and hands the decision's targets on to
// the tool.
func (p *Permissions) Check(ctx context.Context, call Call) Decision {
	if p == nil {
		p = &Permissions{}
	}
	d, ti := p.check(ctx, call)
	if d.Allowed && ti.reported {
		d.Targets = &ti.t
	}
	return d
}

// check is Check; it also returns the targets of the arguments decided on.
func (p *Permissions) check(ctx context.Context, call Call) (Decision, *targetsInfo) {
	args := call.Args
	ti := resolveTargets(ctx, call.Targeter, args)

	if d, done := p.checkDenyAndGuards(ctx, &call, ti); done {
		return d, ti
	}
	if d, done := p.checkAskRules(ctx, &call, ti); done {
		return d, ti
	}

	if m, ok := allowMatch(p.Allow, call.Tool, ti); ok {
		return Decision{Allowed: true, Args: args, Stage: StageAllowRule, Reason: allowReason(m), Rule: m[0].Rule, Matches: m}, ti
	}

	switch call.Mode {
	case ModeBypass:
		return Decision{Allowed: true, Args: args, Stage: StageMode, Reason: "bypass mode"}, ti
	case ModeDontAsk:
		return deny(StageMode, fmt.Sprintf("%s is not permitted: dont-ask mode runs only calls that an allow rule permits, and none matches", call.Tool)), ti
	case ModePlan:
		if call.Effect != EffectReadOnly {
			return planDenial(&call), ti
		}
	case ModeAcceptEdits:
		if call.Effect == EffectWrite {
			return Decision{Allowed: true, Args: args, Stage: StageMode, Reason: "accept-edits mode approves write tools"}, ti
		}
	}

	if p.Policy == nil {
		return Decision{Allowed: true, Args: args, Stage: StagePolicy, Reason: "no policy installed"}, ti
	}
	pd, err := p.Policy.Decide(ctx, &call, &ti.t)
	if err != nil {
		return deny(StagePolicy, fmt.Sprintf("%s was refused because the permission policy failed: %v", call.Tool, err)), ti
	}
	switch pd.Behavior {
	case BehaviorAllow:
		return Decision{Allowed: true, Args: args, Stage: StagePolicy, Reason: pd.Reason}, ti
	case BehaviorDeny:
		reason := pd.Reason
		if reason == "" {
			reason = call.Tool + " was refused by the permission policy"
		}
		return deny(StagePolicy, reason), ti
	case BehaviorReplace:
		if !json.Valid(pd.Args) {
			return deny(StagePolicy, call.Tool+" was refused: the permission policy replaced its arguments with invalid JSON"), ti
		}
		call.Args = pd.Args
		ti2 := resolveTargets(ctx, call.Targeter, pd.Args)
		if d, done := p.checkDenyAndGuards(ctx, &call, ti2); done {
			return d, ti2
		}
		if d, done := p.checkAskRules(ctx, &call, ti2); done {
			return d, ti2
		}
		return Decision{Allowed: true, Args: pd.Args, Stage: StagePolicy, Reason: "arguments replaced by the permission policy"}, ti2
	default:
		prompt := pd.Reason
		if prompt == "" {
			prompt = "the permission policy asks for approval"
		}
		return p.ask(ctx, &call, ti, StageApproval, prompt, false, ""), ti
	}
}

// checkDenyAndGuards runs steps 1 and 2. done is true when they decided (a
// denial); an approved guard lets evaluation continue.
func (p *Permissions) checkDenyAndGuards(ctx context.Context, call *Call, ti *targetsInfo) (Decision, bool) {
	for _, r := range p.Deny {
		if r.denyMatch(call.Tool, ti) {
			reason := fmt.Sprintf("%s is denied by rule %s", call.Tool, r)
			if !ti.known && r.Pattern != "" {
				reason += " (" + ti.why + "; refusing to be safe)"
			}
			d := deny(StageDenyRule, reason)
			d.Rule = r
			return d, true
		}
	}
	if hit := protectedHit(p.Protected, &ti.t); hit != "" {
		return deny(StageGuard, call.Tool+" was refused: "+hit), true
	}
	if p.NoGuards {
		return Decision{}, false
	}
	home := p.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if hit := guardHit(&ti.t, home); hit != "" {
		d := p.ask(ctx, call, ti, StageGuard, hit, true, "")
		if !d.Allowed {
			return d, true
		}
	}
	return Decision{}, false
}

// checkAskRules runs step 3: the first matching ask rule asks, and its
// answer decides.
func (p *Permissions) checkAskRules(ctx context.Context, call *Call, ti *targetsInfo) (Decision, bool) {
	for _, r := range p.Ask {
		if r.denyMatch(call.Tool, ti) {
			reason := "ask rule " + r.String()
			if !ti.known && r.Pattern != "" {
				reason += " (" + ti.why + ")"
			}
			d := p.ask(ctx, call, ti, StageAskRule, reason, false, r.String())
			d.Rule = r
			return d, true
		}
	}
	return Decision{}, false
}

// planDenial is plan mode's refusal of a call that is not read-only.
func planDenial(call *Call) Decision {
	return deny(StageMode, fmt.Sprintf("%s is not permitted in plan mode: only read-only tools may run, and %s has effect %s; describe the change instead of making it", call.Tool, call.Tool, call.Effect))
}

func (p *Permissions) ask(ctx context.Context, call *Call, ti *targetsInfo, stage Stage, reason string, guard bool, rule string) Decision {
	// A guard's yes lets evaluation go on; in plan mode, with no allow rule
	// to let the call through, it would still end in the mode's refusal:
	// that question is not asked, the refusal comes now. (An ask rule's
	// yes decides by itself, so its question is asked.)
	if guard && call.Mode == ModePlan && call.Effect != EffectReadOnly {
		if _, ok := allowMatch(p.Allow, call.Tool, ti); !ok {
			return planDenial(call)
		}
	}
	if call.Mode == ModeDontAsk {
		return deny(stage, fmt.Sprintf("%s needs approval (%s) and dont-ask mode never asks", call.Tool, reason))
	}
	if p.Approver == nil {
		return deny(stage, fmt.Sprintf("%s needs approval (%s) and there is no one to ask", call.Tool, reason))
	}
	req := &ApprovalRequest{Tool: call.Tool, Effect: call.Effect, Args: call.Args, Reason: reason, Guard: guard, AgentDepth: call.AgentDepth, Rule: rule}
	if ti.known {
		t := ti.t
		req.Targets = &t
	}
	ok, err := p.Approver.Approve(ctx, req)
	switch {
	case err != nil:
		d := deny(stage, fmt.Sprintf("%s needs approval (%s) and asking failed: %v", call.Tool, reason, err))
		d.Asked = true
		return d
	case !ok:
		d := deny(stage, fmt.Sprintf("%s was declined by the user (%s)", call.Tool, reason))
		d.Asked = true
		return d
	}
	return Decision{Allowed: true, Args: call.Args, Stage: stage, Reason: "approved: " + reason, Asked: true}
}

// allowReason says which allow rules permitted a call, and which target
// each matched when it took more than one.
func allowReason(m []RuleMatch) string {
	if !slices.ContainsFunc(m, func(x RuleMatch) bool { return x.Rule != m[0].Rule }) {
		return "allowed by rule " + m[0].Rule.String()
	}
	parts := make([]string, len(m))
	for i, x := range m {
		parts[i] = fmt.Sprintf("%s for %q", x.Rule, x.Target)
	}
	return "allowed by rules " + strings.Join(parts, ", ")
}

func deny(stage Stage, reason string) Decision {
	return Decision{Stage: stage, Reason: reason}
}

func resolveTargets(ctx context.Context, tg Targeter, args json.RawMessage) *targetsInfo {
	if tg == nil {
		return &targetsInfo{why: "the tool does not report what it touches"}
	}
	var t Targets
	var err error
	if ct, ok := tg.(ContextTargeter); ok {
		t, err = ct.TargetsContext(ctx, args)
	} else {
		t, err = tg.Targets(args)
	}
	if err != nil {
		return &targetsInfo{t: t, why: "its targets could not be determined: " + err.Error()}
	}
	if t.Unresolved != "" {
		return &targetsInfo{t: t, why: strings.TrimSpace(t.Unresolved), reported: true}
	}
	return &targetsInfo{t: t, known: true, reported: true}
}
