package llmagent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/functiontool"
)

type App = struct{}

type spendArgs struct {
	Category string `json:"category" jsonschema:"spending category"`
	Month    string `json:"month" jsonschema:"month in YYYY-MM form"`
}
type spendOut struct {
	Total float64 `json:"total"`
	Count int     `json:"count"`
}

var lookupCalls atomic.Int64

var lookupSpending = functiontool.Must(functiontool.New("lookup_spending", "Look up spending.",
	func(tc *helikon.ToolContext[App], in spendArgs) (spendOut, error) {
		lookupCalls.Add(1)
		if strings.EqualFold(in.Category, "dining") {
			return spendOut{Total: 312.40, Count: 18}, nil
		}
		return spendOut{}, nil
	}, &functiontool.Options{Effect: helikon.EffectReadOnly}))

type budgetArgs struct {
	Category string `json:"category"`
}
type budgetOut struct {
	Limit float64 `json:"limit"`
}

var budgetStatus = functiontool.Must(functiontool.New("budget_status", "Budget limit of a category.",
	func(tc *helikon.ToolContext[App], in budgetArgs) (budgetOut, error) {
		return budgetOut{Limit: 400}, nil
	}, &functiontool.Options{Effect: helikon.EffectReadOnly}))

// effectTool is a tool with a declared effect that counts its invocations.
type effectTool struct {
	helikon.ToolInfo
	calls atomic.Int64
	fn    func(tc *helikon.ToolContext[App], args json.RawMessage) (json.RawMessage, error)
}

func newEffectTool(name string, e helikon.Effect, fn func(tc *helikon.ToolContext[App], args json.RawMessage) (json.RawMessage, error)) *effectTool {
	return &effectTool{ToolInfo: helikon.ToolInfo{ToolName: name, ToolDescription: name, InputSchema: &jsonschema.Schema{Type: "object"}, ToolEffect: e}, fn: fn}
}

func (t *effectTool) Invoke(tc *helikon.ToolContext[App], args json.RawMessage) (json.RawMessage, error) {
	t.calls.Add(1)
	if t.fn != nil {
		return t.fn(tc, args)
	}
	return json.RawMessage(`{"ok":true}`), nil
}

func run(t *testing.T, cfg runner.Config[App], prompt string) (*agent.RunResult, error) {
	t.Helper()
	r, err := runner.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return agent.Collect(r.Run(context.Background(), "", prompt))
}

func kinds(evs []*agent.Event) []agent.EventKind {
	var ks []agent.EventKind
	for _, e := range evs {
		if e.Kind != agent.EventTextDelta {
			ks = append(ks, e.Kind)
		}
	}
	return ks
}

func find(evs []*agent.Event, k agent.EventKind) []*agent.Event {
	var out []*agent.Event
	for _, e := range evs {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

func TestTwoToolConversation(t *testing.T) {
	m := agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("c1", "lookup_spending", `{"category":"Dining","month":"2026-10"}`)}, Usage: model.Usage{InputTokens: 10, OutputTokens: 5}},
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("c2", "budget_status", `{"category":"Dining"}`)}, Usage: model.Usage{InputTokens: 20, OutputTokens: 5}},
		agenttest.Reply{Text: "You spent $312.40 of $400.", Usage: model.Usage{InputTokens: 30, OutputTokens: 7}},
	)
	a := llmagent.Must(llmagent.NewBuilder[App]().Name("budget").Model(m).Instructions("be brief").Tools(lookupSpending, budgetStatus).Build())
	res, err := run(t, runner.Config[App]{Agent: a}, "How much on dining?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "You spent $312.40 of $400." {
		t.Errorf("text = %q", res.Text)
	}
	want := []agent.EventKind{
		agent.EventRunStarted,
		agent.EventTurnStarted, agent.EventToolCall, agent.EventToolResult, agent.EventTurnCompleted,
		agent.EventTurnStarted, agent.EventToolCall, agent.EventToolResult, agent.EventTurnCompleted,
		agent.EventTurnStarted, agent.EventTurnCompleted,
		agent.EventRunCompleted,
	}
	if got := kinds(res.Events); !slices.Equal(got, want) {
		t.Errorf("events = %v\nwant %v", got, want)
	}
	if u := res.Usage; u.InputTokens != 60 || u.OutputTokens != 17 || u.Requests != 3 {
		t.Errorf("usage = %+v", u)
	}
	reqs := m.Requests()
	if len(reqs) != 3 || reqs[0].Instructions != "be brief" || len(reqs[0].Tools) != 2 {
		t.Fatalf("requests = %+v", reqs)
	}
	if !agenttest.Contains(reqs[1], `"total":312.4`) {
		t.Errorf("the tool output did not reach the model: %+v", reqs[1].Messages)
	}
	if got := len(reqs[2].Messages); got != 5 {
		t.Errorf("third request has %d messages, want 5 (user, call, result, call, result)", got)
	}
	if len(find(res.Events, agent.EventTextDelta)) < 2 {
		t.Errorf("text was not streamed as deltas")
	}
}

