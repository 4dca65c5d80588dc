package toolbox_test

import (
	"context"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/toolbox"
)

// TestAttackSessionRulesNeverAnswerAGuardOrAnAskRule: once "always" allowed
// git push, the same command asked about by a guard or an ask rule is asked
// again.
func TestAttackSessionRulesNeverAnswerAGuardOrAnAskRule(t *testing.T) {
	asked := 0
	a := &toolbox.Approver{Ask: func(context.Context, *helikon.ApprovalRequest, []helikon.Rule) (toolbox.Answer, error) {
		asked++
		return toolbox.Always, nil
	}}
	targets := &helikon.Targets{Commands: []helikon.Command{{Args: []string{"git", "push"}}}}
	for _, req := range []*helikon.ApprovalRequest{
		{Tool: "Bash", Targets: targets},
		{Tool: "Bash", Targets: targets, Guard: true},
		{Tool: "Bash", Targets: targets, Rule: "Bash(git push)"},
	} {
		if ok, err := a.Approve(context.Background(), req); !ok || err != nil {
			t.Fatalf("ok=%v err=%v", ok, err)
		}
	}
	if asked != 3 {
		t.Errorf("asked %d times, want 3: a session rule answered a guard's or an ask rule's question", asked)
	}
}

func TestAlwaysIsYesWhenNoRuleCanBeOffered(t *testing.T) {
	var saved []helikon.Rule
	a := &toolbox.Approver{
		Ask: func(_ context.Context, _ *helikon.ApprovalRequest, offer []helikon.Rule) (toolbox.Answer, error) {
			if offer != nil {
				t.Errorf("offered %v for an interpreter", offer)
			}
			return toolbox.Always, nil
		},
		OnAlways: func(r []helikon.Rule) { saved = append(saved, r...) },
	}
	req := &helikon.ApprovalRequest{Tool: "Bash", Targets: &helikon.Targets{Commands: []helikon.Command{{Args: []string{"python3", "x.py"}}}}}
	for range 2 {
		if ok, _ := a.Approve(context.Background(), req); !ok {
			t.Fatal("Always did not allow the call")
		}
	}
	if saved != nil {
		t.Errorf("saved %v", saved)
	}
}
