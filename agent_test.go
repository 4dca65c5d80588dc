package helikon_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
)

func TestToolResultFor(t *testing.T) {
	call := helikon.ToolCall{ID: "c", Name: "Read"}
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
		r := helikon.ToolResultFor(call, []byte(tc.out), tc.err)
		if r.CallID != "c" || r.Name != "Read" || r.IsError != (tc.err != nil) || r.Kind != tc.kind || !strings.Contains(r.Content, tc.content) {
			t.Errorf("%v: %+v", tc.err, r)
		}
	}
}

func TestInvocationSharing(t *testing.T) {
	rc := helikon.NewRunContext(struct{}{}, &helikon.RunConfig{MaxAgentDepth: 1})
	inv := helikon.NewInvocation(rc, nil, []helikon.Message{helikon.UserMessage("a")})
	if inv.Permissions() == nil {
		t.Fatal("nil permissions")
	}
	sub, err := inv.SubAgent()
	if err != nil {
		t.Fatal(err)
	}
	sub.Append(helikon.UserMessage("b"))
	if inv.Len() != 2 || sub.RunContext().AgentDepth() != 1 {
		t.Errorf("sub-agent does not share the conversation: %d messages, depth %d", inv.Len(), sub.RunContext().AgentDepth())
	}
	fork, err := inv.Fork([]helikon.Message{helikon.UserMessage("task")})
	if err != nil {
		t.Fatal(err)
	}
	fork.Append(helikon.UserMessage("c"))
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
	ctx := helikon.ContextWithInvocation(context.Background(), inv)
	if got, ok := helikon.InvocationFromContext[struct{}](ctx); !ok || got != inv {
		t.Error("invocation not carried by the context")
	}
	if _, ok := helikon.InvocationFromContext[int](ctx); ok {
		t.Error("invocation of another context type returned")
	}
}

func events(evs []*helikon.Event, err error) iter.Seq2[*helikon.Event, error] {
	return func(yield func(*helikon.Event, error) bool) {
		for _, e := range evs {
			if !yield(e, nil) {
				return
			}
		}
		if err != nil {
			yield(&helikon.Event{Kind: helikon.EventRunFailed, Error: err.Error()}, err)
		}
	}
}

func TestCollect(t *testing.T) {
	u1, u2 := &helikon.Usage{InputTokens: 1, Requests: 1}, &helikon.Usage{InputTokens: 2, Requests: 1}
	seq := []*helikon.Event{
		{Kind: helikon.EventRunStarted, SessionID: "s"},
		{Kind: helikon.EventTurnCompleted, Usage: u1, Messages: []helikon.Message{{Role: helikon.RoleAssistant, Text: "thinking"}}},
		{Kind: helikon.EventTurnCompleted, Usage: u2, Messages: []helikon.Message{{Role: helikon.RoleAssistant, Text: "final"}}},
	}
	r, err := helikon.Collect(events(seq, nil))
	if err != nil || r.Text != "final" || r.SessionID != "s" || r.Usage.InputTokens != 3 || len(r.Events) != 3 {
		t.Fatalf("%+v %v", r, err)
	}
	boom := errors.New("boom")
	r, err = helikon.Collect(events(seq[:2], boom))
	if !errors.Is(err, boom) || r.Text != "thinking" || r.Events[len(r.Events)-1].Kind != helikon.EventRunFailed {
		t.Fatalf("%+v %v", r, err)
	}
}

// ExampleCollect shows how a run's stream is consumed: range over it for the
// events as they happen, or collect it.
func ExampleCollect() {
	run := events([]*helikon.Event{
		{Kind: helikon.EventTextDelta, Text: "Hel"},
		{Kind: helikon.EventTextDelta, Text: "lo"},
		{Kind: helikon.EventRunCompleted, Text: "Hello", Usage: &helikon.Usage{Requests: 1}},
	}, nil)
	res, err := helikon.Collect(run)
	fmt.Println(res.Text, res.Usage.Requests, err)
	// Output: Hello 1 <nil>
}