func TestParallelToolCallsRunConcurrentlyWithLimitAndReportInOrder(t *testing.T) {
	const limit = 2
	var inflight, maxInflight atomic.Int64
	var mu sync.Mutex
	started := 0
	both := make(chan struct{})
	slow := newEffectTool("slow", helikon.EffectReadOnly, func(tc *helikon.ToolContext[App], args json.RawMessage) (json.RawMessage, error) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for {
			m := maxInflight.Load()
			if n <= m || maxInflight.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		started++
		if started == limit {
			close(both)
		}
		mu.Unlock()
		select { // the first two calls wait for each other: proves concurrency
		case <-both:
		case <-time.After(10 * time.Second):
		}
		return json.RawMessage(`{"id":` + string(args[len(`{"id":`):len(args)-1]) + `}`), nil
	})
	var calls []model.ToolCall
	for i := range 5 {
		id := string(rune('a' + i))
		calls = append(calls, agenttest.Call("call_"+id, "slow", `{"id":"`+id+`"}`))
	}
	m := agenttest.New(agenttest.Reply{ToolCalls: calls}, agenttest.Reply{Text: "done"})
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "p", Model: m, Tools: []helikon.Tool[App]{slow}, MaxParallelTools: limit}))
	res, err := run(t, runner.Config[App]{Agent: a}, "go")
	if err != nil {
		t.Fatal(err)
	}
	if got := maxInflight.Load(); got != limit {
		t.Errorf("max concurrent calls = %d, want %d", got, limit)
	}
	var order []string
	for _, e := range find(res.Events, agent.EventToolResult) {
		order = append(order, e.ToolResult.CallID+"="+e.ToolResult.Content)
	}
	want := []string{`call_a={"id":"a"}`, `call_b={"id":"b"}`, `call_c={"id":"c"}`, `call_d={"id":"d"}`, `call_e={"id":"e"}`}
	if !slices.Equal(order, want) {
		t.Errorf("results = %v, want %v", order, want)
	}
	tm := m.Requests()[1].Messages[2]
	if tm.Role != model.RoleTool || len(tm.ToolResults) != 5 || tm.ToolResults[4].CallID != "call_e" {
		t.Errorf("tool message = %+v", tm)
	}
}

