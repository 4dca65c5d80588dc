package helikon_test

import (
	"context"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
)

func TestAskRules(t *testing.T) {
	ctx := context.Background()
	push := fakeTargeter{t: helikon.Targets{Commands: []helikon.Command{{Args: []string{"git", "push"}}}}}
	gitLog := fakeTargeter{t: helikon.Targets{Commands: []helikon.Command{{Args: []string{"git", "log"}}}}}
	rules := func(ss ...string) []helikon.Rule { return must(helikon.ParseRules(ss...)) }
	var asked *helikon.ApprovalRequest
	answer := func(ok bool) helikon.Approver {
		return helikon.ApproverFunc(func(_ context.Context, r *helikon.ApprovalRequest) (bool, error) { asked = r; return ok, nil })
	}
	tests := []struct {
		name    string
		p       helikon.Permissions
		c       helikon.Call
		allowed bool
		asked   bool
		stage   helikon.Stage
	}{
		{"ask beats allow rule", helikon.Permissions{Ask: rules("Bash(git push)"), Allow: rules("Bash"), Approver: answer(false)}, call("Bash", helikon.EffectSideEffect, helikon.ModeDefault, push), false, true, helikon.StageAskRule},
		{"ask beats bypass", helikon.Permissions{Ask: rules("Bash(git push)"), Approver: answer(false)}, call("Bash", helikon.EffectSideEffect, helikon.ModeBypass, push), false, true, helikon.StageAskRule},
		{"ask beats accept-edits", helikon.Permissions{Ask: rules("Write"), Approver: answer(false)}, call("Write", helikon.EffectWrite, helikon.ModeAcceptEdits, nil), false, true, helikon.StageAskRule},
		{"approved ask allows", helikon.Permissions{Ask: rules("Bash(git push)"), Approver: answer(true)}, call("Bash", helikon.EffectSideEffect, helikon.ModePlan, push), true, true, helikon.StageAskRule},
		{"ask without handler denies", helikon.Permissions{Ask: rules("Bash(git push)"), Allow: rules("Bash")}, call("Bash", helikon.EffectSideEffect, helikon.ModeBypass, push), false, false, helikon.StageAskRule},
		{"dont-ask never asks", helikon.Permissions{Ask: rules("Bash(git push)"), Allow: rules("Bash"), Approver: answer(true)}, call("Bash", helikon.EffectSideEffect, helikon.ModeDontAsk, push), false, false, helikon.StageAskRule},
		{"other command not asked", helikon.Permissions{Ask: rules("Bash(git push)"), Allow: rules("Bash"), Approver: answer(false)}, call("Bash", helikon.EffectSideEffect, helikon.ModeDefault, gitLog), true, false, helikon.StageAllowRule},
		{"deny beats ask", helikon.Permissions{Ask: rules("Bash"), Deny: rules("Bash(git)"), Approver: answer(true)}, call("Bash", helikon.EffectSideEffect, helikon.ModeDefault, push), false, false, helikon.StageDenyRule},
		{"unknown targets are asked", helikon.Permissions{Ask: rules("Bash(git push)"), Allow: rules("Bash"), Approver: answer(false)}, call("Bash", helikon.EffectSideEffect, helikon.ModeDefault, nil), false, true, helikon.StageAskRule},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			asked = nil
			d := tt.p.Check(ctx, tt.c)
			if d.Allowed != tt.allowed || d.Stage != tt.stage || (asked != nil) != tt.asked {
				t.Fatalf("allowed=%v stage=%s asked=%v (%s); want allowed=%v stage=%s asked=%v", d.Allowed, d.Stage, asked != nil, d.Reason, tt.allowed, tt.stage, tt.asked)
			}
			if asked != nil && (asked.Rule == "" || !strings.Contains(asked.Reason, "ask rule")) {
				t.Errorf("request does not name the ask rule: %+v", asked)
			}
			if (d.Stage == helikon.StageAskRule || d.Stage == helikon.StageDenyRule || d.Stage == helikon.StageAllowRule) && d.Rule.Tool == "" {
				t.Errorf("decision by a rule does not name it: %+v", d)
			}
		})
	}
}

