package agenttool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/session"
	"github.com/paigasus/helikon/tool/agenttool"
	"github.com/paigasus/helikon/tool/functiontool"
)

// family is a parent agent whose model calls the agent tool "helper" (call
// id "h"); the helper's model calls the tool "probe" (call id "p") and then
// answers. Usage: the parent's turns 1+1 and 2+2 tokens, the helper's 100+10
// and 200+20.
type family struct {
	parent, helper *agenttest.Model
	probes         atomic.Int64 // probe invocations
	// onProbe runs inside the probe tool (nil: nothing).
	onProbe func(tc *helikon.ToolContext[App]) error
	agent   *llmagent.Agent[App]
	store   session.Store
}

func newFamily(t *testing.T, opts *agenttool.Options, extra ...helikon.Tool[App]) *family {
	t.Helper()
	f := &family{
		helper: agenttest.New(
			agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("p", "probe", `{}`)}, Usage: model.Usage{InputTokens: 100, OutputTokens: 10}},
			agenttest.Reply{Text: "sub answer", Usage: model.Usage{InputTokens: 200, OutputTokens: 20}},
		),
		store: session.NewMemory(),
	}
	calls := []model.ToolCall{agenttest.Call("h", "helper", `{"request":"probe it"}`)}
	for i, x := range extra {
		calls = append(calls, agenttest.Call(fmt.Sprint("x", i), x.Name(), `{}`))
	}
	f.parent = agenttest.New(
		agenttest.Reply{ToolCalls: calls, Usage: model.Usage{InputTokens: 1, OutputTokens: 1}},
		agenttest.Reply{Text: "parent answer", Usage: model.Usage{InputTokens: 2, OutputTokens: 2}},
	)
	probe := functiontool.Must(functiontool.New("probe", "Probe.", func(tc *helikon.ToolContext[App], _ struct{}) (string, error) {
		f.probes.Add(1)
		if f.onProbe != nil {
			if err := f.onProbe(tc); err != nil {
				return "", err
			}
		}
		return "probed", nil
	}, &functiontool.Options{Effect: helikon.EffectReadOnly}))
	helper := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "helper", Description: "Helps.", Model: f.helper, Tools: []helikon.Tool[App]{probe}}))
	tool, err := agenttool.New[App](helper, opts)
	if err != nil {
		t.Fatal(err)
	}
	f.agent = llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "parent", Model: f.parent, Tools: append([]helikon.Tool[App]{tool}, extra...)}))
	return f
}