func TestInvalidArgumentsRepairedOnceThenFailTheRun(t *testing.T) {
	bad := agenttest.Call("c1", "lookup_spending", `{"category":"Dining"}`)
	good := agenttest.Call("c2", "lookup_spending", `{"category":"Dining","month":"2026-10"}`)
	malformed := agenttest.Call("c3", "lookup_spending", `{"category":`)

	t.Run("repaired", func(t *testing.T) {
		m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{bad}}, agenttest.Reply{ToolCalls: []model.ToolCall{good}}, agenttest.Reply{Text: "ok"})
		a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "r", Model: m, Tools: []helikon.Tool[App]{lookupSpending}}))
		res, err := run(t, runner.Config[App]{Agent: a}, "go")
		if err != nil {
			t.Fatal(err)
		}
		r := find(res.Events, agent.EventToolResult)[0].ToolResult
		if !r.IsError || r.Kind != helikon.KindInvalidArgs || !strings.Contains(r.Content, "month") {
			t.Errorf("first result = %+v; want an invalid-args error naming the missing field", r)
		}
		if res.Text != "ok" {
			t.Errorf("text = %q", res.Text)
		}
	})
	for name, second := range map[string]model.ToolCall{"invalid twice": bad, "malformed JSON": malformed} {
		t.Run(name, func(t *testing.T) {
			m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{bad}}, agenttest.Reply{ToolCalls: []model.ToolCall{second}}, agenttest.Reply{Text: "never"})
			a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "r", Model: m, Tools: []helikon.Tool[App]{lookupSpending}}))
			res, err := run(t, runner.Config[App]{Agent: a}, "go")
			if !errors.Is(err, llmagent.ErrRepairBudget) || !errors.Is(err, helikon.ErrInvalidArgs) {
				t.Fatalf("err = %v; want the repair budget exhausted", err)
			}
			if !strings.Contains(err.Error(), "lookup_spending") {
				t.Errorf("error %q does not name the tool", err)
			}
			if m.Calls() != 2 {
				t.Errorf("model called %d times, want 2", m.Calls())
			}
			last := res.Events[len(res.Events)-1]
			if last.Kind != agent.EventRunFailed {
				t.Errorf("last event = %v", last.Kind)
			}
		})
	}
	t.Run("parallel invalid calls count once", func(t *testing.T) {
		// Two invalid calls of one tool in the same turn, then a repair:
		// the model saw the errors only once, so it may still repair.
		bad2 := agenttest.Call("c1b", "lookup_spending", `{"month":"2026-10"}`)
		m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{bad, bad2}}, agenttest.Reply{ToolCalls: []model.ToolCall{good}}, agenttest.Reply{Text: "ok"})
		a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "r", Model: m, Tools: []helikon.Tool[App]{lookupSpending}}))
		res, err := run(t, runner.Config[App]{Agent: a}, "go")
		if err != nil {
			t.Fatalf("run failed after one turn of invalid calls: %v", err)
		}
		if res.Text != "ok" || m.Calls() != 3 {
			t.Errorf("text %q after %d model calls", res.Text, m.Calls())
		}
	})
	t.Run("a valid call in the turn does not clear the strike", func(t *testing.T) {
		// Turn 1: invalid then valid (one strike, whatever the order);
		// turn 2: invalid again fails the run.
		m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{bad, good}}, agenttest.Reply{ToolCalls: []model.ToolCall{bad}}, agenttest.Reply{Text: "never"})
		a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "r", Model: m, Tools: []helikon.Tool[App]{lookupSpending}}))
		if _, err := run(t, runner.Config[App]{Agent: a}, "go"); !errors.Is(err, llmagent.ErrRepairBudget) {
			t.Fatalf("err = %v; want the repair budget exhausted", err)
		}
	})
	t.Run("budget configurable", func(t *testing.T) {
		m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{bad}}, agenttest.Reply{ToolCalls: []model.ToolCall{bad}}, agenttest.Reply{Text: "ok"})
		a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "r", Model: m, Tools: []helikon.Tool[App]{lookupSpending}, RepairBudget: 2}))
		if _, err := run(t, runner.Config[App]{Agent: a}, "go"); err != nil {
			t.Fatal(err)
		}
	})
}

