package helikon_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
)

// fakeTargeter reports fixed targets.
type fakeTargeter struct {
	t   helikon.Targets
	err error
}

func (f fakeTargeter) Targets(json.RawMessage) (helikon.Targets, error) { return f.t, f.err }

func call(tool string, effect helikon.Effect, mode helikon.PermissionMode, tg helikon.Targeter) helikon.Call {
	return helikon.Call{Tool: tool, Effect: effect, Mode: mode, Args: json.RawMessage(`{}`), Targeter: tg}
}

func TestModeByEffect(t *testing.T) {
	effects := []helikon.Effect{helikon.EffectReadOnly, helikon.EffectWrite, helikon.EffectSideEffect}
	// want[mode][effect]: allowed with no rules, no policy, no approver.
	want := map[helikon.PermissionMode][3]bool{
		helikon.ModeDefault:     {true, true, true},
		helikon.ModeAcceptEdits: {true, true, true},
		helikon.ModePlan:        {true, false, false},
		helikon.ModeDontAsk:     {false, false, false},
		helikon.ModeBypass:      {true, true, true},
	}
	// With a policy that asks and no approver, only what the mode itself
	// approves gets through.
	wantAsk := map[helikon.PermissionMode][3]bool{
		helikon.ModeDefault:     {false, false, false},
		helikon.ModeAcceptEdits: {false, true, false},
		helikon.ModePlan:        {false, false, false},
		helikon.ModeDontAsk:     {false, false, false},
		helikon.ModeBypass:      {true, true, true},
	}
	asker := helikon.PolicyFunc(func(context.Context, *helikon.Call, *helikon.Targets) (helikon.PolicyDecision, error) {
		return helikon.PolicyAsk("may I?"), nil
	})
	for mode, row := range want {
		for i, eff := range effects {
			var p helikon.Permissions
			d := p.Check(context.Background(), call("T", eff, mode, nil))
			if d.Allowed != row[i] {
				t.Errorf("mode %s, effect %s, no policy: allowed=%v, want %v (%s)", mode, eff, d.Allowed, row[i], d.Reason)
			}
			if !d.Allowed && d.Reason == "" {
				t.Errorf("mode %s, effect %s: denial without a reason", mode, eff)
			}
			pa := helikon.Permissions{Policy: asker}
			d = pa.Check(context.Background(), call("T", eff, mode, nil))
			if d.Allowed != wantAsk[mode][i] {
				t.Errorf("mode %s, effect %s, asking policy: allowed=%v, want %v (%s)", mode, eff, d.Allowed, wantAsk[mode][i], d.Reason)
			}
		}
	}
}

func TestModeTightenOnly(t *testing.T) {
	modes := []helikon.PermissionMode{helikon.ModeDefault, helikon.ModeAcceptEdits, helikon.ModePlan, helikon.ModeDontAsk, helikon.ModeBypass}
	allowed := map[[2]helikon.PermissionMode]bool{
		{helikon.ModeAcceptEdits, helikon.ModeDefault}: true,
		{helikon.ModeAcceptEdits, helikon.ModePlan}:    true,
		{helikon.ModeAcceptEdits, helikon.ModeDontAsk}: true,
		{helikon.ModeDefault, helikon.ModePlan}:        true,
		{helikon.ModeDefault, helikon.ModeDontAsk}:     true,
		{helikon.ModePlan, helikon.ModeDontAsk}:        true,
		{helikon.ModeBypass, helikon.ModeDontAsk}:      true,
	}
	for _, from := range modes {
		for _, to := range modes {
			want := from == to || allowed[[2]helikon.PermissionMode{from, to}]
			rc := helikon.NewRunContext(struct{}{}, &helikon.RunConfig{Mode: from})
			err := rc.TightenMode(to)
			if (err == nil) != want {
				t.Errorf("%s -> %s: err=%v, want allowed=%v", from, to, err, want)
			}
			if err != nil && !errors.Is(err, helikon.ErrModeLoosen) {
				t.Errorf("%s -> %s: error %v does not wrap ErrModeLoosen", from, to, err)
			}
		}
	}
}

func TestSubAgentSharesMode(t *testing.T) {
	rc := helikon.NewRunContext(struct{}{}, nil)
	sub, err := rc.SubAgent()
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.TightenMode(helikon.ModePlan); err != nil {
		t.Fatal(err)
	}
	if rc.PermissionMode() != helikon.ModePlan {
		t.Errorf("parent mode %s after sub-agent tightened to plan", rc.PermissionMode())
	}
	if err := rc.TightenMode(helikon.ModeDefault); err == nil {
		t.Error("parent loosened plan back to default")
	}
}