func (f *family) runner(t *testing.T, perms *helikon.Permissions) *runner.Runner[App] {
	t.Helper()
	r, err := runner.New(runner.Config[App]{Agent: f.agent, Store: f.store, Permissions: perms, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// step is what a test expects of one event.
type step struct {
	kind  agent.EventKind
	agent string
	depth int
	path  []string
	tool  string // the tool call's name, when the event has one
}

func stepOf(ev *agent.Event) step {
	s := step{kind: ev.Kind, agent: ev.Agent, depth: ev.Depth, path: ev.Path}
	if ev.ToolCall != nil {
		s.tool = ev.ToolCall.Name
	}
	return s
}

func TestSubAgentEventsArriveInTheParentStreamWhileItRuns(t *testing.T) {
	f := newFamily(t, nil)
	var seenProbeCall atomic.Bool
	f.onProbe = func(*helikon.ToolContext[App]) error {
		// Forwarding waits for the consumer: by the time the sub-agent
		// runs its tool, the consumer has seen the call.
		if !seenProbeCall.Load() {
			return errors.New("the probe runs before the consumer saw its tool_call event")
		}
		return nil
	}
	var got []step
	var events []*agent.Event
	for ev, err := range f.runner(t, nil).Run(context.Background(), "s", "go") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == agent.EventToolCall && ev.ToolCall.Name == "probe" {
			seenProbeCall.Store(true)
		}
		events = append(events, ev)
		got = append(got, stepOf(ev))
	}
	h := []string{"h"}
	want := []step{
		{kind: agent.EventRunStarted, agent: "parent"},
		{kind: agent.EventTurnStarted, agent: "parent"},
		{kind: agent.EventToolCall, agent: "parent", tool: "helper"},
		{kind: agent.EventTurnStarted, agent: "helper", depth: 1, path: h},
		{kind: agent.EventToolCall, agent: "helper", depth: 1, path: h, tool: "probe"},
		{kind: agent.EventToolResult, agent: "helper", depth: 1, path: h, tool: "probe"},
		{kind: agent.EventTurnCompleted, agent: "helper", depth: 1, path: h},
		{kind: agent.EventTurnStarted, agent: "helper", depth: 1, path: h},
		{kind: agent.EventTextDelta, agent: "helper", depth: 1, path: h},
		{kind: agent.EventTextDelta, agent: "helper", depth: 1, path: h},
		{kind: agent.EventTurnCompleted, agent: "helper", depth: 1, path: h},
		{kind: agent.EventToolResult, agent: "parent", tool: "helper"},
		{kind: agent.EventTurnCompleted, agent: "parent"},
		{kind: agent.EventTurnStarted, agent: "parent"},
		{kind: agent.EventTextDelta, agent: "parent"},
		{kind: agent.EventTextDelta, agent: "parent"},
		{kind: agent.EventTurnCompleted, agent: "parent"},
		{kind: agent.EventRunCompleted, agent: "parent"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %v\nwant %v", got, want)
	}
	for _, ev := range events {
		if ev.Forwarded() != (ev.Depth == 1) {
			t.Errorf("%s of %s: Forwarded() = %v", ev.Kind, ev.Agent, ev.Forwarded())
		}
	}
	if r := events[5].ToolResult; r.IsError || r.Content != `"probed"` {
		t.Errorf("the sub-agent's tool result = %+v", r)
	}
	// The parent's tool result is the sub-agent's answer, as before.
	if r := events[11].ToolResult; r.IsError || r.Content != `{"response":"sub answer"}` {
		t.Errorf("the parent's tool result = %+v", r)
	}
	// Forwarded events encode with their path (helikon run --json).
	b, _ := json.Marshal(events[4])
	if !strings.Contains(string(b), `"depth":1,"path":["h"]`) || !strings.Contains(string(b), `"agent":"helper"`) {
		t.Errorf("JSON of a forwarded event: %s", b)
	}
}

func TestForwardingLeavesTheSessionAndAnswerAlone(t *testing.T) {
	// The same run with and without forwarding persists the same session:
	// the sub-agent's turns are never the parent's messages.
	sessions := map[bool][]model.Message{}
	for _, noForward := range []bool{false, true} {
		f := newFamily(t, &agenttool.Options{NoForward: noForward})
		res, err := agent.Collect(f.runner(t, nil).Run(context.Background(), "s", "go"))
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != "parent answer" {
			t.Errorf("noForward=%v: answer %q", noForward, res.Text)
		}
		forwarded := 0
		for _, ev := range res.Events {
			if ev.Forwarded() {
				forwarded++
			}
		}
		if (forwarded > 0) == noForward {
			t.Errorf("noForward=%v: %d forwarded events", noForward, forwarded)
		}
		sess, err := f.store.Get(context.Background(), "s")
		if err != nil {
			t.Fatal(err)
		}
		sessions[noForward] = sess.Messages
	}
	msgs := sessions[false]
	if !reflect.DeepEqual(msgs, sessions[true]) {
		t.Errorf("forwarding changed the session:\n%+v\n%+v", msgs, sessions[true])
	}
	roles := make([]model.Role, len(msgs))
	for i, m := range msgs {
		roles[i] = m.Role
		if strings.Contains(m.Text, "sub answer") || (len(m.ToolCalls) > 0 && m.ToolCalls[0].Name == "probe") {
			t.Errorf("a sub-agent message in the session: %+v", m)
		}
	}
	if want := []model.Role{model.RoleUser, model.RoleAssistant, model.RoleTool, model.RoleAssistant}; !slices.Equal(roles, want) {
		t.Errorf("session roles %v, want %v", roles, want)
	}
}

func TestSubAgentUsageIsCountedOnce(t *testing.T) {
	for _, tc := range []struct {
		noForward bool
		want      model.Usage
	}{
		// Forwarded: every model call of the run, the helper's included.
		{false, model.Usage{InputTokens: 1 + 2 + 100 + 200, OutputTokens: 1 + 2 + 10 + 20, Requests: 4}},
		// Private: only the parent's (the behaviour before forwarding).
		{true, model.Usage{InputTokens: 1 + 2, OutputTokens: 1 + 2, Requests: 2}},
	} {
		f := newFamily(t, &agenttool.Options{NoForward: tc.noForward})
		var runUsage *model.Usage
		var turns model.Usage
		var events []*agent.Event
		for ev, err := range f.runner(t, nil).Run(context.Background(), "", "go") {
			if err != nil {
				t.Fatal(err)
			}
			events = append(events, ev)
			switch ev.Kind {
			case agent.EventRunCompleted:
				runUsage = ev.Usage
			case agent.EventTurnCompleted:
				turns.Add(*ev.Usage)
			}
		}
		if runUsage == nil || *runUsage != tc.want {
			t.Errorf("noForward=%v: run usage %+v, want %+v", tc.noForward, runUsage, tc.want)
		}
		if turns != tc.want {
			t.Errorf("noForward=%v: the turns add up to %+v, want %+v", tc.noForward, turns, tc.want)
		}
		// Collect without the run_completed event sums the turns it saw,
		// each once.
		res, err := agent.Collect(seqOf(events[:len(events)-1]))
		if err != nil || res.Usage != tc.want || res.Text != "parent answer" {
			t.Errorf("noForward=%v: Collect = %+v, %v", tc.noForward, res.Usage, err)
		}
	}
}

// seqOf replays events as a stream.
func seqOf(events []*agent.Event) iter.Seq2[*agent.Event, error] {
	return func(yield func(*agent.Event, error) bool) {
		for _, ev := range events {
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// agentGoroutines returns the stacks of the goroutines other than the
// caller's that are running an agent or an agent tool.
func agentGoroutines() []string {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i > 0 && (strings.Contains(g, "helikon/agent/llmagent.") || strings.Contains(g, "helikon/tool/agenttool.(*Tool")) {
			out = append(out, g)
		}
	}
	return out
}

// checkNoAgentGoroutines fails when goroutines of the run outlive it. A
// goroutine that has signalled its end may still be on its way out, so the
// check waits for them to go, for a time no correct run comes near.
func checkNoAgentGoroutines(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		left := agentGoroutines()
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines of the run are still running after it ended:\n%s", len(left), strings.Join(left, "\n\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// blockingTool returns a tool that runs until its context is cancelled (or a
// minute, the deadlock guard) and records whether it was cancelled and when
// it has returned.
func blockingTool(started chan<- struct{}, cancelled, returned *atomic.Bool) helikon.Tool[App] {
	return functiontool.Must(functiontool.New("slow", "Blocks.", func(tc *helikon.ToolContext[App], _ struct{}) (string, error) {
		close(started)
		defer returned.Store(true)
		select {
		case <-tc.Done():
			cancelled.Store(true)
			for range 100 {
				runtime.Gosched() // take long enough to be caught by a stream that does not wait
			}
			return "", tc.Err()
		case <-time.After(time.Minute):
			return "never cancelled", nil
		}
	}, &functiontool.Options{Effect: helikon.EffectReadOnly}))
}

func TestStoppingMidSubAgent(t *testing.T) {
	isProbeCall := func(ev *agent.Event) bool {
		return ev.Kind == agent.EventToolCall && ev.ToolCall.Name == "probe"
	}
	t.Run("break", func(t *testing.T) {
		f := newFamily(t, nil)
		n := 0
		for ev, err := range f.runner(t, nil).Run(context.Background(), "", "go") {
			if err != nil {
				t.Fatal(err)
			}
			n++
			if isProbeCall(ev) {
				break
			}
		}
		checkNoAgentGoroutines(t)
		if got := f.probes.Load(); got != 0 {
			t.Errorf("the sub-agent ran its tool %d times after the consumer stopped", got)
		}
		if got := f.helper.Calls(); got != 1 {
			t.Errorf("the sub-agent called its model %d times, want 1", got)
		}
		if got := f.parent.Calls(); got != 1 {
			t.Errorf("the parent called its model %d times, want 1", got)
		}
		if n != 5 {
			t.Errorf("%d events before the break, want 5", n)
		}
	})
	t.Run("break with a parallel tool running", func(t *testing.T) {
		started := make(chan struct{})
		var cancelled, returned atomic.Bool
		f := newFamily(t, nil, blockingTool(started, &cancelled, &returned))
		for ev, err := range f.runner(t, nil).Run(context.Background(), "", "go") {
			if err != nil {
				t.Fatal(err)
			}
			if isProbeCall(ev) {
				<-started // the sibling is running: stopping must cancel it
				break
			}
		}
		if !returned.Load() {
			t.Error("the stream ended while a tool call was still running")
		}
		checkNoAgentGoroutines(t)
		if !cancelled.Load() {
			t.Error("the parallel tool was not cancelled when the consumer stopped")
		}
		if got := f.probes.Load(); got != 0 {
			t.Errorf("the sub-agent ran its tool %d times after the consumer stopped", got)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		f := newFamily(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var runErr error
		var last *agent.Event
		for ev, err := range f.runner(t, nil).Run(ctx, "", "go") {
			if ev != nil {
				last = ev
				if isProbeCall(ev) {
					cancel()
				}
			}
			if err != nil {
				runErr = err
			}
		}
		checkNoAgentGoroutines(t)
		if !errors.Is(runErr, context.Canceled) {
			t.Errorf("run error %v, want context.Canceled", runErr)
		}
		if last == nil || last.Kind != agent.EventRunFailed {
			t.Errorf("last event %+v, want run_failed", last)
		}
		if got := f.helper.Calls(); got != 1 {
			t.Errorf("the sub-agent called its model %d times after the cancellation, want 1", got)
		}
		if got := f.parent.Calls(); got != 1 {
			t.Errorf("the parent called its model %d times after the cancellation, want 1", got)
		}
	})
}

func TestSubAgentApprovalsGoThroughTheParentsHandler(t *testing.T) {
	for _, allow := range []bool{true, false} {
		f := newFamily(t, nil)
		var seenRequest atomic.Bool
		var asked []string
		perms := &helikon.Permissions{
			Policy: helikon.PolicyFunc(func(_ context.Context, c *helikon.Call, _ *helikon.Targets) (helikon.PolicyDecision, error) {
				if c.Tool == "probe" {
					return helikon.PolicyAsk("probing needs a yes"), nil
				}
				return helikon.PolicyAllow(), nil
			}),
			Approver: helikon.ApproverFunc(func(_ context.Context, req *helikon.ApprovalRequest) (bool, error) {
				if !seenRequest.Load() {
					return false, errors.New("asked before the consumer saw the approval request")
				}
				asked = append(asked, fmt.Sprintf("%s@%d:%s", req.Agent, req.AgentDepth, req.Tool)) // approvals come one at a time
				return allow, nil
			}),
		}
		var got []step
		for ev, err := range f.runner(t, perms).Run(context.Background(), "", "go") {
			if err != nil {
				t.Fatal(err)
			}
			if ev.Kind == agent.EventApprovalRequested {
				seenRequest.Store(true)
			}
			if ev.Kind == agent.EventApprovalRequested || ev.Kind == agent.EventPermissionDenied {
				got = append(got, stepOf(ev))
			}
		}
		if !slices.Equal(asked, []string{"helper@1:probe"}) {
			t.Errorf("allow=%v: the handler was asked about %v", allow, asked)
		}
		want := []step{{kind: agent.EventApprovalRequested, agent: "helper", depth: 1, path: []string{"h"}, tool: "probe"}}
		if !allow {
			want = append(want, step{kind: agent.EventPermissionDenied, agent: "helper", depth: 1, path: []string{"h"}, tool: "probe"})
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("allow=%v: events %v, want %v", allow, got, want)
		}
		if n := f.probes.Load(); n != map[bool]int64{true: 1, false: 0}[allow] {
			t.Errorf("allow=%v: probe ran %d times", allow, n)
		}
	}
}

func TestNestedSubAgentEventsCarryTheirPath(t *testing.T) {
	probe := functiontool.Must(functiontool.New("probe", "Probe.", func(*helikon.ToolContext[App], struct{}) (string, error) {
		return "probed", nil
	}, &functiontool.Options{Effect: helikon.EffectReadOnly}))
	leaf := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "leaf", Model: agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("p", "probe", `{}`)}},
		agenttest.Reply{Text: "leaf answer"},
	), Tools: []helikon.Tool[App]{probe}}))
	mid := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "mid", Model: agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("l", "leaf", `{"request":"probe"}`)}},
		agenttest.Reply{Text: "mid answer"},
	), SubAgents: []agent.Agent[App]{leaf}}))
	top := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "top", Model: agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("m", "mid", `{"request":"delegate"}`)}},
		agenttest.Reply{Text: "top answer"},
	), SubAgents: []agent.Agent[App]{mid}}))
	r, _ := runner.New(runner.Config[App]{Agent: top})
	res, err := agent.Collect(r.Run(context.Background(), "", "go"))
	if err != nil {
		t.Fatal(err)
	}
	var got []step
	for _, ev := range res.Events {
		if ev.Kind == agent.EventToolCall || ev.Kind == agent.EventToolResult {
			got = append(got, stepOf(ev))
		}
		if want := map[string]int{"top": 0, "mid": 1, "leaf": 2}[ev.Agent]; ev.Depth != want || len(ev.Path) != want {
			t.Errorf("%s of %s: depth %d, path %v", ev.Kind, ev.Agent, ev.Depth, ev.Path)
		}
	}
	want := []step{
		{kind: agent.EventToolCall, agent: "top", tool: "mid"},
		{kind: agent.EventToolCall, agent: "mid", depth: 1, path: []string{"m"}, tool: "leaf"},
		{kind: agent.EventToolCall, agent: "leaf", depth: 2, path: []string{"m", "l"}, tool: "probe"},
		{kind: agent.EventToolResult, agent: "leaf", depth: 2, path: []string{"m", "l"}, tool: "probe"},
		{kind: agent.EventToolResult, agent: "mid", depth: 1, path: []string{"m"}, tool: "leaf"},
		{kind: agent.EventToolResult, agent: "top", tool: "mid"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tool events:\n got %v\nwant %v", got, want)
	}
	if res.Text != "top answer" || res.Usage.Requests != 6 {
		t.Errorf("answer %q, usage %+v", res.Text, res.Usage)
	}
}