// TestOtherErrorsDoNotSpendTheRepairBudget: only invalid arguments count
// against the repair budget. A tool that fails with kind other turn after
// turn (an Edit whose old_string the model keeps misquoting) leaves the run
// going, so the model can read the file again and retry.
func TestOtherErrorsDoNotSpendTheRepairBudget(t *testing.T) {
	miss := newEffectTool("edit", helikon.EffectReadOnly, func(*helikon.ToolContext[App], json.RawMessage) (json.RawMessage, error) {
		return nil, helikon.Other(errors.New("old_string was not found in a.txt"))
	})
	m := agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("1", "edit", `{}`)}},
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("2", "edit", `{}`)}},
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("3", "edit", `{}`)}},
		agenttest.Reply{Text: "gave up politely"},
	)
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "r", Model: m, Tools: []helikon.Tool[App]{miss}}))
	res, err := run(t, runner.Config[App]{Agent: a}, "go")
	if err != nil || res.Text != "gave up politely" || m.Calls() != 4 {
		t.Fatalf("run = %v after %d model calls; want it to continue past three failed edits", err, m.Calls())
	}
}

func TestErrorsGoBackToTheModel(t *testing.T) {
	boom := newEffectTool("boom", helikon.EffectReadOnly, func(*helikon.ToolContext[App], json.RawMessage) (json.RawMessage, error) {
		panic("kaboom")
	})
	other := newEffectTool("other", helikon.EffectReadOnly, func(*helikon.ToolContext[App], json.RawMessage) (json.RawMessage, error) {
		return nil, errors.New("disk full")
	})
	refuse := newEffectTool("refuse", helikon.EffectReadOnly, func(*helikon.ToolContext[App], json.RawMessage) (json.RawMessage, error) {
		return nil, helikon.Denied("outside the sandbox")
	})
	m := agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{
			agenttest.Call("1", "nosuch", `{}`),
			agenttest.Call("2", "boom", `{}`),
			agenttest.Call("3", "other", `{}`),
			agenttest.Call("4", "refuse", `{}`),
		}},
		agenttest.Reply{Text: "handled"},
	)
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "e", Model: m, Tools: []helikon.Tool[App]{boom, other, refuse}}))
	res, err := run(t, runner.Config[App]{Agent: a}, "go")
	if err != nil {
		t.Fatal(err)
	}
	rs := find(res.Events, agent.EventToolResult)
	checks := []struct {
		kind helikon.ErrorKind
		want string
	}{
		{helikon.KindOther, "available tools are: boom, other, refuse"},
		{helikon.KindOther, "panic: kaboom"},
		{helikon.KindOther, "disk full"},
		{helikon.KindDenied, "outside the sandbox"},
	}
	for i, c := range checks {
		r := rs[i].ToolResult
		if !r.IsError || r.Kind != c.kind || !strings.Contains(r.Content, c.want) {
			t.Errorf("result %d = %+v; want %s containing %q", i, r, c.kind, c.want)
		}
	}
	if res.Text != "handled" {
		t.Errorf("text = %q", res.Text)
	}
}

func TestPlanModeDeniesWriteToolWithoutInvokingIt(t *testing.T) {
	write := newEffectTool("Write", helikon.EffectWrite, nil)
	read := newEffectTool("Read", helikon.EffectReadOnly, nil)
	m := agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("w", "Write", `{"path":"a"}`), agenttest.Call("r", "Read", `{"path":"a"}`)}},
		agenttest.Reply{Text: "planned"},
	)
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "plan", Model: m, Tools: []helikon.Tool[App]{write, read}}))
	res, err := run(t, runner.Config[App]{Agent: a, Mode: helikon.ModePlan}, "go")
	if err != nil {
		t.Fatal(err)
	}
	if write.calls.Load() != 0 {
		t.Fatal("Write was invoked under plan mode")
	}
	if read.calls.Load() != 1 {
		t.Errorf("Read invoked %d times, want 1", read.calls.Load())
	}
	denied := find(res.Events, agent.EventPermissionDenied)
	if len(denied) != 1 || denied[0].ToolCall.Name != "Write" || !strings.Contains(denied[0].Reason, "plan mode") {
		t.Fatalf("denied events = %+v", denied)
	}
	r := m.Requests()[1].Messages[2].ToolResults[0]
	if !r.IsError || r.Kind != helikon.KindDenied || !strings.Contains(r.Content, "plan mode") {
		t.Errorf("the model was not told: %+v", r)
	}
}

