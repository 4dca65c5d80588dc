package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/model"
)

func TestToolResultFor(t *testing.T) {
	call := model.ToolCall{ID: "c", Name: "Read"}
	for _, tc := range []struct {
		out     string
		err     error
		kind    helikon.ErrorKind
		content string
	}{
		{`{"x":1}`, nil, "", `{"x":1}`},
		{"", nil, "", "null"},
		{"", &helikon.InvalidArgsError{Tool: "Read", Problems: []string{"path: required"}}, helikon.KindInvalidArgs, "call Read again"},
		{"", helikon.Denied("outside the root"), helikon.KindDenied, "Do not retry"},
		{"", errors.New("disk full"), helikon.KindOther, "error: disk full"},
	} {
		r := model.ToolResultFor(call, []byte(tc.out), tc.err)
		if r.CallID != "c" || r.Name != "Read" || r.IsError != (tc.err != nil) || r.Kind != tc.kind || !strings.Contains(r.Content, tc.content) {
			t.Errorf("%v: %+v", tc.err, r)
		}
	}
}

func TestInvocationSharing(t *testing.T) {
	rc := helikon.NewRunContext(struct{}{}, &helikon.RunConfig{MaxAgentDepth: 1})
	inv := agent.NewInvocation(rc, &agent.InvocationConfig{History: []model.Message{model.UserMessage("a")}})
	if inv.Permissions() == nil {
		t.Fatal("nil permissions")
	}
	sub, err := inv.SubAgent()
	if err != nil {
		t.Fatal(err)
	}
	sub.Append(model.UserMessage("b"))
	if inv.Len() != 2 || sub.RunContext().AgentDepth() != 1 {
		t.Errorf("sub-agent does not share the conversation: %d messages, depth %d", inv.Len(), sub.RunContext().AgentDepth())
	}
	fork, err := inv.Fork([]model.Message{model.UserMessage("task")})
	if err != nil {
		t.Fatal(err)
	}
	fork.Append(model.UserMessage("c"))
	if inv.Len() != 2 || fork.Len() != 2 {
		t.Errorf("fork shares the conversation: parent %d, fork %d", inv.Len(), fork.Len())
	}
	fork.RunContext().State().Set("k", 1)
	if _, ok := inv.RunContext().State().Get("k"); !ok {
		t.Error("fork does not share state")
	}
	if _, err := sub.SubAgent(); !errors.Is(err, helikon.ErrMaxAgentDepth) {
		t.Errorf("depth 2 with limit 1: %v", err)
	}
	ctx := agent.ContextWithInvocation(context.Background(), inv)
	if got, ok := agent.InvocationFromContext[struct{}](ctx); !ok || got != inv {
		t.Error("invocation not carried by the context")
	}
	if _, ok := agent.InvocationFromContext[int](ctx); ok {
		t.Error("invocation of another context type returned")
	}
}

func events(evs []*agent.Event, err error) iter.Seq2[*agent.Event, error] {
	return func(yield func(*agent.Event, error) bool) {
		for _, e := range evs {
			if !yield(e, nil) {
				return
			}
		}
		if err != nil {
			yield(&agent.Event{Kind: agent.EventRunFailed, Error: err.Error()}, err)
		}
	}
}

func TestCollect(t *testing.T) {
	u1, u2 := &model.Usage{InputTokens: 1, Requests: 1}, &model.Usage{InputTokens: 2, Requests: 1}
	seq := []*agent.Event{
		{Kind: agent.EventRunStarted, SessionID: "s"},
		{Kind: agent.EventTurnCompleted, Usage: u1, Messages: []model.Message{{Role: model.RoleAssistant, Text: "thinking"}}},
		{Kind: agent.EventTurnCompleted, Usage: u2, Messages: []model.Message{{Role: model.RoleAssistant, Text: "final"}}},
	}
	r, err := agent.Collect(events(seq, nil))
	if err != nil || r.Text != "final" || r.SessionID != "s" || r.Usage.InputTokens != 3 || len(r.Events) != 3 {
		t.Fatalf("%+v %v", r, err)
	}
	boom := errors.New("boom")
	r, err = agent.Collect(events(seq[:2], boom))
	if !errors.Is(err, boom) || r.Text != "thinking" || r.Events[len(r.Events)-1].Kind != agent.EventRunFailed {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestCollectTakesTheAnswerFromTheRunNotASubAgent(t *testing.T) {
	u := func(n int64) *model.Usage { return &model.Usage{InputTokens: n, Requests: 1} }
	seq := []*agent.Event{
		{Kind: agent.EventTurnCompleted, Usage: u(1), Messages: []model.Message{{Role: model.RoleAssistant, Text: "the run's"}}},
		{Kind: agent.EventTurnCompleted, Usage: u(10), Path: []string{"c1"}, Depth: 1, Text: "the sub-agent's",
			Messages: []model.Message{{Role: model.RoleAssistant, Text: "the sub-agent's"}}},
	}
	r, err := agent.Collect(events(seq, nil))
	if err != nil || r.Text != "the run's" || r.Usage.InputTokens != 11 || r.Usage.Requests != 2 {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestForwardedBy(t *testing.T) {
	ev := &agent.Event{Kind: agent.EventToolCall, Agent: "leaf", Depth: 2, Path: []string{"c2"}}
	fw := ev.ForwardedBy("c1")
	if !slices.Equal(fw.Path, []string{"c1", "c2"}) || fw.Agent != "leaf" || fw.Depth != 2 || fw.Kind != agent.EventToolCall {
		t.Errorf("forwarded %+v", fw)
	}
	if !slices.Equal(ev.Path, []string{"c2"}) {
		t.Errorf("ForwardedBy changed the original: %v", ev.Path)
	}
	if own := (&agent.Event{}); own.Forwarded() || !own.ForwardedBy("").Forwarded() {
		t.Error("Forwarded is not len(Path) > 0")
	}
	b, _ := json.Marshal(fw)
	if !strings.Contains(string(b), `"path":["c1","c2"]`) {
		t.Errorf("JSON %s", b)
	}
	if b, _ := json.Marshal(&agent.Event{Kind: agent.EventTurnStarted}); strings.Contains(string(b), "path") {
		t.Errorf("an event of the run's own agent encodes a path: %s", b)
	}
}

func TestForwarderInContext(t *testing.T) {
	ctx := context.Background()
	if agent.ForwarderFromContext(ctx) != nil {
		t.Fatal("a forwarder out of nowhere")
	}
	var got []*agent.Event
	ctx = agent.ContextWithForwarder(ctx, func(ev *agent.Event) bool { got = append(got, ev); return true })
	if f := agent.ForwarderFromContext(ctx); f == nil || !f(&agent.Event{}) || len(got) != 1 {
		t.Fatal("the forwarder is not the one put in")
	}
	if agent.ForwarderFromContext(agent.ContextWithForwarder(ctx, nil)) != nil {
		t.Error("a nil forwarder does not hide the one around it")
	}
}

// ExampleCollect shows how a run's stream is consumed: range over it for the
// events as they happen, or collect it.
func ExampleCollect() {
	run := events([]*agent.Event{
		{Kind: agent.EventTextDelta, Text: "Hel"},
		{Kind: agent.EventTextDelta, Text: "lo"},
		{Kind: agent.EventRunCompleted, Text: "Hello", Usage: &model.Usage{Requests: 1}},
	}, nil)
	res, err := agent.Collect(run)
	fmt.Println(res.Text, res.Usage.Requests, err)
	// Output: Hello 1 <nil>
}