func TestParallelSubAgentsAreToldApartByPath(t *testing.T) {
	probe := functiontool.Must(functiontool.New("probe", "Probe.", func(*helikon.ToolContext[App], struct{}) (string, error) {
		return "probed", nil
	}, &functiontool.Options{Effect: helikon.EffectReadOnly}))
	helperModel := &agenttest.Model{Func: func(req *model.Request) agenttest.Reply {
		if agenttest.LastToolResults(req) != nil {
			return agenttest.Reply{Text: "done " + req.Messages[0].Text}
		}
		return agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("p", "probe", `{}`)}}
	}}
	helper := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "helper", Model: helperModel, Tools: []helikon.Tool[App]{probe}}))
	parent := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "parent", Model: agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("h1", "helper", `{"request":"one"}`), agenttest.Call("h2", "helper", `{"request":"two"}`)}},
		agenttest.Reply{Text: "both done"},
	), SubAgents: []agent.Agent[App]{helper}}))
	r, _ := runner.New(runner.Config[App]{Agent: parent})
	res, err := agent.Collect(r.Run(context.Background(), "", "go"))
	if err != nil {
		t.Fatal(err)
	}
	perCall := map[string][]agent.EventKind{}
	firstParentResult := -1
	for i, ev := range res.Events {
		if ev.Forwarded() {
			if firstParentResult >= 0 {
				t.Errorf("forwarded %s after the parent's tool results", ev.Kind)
			}
			perCall[strings.Join(ev.Path, "/")] = append(perCall[strings.Join(ev.Path, "/")], ev.Kind)
		} else if ev.Kind == agent.EventToolResult && firstParentResult < 0 {
			firstParentResult = i
		}
	}
	want := []agent.EventKind{
		agent.EventTurnStarted, agent.EventToolCall, agent.EventToolResult, agent.EventTurnCompleted,
		agent.EventTurnStarted, agent.EventTextDelta, agent.EventTextDelta, agent.EventTurnCompleted,
	}
	if len(perCall) != 2 || !slices.Equal(perCall["h1"], want) || !slices.Equal(perCall["h2"], want) {
		t.Errorf("forwarded events per call: %v", perCall)
	}
	for _, ev := range res.Events {
		if ev.Forwarded() && ev.Kind == agent.EventTurnCompleted && ev.Text != "" {
			if want := map[string]string{"h1": "done one", "h2": "done two"}[ev.Path[0]]; ev.Text != want {
				t.Errorf("call %s: the sub-agent answered %q, want %q", ev.Path[0], ev.Text, want)
			}
		}
	}
}