func TestAcceptEditsLetsWriteThroughAndAsksForBash(t *testing.T) {
	for _, approve := range []bool{true, false} {
		write := newEffectTool("Write", helikon.EffectWrite, nil)
		bash := newEffectTool("Bash", helikon.EffectSideEffect, nil)
		m := agenttest.New(
			agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("w", "Write", `{}`), agenttest.Call("b", "Bash", `{"command":"make"}`)}},
			agenttest.Reply{Text: "done"},
		)
		var asked []string
		perms := &helikon.Permissions{
			Policy: helikon.PolicyFunc(func(ctx context.Context, c *helikon.Call, _ *helikon.Targets) (helikon.PolicyDecision, error) {
				return helikon.PolicyAsk("run " + c.Tool + "?"), nil
			}),
			Approver: helikon.ApproverFunc(func(ctx context.Context, req *helikon.ApprovalRequest) (bool, error) {
				asked = append(asked, req.Tool)
				return approve, nil
			}),
		}
		a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "ae", Model: m, Tools: []helikon.Tool[App]{write, bash}}))
		res, err := run(t, runner.Config[App]{Agent: a, Mode: helikon.ModeAcceptEdits, Permissions: perms}, "go")
		if err != nil {
			t.Fatal(err)
		}
		if write.calls.Load() != 1 {
			t.Errorf("approve=%v: Write invoked %d times", approve, write.calls.Load())
		}
		if !slices.Equal(asked, []string{"Bash"}) {
			t.Errorf("approve=%v: asked about %v, want only Bash", approve, asked)
		}
		reqs := find(res.Events, agent.EventApprovalRequested)
		if len(reqs) != 1 || reqs[0].ToolCall.Name != "Bash" || reqs[0].Reason != "run Bash?" {
			t.Errorf("approve=%v: approval events = %+v", approve, reqs)
		}
		wantCalls := int64(0)
		if approve {
			wantCalls = 1
		}
		if bash.calls.Load() != wantCalls {
			t.Errorf("approve=%v: Bash invoked %d times", approve, bash.calls.Load())
		}
		if got := len(find(res.Events, agent.EventPermissionDenied)); got != int(1-wantCalls) {
			t.Errorf("approve=%v: %d denial events", approve, got)
		}
	}
}

func TestMaxTurns(t *testing.T) {
	loop := agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("", "budget_status", `{"category":"x"}`)}}
	m := &agenttest.Model{Func: func(*model.Request) agenttest.Reply { return loop }}
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "mt", Model: m, Tools: []helikon.Tool[App]{budgetStatus}, MaxTurns: 3}))
	_, err := run(t, runner.Config[App]{Agent: a}, "go")
	if !errors.Is(err, llmagent.ErrMaxTurns) {
		t.Fatalf("err = %v, want ErrMaxTurns", err)
	}
	if m.Calls() != 3 {
		t.Errorf("model called %d times, want 3", m.Calls())
	}
	m2 := &agenttest.Model{Func: func(*model.Request) agenttest.Reply { return loop }}
	a2 := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "mt", Model: m2, Tools: []helikon.Tool[App]{budgetStatus}}))
	if _, err := run(t, runner.Config[App]{Agent: a2}, "go"); !errors.Is(err, llmagent.ErrMaxTurns) || m2.Calls() != llmagent.DefaultMaxTurns {
		t.Errorf("default: err = %v after %d calls, want ErrMaxTurns after %d", err, m2.Calls(), llmagent.DefaultMaxTurns)
	}
}

func pidAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestCancellationMidToolLeavesNoProcess(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pids := make(chan int, 1)
	sleeper := newEffectTool("sleeper", helikon.EffectReadOnly, func(tc *helikon.ToolContext[App], _ json.RawMessage) (json.RawMessage, error) {
		cmd := exec.CommandContext(tc, "sleep", "60")
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		pids <- cmd.Process.Pid
		return nil, cmd.Wait()
	})
	m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("s", "sleeper", `{}`)}}, agenttest.Reply{Text: "never"})
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "c", Model: m, Tools: []helikon.Tool[App]{sleeper}}))
	r, _ := runner.New(runner.Config[App]{Agent: a})
	var pid int
	go func() { pid = <-pids; cancel() }()
	res, err := agent.Collect(r.Run(ctx, "s1", "go"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if pid == 0 || pidAlive(pid) {
		// Wait reaps the child before Invoke returns, so it must be gone.
		t.Errorf("process %d still alive after cancellation", pid)
	}
	if m.Calls() != 1 {
		t.Errorf("model called %d times after cancellation", m.Calls())
	}
	if n := len(find(res.Events, agent.EventTurnCompleted)); n != 0 {
		t.Errorf("an interrupted turn was reported completed")
	}
	sess, err := r.Store().Get(context.Background(), "s1")
	if err != nil || len(sess.Messages) != 1 {
		t.Errorf("session after cancellation = %+v, %v; want only the prompt", sess, err)
	}
}

// blockingModel streams one delta and then blocks until cancelled.
type blockingModel struct{}

func (blockingModel) Name() string { return "blocking" }
func (blockingModel) Stream(ctx context.Context, _ *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		if !yield(&model.Chunk{Text: "Hel"}, nil) {
			return
		}
		<-ctx.Done()
		yield(nil, ctx.Err())
	}
}

func TestCancellationMidStream(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "c", Model: blockingModel{}}))
	r, _ := runner.New(runner.Config[App]{Agent: a})
	var err error
	for ev, e := range r.Run(ctx, "", "go") {
		if ev != nil && ev.Kind == agent.EventTextDelta {
			cancel()
		}
		err = e
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestStoppingIterationStopsTheRun(t *testing.T) {
	m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("1", "budget_status", `{"category":"x"}`)}}, agenttest.Reply{Text: "x"})
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "s", Model: m, Tools: []helikon.Tool[App]{budgetStatus}}))
	r, _ := runner.New(runner.Config[App]{Agent: a})
	for ev := range r.Run(context.Background(), "", "go") {
		if ev.Kind == agent.EventToolCall {
			break
		}
	}
	if m.Calls() != 1 {
		t.Errorf("model called %d times after the consumer stopped", m.Calls())
	}
}

func TestTracingSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := trace.NewTracerProvider(trace.WithSpanProcessor(rec))
	m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("c1", "budget_status", `{"category":"x"}`)}, Usage: model.Usage{InputTokens: 3, OutputTokens: 4}}, agenttest.Reply{Text: "ok"})
	m.ModelName = "gpt-test"
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "traced", Model: m, Tools: []helikon.Tool[App]{budgetStatus}}))
	if _, err := run(t, runner.Config[App]{Agent: a, Tracer: tp.Tracer("test")}, "go"); err != nil {
		t.Fatal(err)
	}
	attrs := map[string]map[string]string{}
	for _, s := range rec.Ended() {
		kv := map[string]string{}
		for _, a := range s.Attributes() {
			kv[string(a.Key)] = a.Value.Emit()
		}
		attrs[s.Name()] = kv
	}
	for name, want := range map[string]map[string]string{
		"invoke_agent traced":        {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "traced"},
		"chat gpt-test":              {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-test"},
		"execute_tool budget_status": {"gen_ai.tool.name": "budget_status", "gen_ai.tool.call.id": "c1"},
	} {
		got, ok := attrs[name]
		if !ok {
			t.Errorf("no span %q (spans: %v)", name, attrs)
			continue
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("span %q: %s = %q, want %q", name, k, got[k], v)
			}
		}
	}
	if len(rec.Ended()) != 4 {
		t.Errorf("%d spans, want 4 (agent, 2 chats, 1 tool)", len(rec.Ended()))
	}
}

func TestNewRejectsDuplicateTools(t *testing.T) {
	_, err := llmagent.New(llmagent.Config[App]{Name: "d", Model: agenttest.New(), Tools: []helikon.Tool[App]{budgetStatus, budgetStatus}})
	if err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("err = %v", err)
	}
	if _, err := llmagent.New(llmagent.Config[App]{Name: "d"}); err == nil {
		t.Fatal("an agent without a model was built")
	}
}