func TestEvaluationOrder(t *testing.T) {
	ctx := context.Background()
	rmRoot := fakeTargeter{t: helikon.Targets{Commands: []helikon.Command{{Args: []string{"rm", "-rf", "/"}}}}}
	gitLog := fakeTargeter{t: helikon.Targets{Commands: []helikon.Command{{Args: []string{"git", "log"}}}}}
	approveAll := helikon.ApproverFunc(func(context.Context, *helikon.ApprovalRequest) (bool, error) { return true, nil })
	rules := func(ss ...string) []helikon.Rule { return must(helikon.ParseRules(ss...)) }
	tests := []struct {
		name      string
		p         helikon.Permissions
		c         helikon.Call
		allowed   bool
		stage     helikon.Stage
		reasonHas string
	}{
		{"deny rule beats bypass", helikon.Permissions{Deny: rules("Bash")}, call("Bash", helikon.EffectSideEffect, helikon.ModeBypass, gitLog), false, helikon.StageDenyRule, "rule Bash"},
		{"deny rule beats allow rule", helikon.Permissions{Deny: rules("Bash(git)"), Allow: rules("Bash")}, call("Bash", helikon.EffectSideEffect, helikon.ModeDefault, gitLog), false, helikon.StageDenyRule, "Bash(git)"},
		{"guard beats allow rule", helikon.Permissions{Allow: rules("Bash")}, call("Bash", helikon.EffectSideEffect, helikon.ModeDefault, rmRoot), false, helikon.StageGuard, "remove-root-or-home"},
		{"guard beats bypass", helikon.Permissions{}, call("Bash", helikon.EffectSideEffect, helikon.ModeBypass, rmRoot), false, helikon.StageGuard, "remove-root-or-home"},
		{"guard approved continues", helikon.Permissions{Approver: approveAll}, call("Bash", helikon.EffectSideEffect, helikon.ModeBypass, rmRoot), true, helikon.StageMode, "bypass"},
		{"guard never asks in dont-ask", helikon.Permissions{Approver: approveAll, Allow: rules("Bash")}, call("Bash", helikon.EffectSideEffect, helikon.ModeDontAsk, rmRoot), false, helikon.StageGuard, "never asks"},
		{"guards off", helikon.Permissions{NoGuards: true}, call("Bash", helikon.EffectSideEffect, helikon.ModeBypass, rmRoot), true, helikon.StageMode, ""},
		{"allow rule short-circuits plan", helikon.Permissions{Allow: rules("Bash(git)")}, call("Bash", helikon.EffectSideEffect, helikon.ModePlan, gitLog), true, helikon.StageAllowRule, "Bash(git)"},
		{"allow rule permits in dont-ask", helikon.Permissions{Allow: rules("Bash(git log)")}, call("Bash", helikon.EffectSideEffect, helikon.ModeDontAsk, gitLog), true, helikon.StageAllowRule, ""},
		{"allow rule with other program does not", helikon.Permissions{Allow: rules("Bash(ls)")}, call("Bash", helikon.EffectSideEffect, helikon.ModeDontAsk, gitLog), false, helikon.StageMode, "dont-ask"},
		{"plan denies write", helikon.Permissions{}, call("Write", helikon.EffectWrite, helikon.ModePlan, nil), false, helikon.StageMode, "plan mode"},
		{"unknown targets: pattern deny fails closed", helikon.Permissions{Deny: rules("Bash(rm)")}, call("Bash", helikon.EffectSideEffect, helikon.ModeBypass, nil), false, helikon.StageDenyRule, "refusing to be safe"},
		{"unknown targets: pattern allow does not match", helikon.Permissions{Allow: rules("Bash(git)")}, call("Bash", helikon.EffectSideEffect, helikon.ModeDontAsk, nil), false, helikon.StageMode, ""},
		{"unresolved targets: deny matches", helikon.Permissions{Deny: rules("Bash(rm)")}, call("Bash", helikon.EffectSideEffect, helikon.ModeDefault, fakeTargeter{t: helikon.Targets{Unresolved: "program named by $CMD"}}), false, helikon.StageDenyRule, "$CMD"},
		{"targeter error: deny matches", helikon.Permissions{Deny: rules("Read(.env)")}, call("Read", helikon.EffectReadOnly, helikon.ModeDefault, fakeTargeter{err: errors.New("bad path")}), false, helikon.StageDenyRule, "bad path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.p.Check(ctx, tt.c)
			if d.Allowed != tt.allowed || d.Stage != tt.stage || !strings.Contains(d.Reason, tt.reasonHas) {
				t.Errorf("got allowed=%v stage=%s reason=%q; want allowed=%v stage=%s reason containing %q", d.Allowed, d.Stage, d.Reason, tt.allowed, tt.stage, tt.reasonHas)
			}
			if !d.Allowed && !errors.Is(d.Err(), helikon.ErrDenied) {
				t.Errorf("Err() = %v, want a denied error", d.Err())
			}
		})
	}
}

