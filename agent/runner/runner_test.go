package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/internal/proctest"
	"github.com/paigasus/helikon/model"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/session"
	"github.com/paigasus/helikon/session/sqlitestore"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/tool/functiontool"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/fsroot"
)

type counterOut struct {
	N int64 `json:"n"`
}

var counter = functiontool.Must(functiontool.New("count", "Count calls across runs.",
	func(tc *helikon.ToolContext[struct{}], _ struct{}) (counterOut, error) {
		n, _, err := tc.State().IncrementIfBelow("count", 100)
		return counterOut{N: n}, err
	}, nil))

func countingAgent() *llmagent.Agent[struct{}] {
	m := &agenttest.Model{Func: func(req *model.Request) agenttest.Reply {
		if res := agenttest.LastToolResults(req); res != nil {
			return agenttest.Reply{Text: "count is " + res[0].Content, Usage: model.Usage{InputTokens: 2, OutputTokens: 1}}
		}
		return agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("", "count", `{}`)}, Usage: model.Usage{InputTokens: 1, OutputTokens: 1}}
	}}
	return llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "counter", Model: m, Tools: []helikon.Tool[struct{}]{counter}}))
}

func TestStateAndConversationPersistAcrossRuns(t *testing.T) {
	db, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, store := range []session.Store{session.NewMemory(), db} {
		r, _ := runner.New(runner.Config[struct{}]{Agent: countingAgent(), Store: store})
		for i := 1; i <= 3; i++ {
			res, err := agent.Collect(r.Run(context.Background(), "counted", fmt.Sprint("run ", i)))
			if err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf(`count is {"n":%d}`, i); res.Text != want {
				t.Errorf("run %d: %q, want %q", i, res.Text, want)
			}
			if res.Usage.InputTokens != 3 || res.Usage.Requests != 2 {
				t.Errorf("run %d usage %+v", i, res.Usage)
			}
		}
		sess, err := store.Get(context.Background(), "counted")
		if err != nil {
			t.Fatal(err)
		}
		if len(sess.Messages) != 12 || sess.State["count"] != float64(3) {
			t.Errorf("stored %d messages, state %v", len(sess.Messages), sess.State)
		}
	}
}