type staticSource []helikon.Tool[App]

func (s staticSource) Tools(context.Context) ([]helikon.Tool[App], error) { return s, nil }

func TestToolSources(t *testing.T) {
	m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("1", "budget_status", `{"category":"x"}`)}}, agenttest.Reply{Text: "ok"})
	a := llmagent.Must(llmagent.NewBuilder[App]().Name("src").Model(m).ToolSource(staticSource{budgetStatus}).Build())
	res, err := run(t, runner.Config[App]{Agent: a}, "go")
	if err != nil {
		t.Fatal(err)
	}
	if r := find(res.Events, agent.EventToolResult)[0].ToolResult; r.IsError {
		t.Errorf("result = %+v", r)
	}
}

// FuzzToolCallArguments feeds arbitrary argument bytes from the model through
// the runner to a typed tool: the run never panics or fails, and each call
// either succeeds or goes back to the model as invalid arguments.
func FuzzToolCallArguments(f *testing.F) {
	for _, s := range []string{`{"category":"Dining","month":"2026-10"}`, `{`, ``, `null`, `[]`, `{"category":1}`, "\x00", `{"category":"a","month":"b","x":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{{ID: "1", Name: "lookup_spending", Args: args}}}, agenttest.Reply{Text: "ok"})
		m.NoRecord = true
		a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "f", Model: m, Tools: []helikon.Tool[App]{lookupSpending}}))
		r, _ := runner.New(runner.Config[App]{Agent: a})
		res, err := agent.Collect(r.Run(context.Background(), "", "go"))
		if err != nil {
			t.Fatalf("run failed: %v", err)
		}
		tr := find(res.Events, agent.EventToolResult)[0].ToolResult
		if tr.IsError && tr.Kind != helikon.KindInvalidArgs {
			t.Fatalf("args %q gave %+v", args, tr)
		}
	})
}

// TestModelResponseIsNotModified runs two runs at once on a model that hands
// both the same reply, whose tool call has no id: the agent names the call
// on its own copy (run with -race).
func TestModelResponseIsNotModified(t *testing.T) {
	shared := agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("", "budget_status", `{"category":"x"}`)}}
	m := &agenttest.Model{NoRecord: true, Func: func(req *model.Request) agenttest.Reply {
		if agenttest.LastToolResults(req) != nil {
			return agenttest.Reply{Text: "ok"}
		}
		return shared
	}}
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "shared", Model: m, Tools: []helikon.Tool[App]{budgetStatus}}))
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			res, err := run(t, runner.Config[App]{Agent: a}, "go")
			if err != nil {
				t.Error(err)
				return
			}
			if id := find(res.Events, agent.EventToolResult)[0].ToolResult.CallID; id == "" {
				t.Error("the call got no id")
			}
		})
	}
	wg.Wait()
	if id := shared.ToolCalls[0].ID; id != "" {
		t.Errorf("the model's reply was modified: call id %q", id)
	}
}

// TestSecretsStayOutOfLogsAndSpans backs the package's and the runner's
// claim: prompts, tool arguments and tool outputs are neither logged nor put
// on spans, in a run that completes and in one that fails.
func TestSecretsStayOutOfLogsAndSpans(t *testing.T) {
	const secret = "sk-SECRET-7f3a"
	echo := newEffectTool("echo", helikon.EffectReadOnly, func(_ *helikon.ToolContext[App], args json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`{"echo":` + string(args) + `}`), nil
	})
	call := agenttest.Call("c1", "echo", `{"token":"`+secret+`"}`)
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	rec := tracetest.NewSpanRecorder()
	tp := trace.NewTracerProvider(trace.WithSpanProcessor(rec))
	for _, maxTurns := range []int{2, 1} { // completes; fails at the turn limit
		m := agenttest.New(agenttest.Reply{Text: "using " + secret, ToolCalls: []model.ToolCall{call}}, agenttest.Reply{Text: "done"})
		a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "s", Model: m, Tools: []helikon.Tool[App]{echo}, MaxTurns: maxTurns, Logger: logger}))
		res, err := run(t, runner.Config[App]{Agent: a, Tracer: tp.Tracer("test"), Logger: logger}, "my key is "+secret)
		if (err != nil) != (maxTurns == 1) {
			t.Fatalf("max turns %d: err = %v", maxTurns, err)
		}
		if r := find(res.Events, agent.EventToolResult)[0].ToolResult; !strings.Contains(r.Content, secret) {
			t.Fatalf("the tool did not see the secret: %+v", r)
		}
	}
	if logs.Len() == 0 {
		t.Fatal("nothing was logged: the test would prove nothing")
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("a log record holds the secret:\n%s", logs.String())
	}
	for _, s := range rec.Ended() {
		var parts []string
		for _, kv := range s.Attributes() {
			parts = append(parts, kv.Value.Emit())
		}
		for _, ev := range s.Events() {
			parts = append(parts, ev.Name)
			for _, kv := range ev.Attributes {
				parts = append(parts, kv.Value.Emit())
			}
		}
		parts = append(parts, s.Status().Description)
		if all := strings.Join(parts, " "); strings.Contains(all, secret) {
			t.Errorf("span %q holds the secret: %s", s.Name(), all)
		}
	}
}

// TestManyToolCallsDoNotTakeAGoroutineEach: a model asking for many calls at
// once gets MaxParallelTools workers, not one goroutine per call.
func TestManyToolCallsDoNotTakeAGoroutineEach(t *testing.T) {
	const calls = 1000
	var most atomic.Int64
	probe := newEffectTool("probe", helikon.EffectReadOnly, func(*helikon.ToolContext[App], json.RawMessage) (json.RawMessage, error) {
		n := int64(runtime.NumGoroutine())
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		return json.RawMessage(`{}`), nil
	})
	var tcs []model.ToolCall
	for i := range calls {
		tcs = append(tcs, agenttest.Call(fmt.Sprint("c", i), "probe", `{}`))
	}
	m := agenttest.New(agenttest.Reply{ToolCalls: tcs}, agenttest.Reply{Text: "ok"})
	m.NoRecord = true
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "many", Model: m, Tools: []helikon.Tool[App]{probe}, MaxParallelTools: 4}))
	before := runtime.NumGoroutine()
	if _, err := run(t, runner.Config[App]{Agent: a}, "go"); err != nil {
		t.Fatal(err)
	}
	if got := most.Load(); got > int64(before)+50 {
		t.Errorf("%d goroutines while the calls ran (%d before the run), for %d calls at 4 at a time", got, before, calls)
	}
}

// A tool starts spans of its own from its call's context, under the call's
// execute_tool span (the core carries no tracer).
func TestToolSpansNestUnderTheCall(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := trace.NewTracerProvider(trace.WithSpanProcessor(rec))
	type noArgs struct{}
	traced := functiontool.Must(functiontool.New("traced", "starts a span", func(tc *helikon.ToolContext[App], _ noArgs) (string, error) {
		_, span := oteltrace.SpanFromContext(tc).TracerProvider().Tracer("tool").Start(tc, "tool work")
		span.End()
		return "ok", nil
	}, nil))
	m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("c1", "traced", `{}`)}}, agenttest.Reply{Text: "ok"})
	a := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "a", Model: m, Tools: []helikon.Tool[App]{traced}}))
	if _, err := run(t, runner.Config[App]{Agent: a, Tracer: tp.Tracer("test")}, "go"); err != nil {
		t.Fatal(err)
	}
	ids := map[string]string{}
	var parent string
	for _, s := range rec.Ended() {
		ids[s.Name()] = s.SpanContext().SpanID().String()
		if s.Name() == "tool work" {
			parent = s.Parent().SpanID().String()
		}
	}
	if parent == "" || parent != ids["execute_tool traced"] {
		t.Errorf("the tool's span has parent %q, want the execute_tool span %q (spans %v)", parent, ids["execute_tool traced"], ids)
	}
}