func TestPolicyDecisions(t *testing.T) {
	ctx := context.Background()
	pol := func(d helikon.PolicyDecision, err error) helikon.Policy {
		return helikon.PolicyFunc(func(context.Context, *helikon.Call, *helikon.Targets) (helikon.PolicyDecision, error) { return d, err })
	}
	var asked *helikon.ApprovalRequest
	approver := func(ok bool, err error) helikon.Approver {
		return helikon.ApproverFunc(func(_ context.Context, r *helikon.ApprovalRequest) (bool, error) { asked = r; return ok, err })
	}
	envTarget := func(args json.RawMessage) (helikon.Targets, error) {
		var a struct{ Path string }
		json.Unmarshal(args, &a)
		return helikon.Targets{Paths: []helikon.PathTarget{{Path: "/w/" + a.Path, Root: "/w", Access: helikon.AccessWrite}}}, nil
	}
	tests := []struct {
		name    string
		p       helikon.Permissions
		allowed bool
		args    string
		asked   bool
	}{
		{"allow", helikon.Permissions{Policy: pol(helikon.PolicyAllow(), nil)}, true, `{"path":"a"}`, false},
		{"deny", helikon.Permissions{Policy: pol(helikon.PolicyDeny("no"), nil)}, false, "", false},
		{"error denies", helikon.Permissions{Policy: pol(helikon.PolicyAllow(), errors.New("boom"))}, false, "", false},
		{"zero decision asks, no approver denies", helikon.Permissions{Policy: pol(helikon.PolicyDecision{}, nil)}, false, "", false},
		{"ask approved", helikon.Permissions{Policy: pol(helikon.PolicyAsk("ok?"), nil), Approver: approver(true, nil)}, true, `{"path":"a"}`, true},
		{"ask declined", helikon.Permissions{Policy: pol(helikon.PolicyAsk("ok?"), nil), Approver: approver(false, nil)}, false, "", true},
		{"ask errors", helikon.Permissions{Policy: pol(helikon.PolicyAsk("ok?"), nil), Approver: approver(true, errors.New("no tty"))}, false, "", true},
		{"replace", helikon.Permissions{Policy: pol(helikon.PolicyReplace(json.RawMessage(`{"path":"b"}`)), nil)}, true, `{"path":"b"}`, false},
		{"replace re-checks deny rules", helikon.Permissions{Deny: must(helikon.ParseRules("Write(secret)")), Policy: pol(helikon.PolicyReplace(json.RawMessage(`{"path":"secret"}`)), nil)}, false, "", false},
		{"replace re-checks guards", helikon.Permissions{Policy: pol(helikon.PolicyReplace(json.RawMessage(`{"path":".env"}`)), nil)}, false, "", false},
		{"replace with invalid JSON denied", helikon.Permissions{Policy: pol(helikon.PolicyReplace(json.RawMessage(`{`)), nil)}, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			c := call("Write", helikon.EffectWrite, helikon.ModeDefault, targeterFunc(envTarget))
			c.Args = json.RawMessage(`{"path":"a"}`)
			d := tt.p.Check(ctx, c)
			if d.Allowed != tt.allowed {
				t.Fatalf("allowed=%v, want %v (%s)", d.Allowed, tt.allowed, d.Reason)
			}
			if tt.allowed && string(d.Args) != tt.args {
				t.Errorf("args %s, want %s", d.Args, tt.args)
			}
			if (asked != nil) != tt.asked || d.Asked != tt.asked {
				t.Errorf("asked=%v/%v, want %v", asked != nil, d.Asked, tt.asked)
			}
			if !d.Allowed && d.Reason == "" {
				t.Error("denial without reason")
			}
		})
	}
}

