package runner_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/agent/sequentialagent"
)

// TestNewRefusesRulesNamingNoTool: a deny rule spelt count's way in another
// case would match nothing; New refuses it, naming the rule and the tool.
func TestNewRefusesRulesNamingNoTool(t *testing.T) {
	sub := llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "helper", Model: agenttest.New(), Tools: []helikon.Tool[struct{}]{counter}}))
	seq, err := sequentialagent.New(sequentialagent.Config[struct{}]{Name: "seq", SubAgents: []agent.Agent[struct{}]{countingAgent()}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		agent agent.Agent[struct{}]
		deny  string
		want  string // "" when New must succeed
	}{
		{"known", countingAgent(), "count", ""},
		{"other tool", countingAgent(), "Bash", ""},
		{"wrong case", countingAgent(), "Count", "did you mean count?"},
		{"sub-agent's tool", llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "parent", Model: agenttest.New(), SubAgents: []agent.Agent[struct{}]{sub}})), "count", ""},
		{"the sub-agent as a tool", llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "parent", Model: agenttest.New(), SubAgents: []agent.Agent[struct{}]{sub}})), "Helper", "did you mean helper?"},
		{"workflow", seq, "cuont", "did you mean count?"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runner.New(runner.Config[struct{}]{Agent: tt.agent, Permissions: &helikon.Permissions{Deny: helikon.MustParseRules(tt.deny)}, OtherTools: []string{"Bash"}})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			var ute *helikon.UnknownToolError
			if !errors.As(err, &ute) || ute.Rule.Tool != tt.deny || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New: %v, want an *UnknownToolError for %s saying %q", err, tt.deny, tt.want)
			}
		})
	}
}

// TestNewLeavesToolSourcesToTheCaller: tools resolved at run time are not
// known to New, which cannot check rules against them.
func TestNewLeavesToolSourcesToTheCaller(t *testing.T) {
	a := llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "a", Model: agenttest.New(), ToolSources: []llmagent.ToolSource[struct{}]{noTools{}}}))
	if _, err := runner.New(runner.Config[struct{}]{Agent: a, Permissions: &helikon.Permissions{Deny: helikon.MustParseRules("mcp__x__y")}}); err != nil {
		t.Fatal(err)
	}
}

// TestFailedRunIsNotLoggedAboveDebug: the failure reaches the caller with
// the stream's error; logging it at Warn as well printed it twice.
func TestFailedRunIsNotLoggedAboveDebug(t *testing.T) {
	var buf bytes.Buffer
	m := agenttest.New(agenttest.Reply{Err: errors.New("model down")})
	a := llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "a", Model: m}))
	r, err := runner.New(runner.Config[struct{}]{Agent: a, Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Collect(r.Run(context.Background(), "", "hi")); err == nil {
		t.Fatal("the run did not fail")
	}
	if buf.Len() != 0 {
		t.Errorf("logged above Debug: %s", buf.String())
	}
}

type noTools struct{}

func (noTools) Tools(context.Context) ([]helikon.Tool[struct{}], error) { return nil, nil }