func TestNewSessionID(t *testing.T) {
	r, _ := runner.New(runner.Config[struct{}]{Agent: countingAgent()})
	a, _ := agent.Collect(r.Run(context.Background(), "", "x"))
	b, _ := agent.Collect(r.Run(context.Background(), "", "x"))
	if a.SessionID == "" || a.SessionID == b.SessionID {
		t.Fatalf("session ids %q %q", a.SessionID, b.SessionID)
	}
	if err := session.ValidateID(a.SessionID); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentRunsOnDifferentSessions(t *testing.T) {
	db, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, _ := runner.New(runner.Config[struct{}]{Agent: countingAgent(), Store: db})
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Go(func() {
			id := fmt.Sprintf("par-%d", i)
			for range 2 {
				if _, err := agent.Collect(r.Run(context.Background(), id, "go")); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i := range 6 {
		sess, err := db.Get(context.Background(), fmt.Sprintf("par-%d", i))
		if err != nil || len(sess.Messages) != 8 || sess.State["count"] != float64(2) {
			t.Errorf("session %d: %v %v", i, sess, err)
		}
	}
}

func TestCompleteTurns(t *testing.T) {
	call := model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "x"}}}
	user := model.UserMessage("u")
	if got := runner.CompleteTurns([]model.Message{user, call}); len(got) != 1 {
		t.Errorf("dangling call kept: %v", got)
	}
	if got := runner.CompleteTurns([]model.Message{user}); len(got) != 1 {
		t.Errorf("complete conversation cut: %v", got)
	}
}

type failingStore struct{ session.Store }

func (failingStore) Append(context.Context, string, []model.Message, map[string]any) error {
	return errors.New("disk full")
}

func TestPersistFailureFailsTheRun(t *testing.T) {
	r, _ := runner.New(runner.Config[struct{}]{Agent: countingAgent(), Store: failingStore{session.NewMemory()}})
	res, err := agent.Collect(r.Run(context.Background(), "", "x"))
	if err == nil || !strings.Contains(err.Error(), "disk full") || res.Events[len(res.Events)-1].Kind != agent.EventRunFailed {
		t.Fatalf("err %v", err)
	}
}

// TestCancellationMidBashLeavesNoOrphan cancels a run while the real Bash
// tool runs a pipeline on the host backend, and checks that no process of it
// survives.
func TestCancellationMidBashLeavesNoOrphan(t *testing.T) {
	dir := t.TempDir()
	sb, err := fsroot.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := host.New(sb.Dir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	bash, err := bashtool.New[struct{}](b, nil)
	if err != nil {
		t.Fatal(err)
	}
	const marker = "61.4321"
	cmd := fmt.Sprintf(`(sleep %s; echo x) | cat; sleep %s`, marker, marker)
	args, _ := json.Marshal(map[string]string{"command": cmd})
	m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{{ID: "b", Name: "Bash", Args: args}}}, agenttest.Reply{Text: "never"})
	a := llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "c", Model: m, Tools: []helikon.Tool[struct{}]{bash}}))
	r, _ := runner.New(runner.Config[struct{}]{Agent: a, Mode: helikon.ModeBypass})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runErr error
	for ev, err := range r.Run(ctx, "", "go") {
		if ev != nil && ev.Kind == agent.EventToolCall {
			go func() {
				// Cancel once the pipeline runs (or after 10 s, so that a
				// Bash that never starts fails the test instead of hanging).
				deadline := time.Now().Add(10 * time.Second)
				for len(proctest.PidsWith("sleep "+marker)) == 0 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				cancel()
			}()
		}
		if err != nil {
			runErr = err
		}
	}
	if !errors.Is(runErr, context.Canceled) {
		t.Fatalf("run error %v", runErr)
	}
	if left := proctest.PidsWith("sleep " + marker); len(left) > 0 {
		t.Errorf("processes left after cancellation: %v", left)
	}
}

type sessionOut struct {
	Session string `json:"session"`
}

// TestRunsNameTheirSessionForWorkspaces: with Workspaces set, a tool sees
// the run's session in its context (what Sessions.ByContext routes by),
// the same across runs of one session, another for another session, and a
// runner id that is not a valid workspace session id maps to a stable one.
func TestRunsNameTheirSessionForWorkspaces(t *testing.T) {
	whoami := functiontool.Must(functiontool.New("whoami", "Report the workspace session.",
		func(tc *helikon.ToolContext[struct{}], _ struct{}) (sessionOut, error) {
			s, _ := workspace.SessionFrom(tc)
			return sessionOut{Session: s}, nil
		}, nil))
	m := &agenttest.Model{Func: func(req *model.Request) agenttest.Reply {
		if res := agenttest.LastToolResults(req); res != nil {
			return agenttest.Reply{Text: res[0].Content}
		}
		return agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("", "whoami", `{}`)}}
	}}
	a := llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "w", Model: m, Tools: []helikon.Tool[struct{}]{whoami}}))
	for _, tt := range []struct {
		workspaces *workspace.Sessions
		session    string
		want       string
	}{
		{&workspace.Sessions{}, "s1", `{"session":"s1"}`},
		{&workspace.Sessions{}, "dotted.id", `{"session":"` + workspace.SessionFor("dotted.id") + `"}`},
		{nil, "s1", `{"session":""}`},
	} {
		r, _ := runner.New(runner.Config[struct{}]{Agent: a, Workspaces: tt.workspaces})
		for range 2 {
			res, err := agent.Collect(r.Run(context.Background(), tt.session, "who"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Text != tt.want {
				t.Errorf("session %s: tool saw %s, want %s", tt.session, res.Text, tt.want)
			}
		}
		if err := r.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got := workspace.SessionFor("dotted.id"); got == "dotted.id" || workspace.ValidSession(got) != nil || got != workspace.SessionFor("dotted.id") {
		t.Errorf("SessionFor(dotted.id) = %q, want a stable valid id", got)
	}
}