func TestApprovalRequestCarriesTargets(t *testing.T) {
	push := fakeTargeter{t: helikon.Targets{Commands: []helikon.Command{{Args: []string{"git", "push"}}}}}
	var got *helikon.ApprovalRequest
	p := helikon.Permissions{
		Policy: helikon.PolicyFunc(func(context.Context, *helikon.Call, *helikon.Targets) (helikon.PolicyDecision, error) {
			return helikon.PolicyAsk("?"), nil
		}),
		Approver: helikon.ApproverFunc(func(_ context.Context, r *helikon.ApprovalRequest) (bool, error) { got = r; return true, nil }),
	}
	p.Check(context.Background(), call("Bash", helikon.EffectSideEffect, helikon.ModeDefault, push))
	if got == nil || got.Targets == nil || len(got.Targets.Commands) != 1 || got.Rule != "" {
		t.Fatalf("request %+v: want the call's targets and no rule", got)
	}
	got = nil
	p.Check(context.Background(), call("Bash", helikon.EffectSideEffect, helikon.ModeDefault, nil))
	if got == nil || got.Targets != nil {
		t.Fatalf("request %+v: want no targets for a tool that reports none", got)
	}
}

func TestExactPatterns(t *testing.T) {
	cmd := func(dyn []bool, args ...string) helikon.Targets {
		return helikon.Targets{Commands: []helikon.Command{{Args: args, Dynamic: dyn}}}
	}
	host := func(h string) helikon.Targets { return helikon.Targets{Hosts: []string{h}} }
	tests := []struct {
		rule        string
		tool        string
		t           helikon.Targets
		allow, deny bool
	}{
		{"Bash(=npm run build)", "Bash", cmd(nil, "npm", "run", "build"), true, true},
		{"Bash(=npm run build)", "Bash", cmd(nil, "npm", "run", "build", "--prod"), false, false},
		{"Bash(=npm run build)", "Bash", cmd(nil, "npm", "run"), false, false},
		{"Bash(=npm run build)", "Bash", cmd([]bool{false, false, false, true}, "npm", "run", "build", "$X"), false, true},
		{"Bash(=npm run build)", "Bash", cmd([]bool{false, true, false, false}, "npm", "$R", "build", "x"), false, true},
		{"Bash(npm run build)", "Bash", cmd(nil, "npm", "run", "build", "--prod"), true, true},
		// An exact allow rule names the program as written; a deny rule
		// still matches it by its last path element.
		{"Bash(=npm run build)", "Bash", cmd(nil, "./npm", "run", "build"), false, true},
		{"Bash(=npm run build)", "Bash", cmd(nil, "/usr/bin/npm", "run", "build"), false, true},
		{"Bash(npm run build)", "Bash", cmd(nil, "/usr/bin/npm", "run", "build"), true, true},
		{"WebFetch(=example.com)", "WebFetch", host("example.com"), true, true},
		{"WebFetch(=example.com)", "WebFetch", host("EXAMPLE.com."), true, true},
		{"WebFetch(=example.com)", "WebFetch", host("api.example.com"), false, false},
		{"WebFetch(example.com)", "WebFetch", host("api.example.com"), true, true},
		{"WebFetch(=10.0.0.5)", "WebFetch", host("::ffff:10.0.0.5"), true, true},
	}
	for _, tt := range tests {
		r := helikon.MustParseRule(tt.rule)
		_, allowed := helikon.AllowedBy([]helikon.Rule{r}, tt.tool, &tt.t)
		tg := fakeTargeter{t: tt.t}
		denied := !(&helikon.Permissions{Deny: []helikon.Rule{r}, NoGuards: true}).Check(context.Background(), call(tt.tool, helikon.EffectSideEffect, helikon.ModeBypass, tg)).Allowed
		if allowed != tt.allow || denied != tt.deny {
			t.Errorf("%s on %+v: allows=%v denies=%v, want %v %v", tt.rule, tt.t, allowed, denied, tt.allow, tt.deny)
		}
	}
	for _, bad := range []string{"Read(=.env)", "Edit(=src/**)", "WebFetch(=*.example.com)", "Bash(=)", "Other(=x)"} {
		if _, err := helikon.ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) accepted an exact pattern it cannot honour", bad)
		}
	}
}

func TestAllowedByUnknownTargets(t *testing.T) {
	rules := must(helikon.ParseRules("Bash(git)"))
	if _, ok := helikon.AllowedBy(rules, "Bash", nil); ok {
		t.Error("a pattern rule allowed a call with unknown targets")
	}
	un := helikon.Targets{Commands: []helikon.Command{{Args: []string{"git"}}}, Unresolved: "eval"}
	if _, ok := helikon.AllowedBy(rules, "Bash", &un); ok {
		t.Error("a pattern rule allowed a call with unresolved targets")
	}
	if _, ok := helikon.AllowedBy(must(helikon.ParseRules("Bash")), "Bash", nil); !ok {
		t.Error("a bare rule did not allow")
	}
}