type targeterFunc func(json.RawMessage) (helikon.Targets, error)

func (f targeterFunc) Targets(a json.RawMessage) (helikon.Targets, error) { return f(a) }

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestWriteDenyRulesSpareToolsThatReportNothing(t *testing.T) {
	perms := &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("Edit(src/**)")}}
	for _, tc := range []struct {
		name   string
		tg     helikon.Targeter
		denied bool
	}{
		{"no targets reported", nil, false},
		{"reads only", fakeTargeter{t: helikon.Targets{Paths: []helikon.PathTarget{{Path: "/r/src/a", Root: "/r"}}}}, false},
		{"writes a matching path", fakeTargeter{t: helikon.Targets{Paths: []helikon.PathTarget{{Path: "/r/src/a", Root: "/r", Access: helikon.AccessWrite}}}}, true},
		{"writes elsewhere", fakeTargeter{t: helikon.Targets{Paths: []helikon.PathTarget{{Path: "/r/doc/a", Root: "/r", Access: helikon.AccessWrite}}}}, false},
		{"writes a computed path", fakeTargeter{t: helikon.Targets{Paths: []helikon.PathTarget{{Path: "/r/$f", Root: "/r", Access: helikon.AccessWrite, Computed: true}}}}, true},
		{"unresolved", fakeTargeter{t: helikon.Targets{Unresolved: "eval"}}, true},
	} {
		d := perms.Check(context.Background(), call("Shell", helikon.EffectSideEffect, helikon.ModeBypass, tc.tg))
		if denied := !d.Allowed; denied != tc.denied {
			t.Errorf("%s: denied %v (%s), want %v", tc.name, denied, d.Reason, tc.denied)
		}
	}
}

// In plan mode a guard does not ask a question whose yes would still end in
// the mode's refusal: the refusal comes without asking. With an allow rule
// that lets the call through, it asks; an ask rule's yes decides by itself,
// so its question is asked.
func TestPlanModeDoesNotAskInVain(t *testing.T) {
	rmHome := fakeTargeter{t: helikon.Targets{Commands: []helikon.Command{{Args: []string{"rm", "-rf", "/"}}}}}
	gitPush := fakeTargeter{t: helikon.Targets{Commands: []helikon.Command{{Args: []string{"git", "push"}}}}}
	for _, tc := range []struct {
		name    string
		p       helikon.Permissions
		c       helikon.Call
		asked   bool
		allowed bool
		stage   helikon.Stage
	}{
		{"guard, no allow rule", helikon.Permissions{}, call("Bash", helikon.EffectSideEffect, helikon.ModePlan, rmHome), false, false, helikon.StageMode},
		{"guard, an allow rule", helikon.Permissions{Allow: must(helikon.ParseRules("Bash(rm)"))}, call("Bash", helikon.EffectSideEffect, helikon.ModePlan, rmHome), true, true, helikon.StageAllowRule},
		{"ask rule, no allow rule", helikon.Permissions{Ask: must(helikon.ParseRules("Bash(git push)"))}, call("Bash", helikon.EffectSideEffect, helikon.ModePlan, gitPush), true, true, helikon.StageAskRule},
		{"ask rule, an allow rule", helikon.Permissions{Ask: must(helikon.ParseRules("Bash(git push)")), Allow: must(helikon.ParseRules("Bash(git)"))}, call("Bash", helikon.EffectSideEffect, helikon.ModePlan, gitPush), true, true, helikon.StageAskRule},
		{"guard, read-only tool", helikon.Permissions{}, call("Bash", helikon.EffectReadOnly, helikon.ModePlan, rmHome), true, true, helikon.StagePolicy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			tc.p.Approver = helikon.ApproverFunc(func(context.Context, *helikon.ApprovalRequest) (bool, error) { asked = true; return true, nil })
			d := tc.p.Check(context.Background(), tc.c)
			if asked != tc.asked || d.Allowed != tc.allowed || d.Stage != tc.stage {
				t.Errorf("asked=%v allowed=%v stage=%s (%s); want asked=%v allowed=%v stage=%s", asked, d.Allowed, d.Stage, d.Reason, tc.asked, tc.allowed, tc.stage)
			}
		})
	}
}
