package sqlitestore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/session"
	"github.com/paigasus/helikon/session/sqlitestore"
)

func stores(t *testing.T) map[string]session.Store {
	db, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "s.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return map[string]session.Store{"memory": session.NewMemory(), "sqlite": db}
}

func TestStoreContract(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			if _, err := s.Get(ctx, "missing"); !errors.Is(err, session.ErrNotFound) {
				t.Fatalf("Get(missing) = %v", err)
			}
			if err := s.Append(ctx, "bad id!", nil, nil); err == nil {
				t.Fatal("invalid id accepted")
			}
			call := model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c", Name: "t", Args: json.RawMessage(`{"a":1}`)}}}
			res := model.Message{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "c", Name: "t", Content: "boom", IsError: true, Kind: helikon.KindOther}}}
			if err := s.Append(ctx, "s1", []model.Message{model.UserMessage("hi")}, map[string]any{"n": 1}); err != nil {
				t.Fatal(err)
			}
			if err := s.Append(ctx, "s1", []model.Message{call, res}, map[string]any{"n": 2, "name": "x"}); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, "s1")
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Messages) != 3 || got.Messages[0].Text != "hi" || string(got.Messages[1].ToolCalls[0].Args) != `{"a":1}` || !got.Messages[2].ToolResults[0].IsError {
				t.Errorf("messages = %+v", got.Messages)
			}
			if got.State["n"] != float64(2) || got.State["name"] != "x" {
				t.Errorf("state = %v", got.State)
			}
			// Malformed arguments are stored as a string, not lost.
			bad := model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "d", Name: "t", Args: json.RawMessage(`{"a":`)}}}
			if err := s.Append(ctx, "s2", []model.Message{bad}, nil); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Get(ctx, "s2"); got == nil || string(got.Messages[0].ToolCalls[0].Args) != `"{\"a\":"` {
				t.Errorf("malformed args stored as %+v", got)
			}
			if err := s.Append(ctx, "s3", nil, map[string]any{"f": func() {}}); err == nil {
				t.Error("unencodable state accepted")
			}
			if err := s.Delete(ctx, "s1"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, "s1"); !errors.Is(err, session.ErrNotFound) {
				t.Errorf("after delete: %v", err)
			}
		})
	}
}

func TestConcurrentSessions(t *testing.T) {
	ctx := context.Background()
	for name, s := range stores(t) {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					id := fmt.Sprintf("c%d", i)
					for j := range 10 {
						if err := s.Append(ctx, id, []model.Message{model.UserMessage(fmt.Sprint(j))}, map[string]any{"j": j}); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			for i := range 8 {
				got, err := s.Get(ctx, fmt.Sprintf("c%d", i))
				if err != nil || len(got.Messages) != 10 {
					t.Fatalf("session %d: %v %v", i, got, err)
				}
				for j, m := range got.Messages {
					if m.Text != fmt.Sprint(j) {
						t.Fatalf("session %d message %d = %q", i, j, m.Text)
					}
				}
			}
		})
	}
}

type tool struct {
	helikon.ToolInfo
	fn func()
}

func (t *tool) Invoke(*helikon.ToolContext[struct{}], json.RawMessage) (json.RawMessage, error) {
	if t.fn != nil {
		t.fn()
	}
	return json.RawMessage(`{"ok":true}`), nil
}

func newTool(name string, fn func()) *tool {
	return &tool{ToolInfo: helikon.ToolInfo{ToolName: name, ToolDescription: name, InputSchema: &jsonschema.Schema{Type: "object"}, ToolEffect: helikon.EffectReadOnly}, fn: fn}
}

// crashEnv names the database of the crashing child process.
const crashEnv = "HELIKON_SQLITESTORE_CRASH_DB"

// TestCrashChild is the child process of TestResumeAfterCrash: it runs an
// agent whose second turn calls a tool that kills the process.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("run by TestResumeAfterCrash as a child process")
	}
	db, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("c1", "fine", `{}`)}},
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("c2", "crash", `{}`)}},
	)
	crash := newTool("crash", func() { os.Exit(7) })
	a := llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "a", Model: m, Tools: []helikon.Tool[struct{}]{newTool("fine", nil), crash}}))
	r, _ := runner.New(runner.Config[struct{}]{Agent: a, Store: db})
	for range r.Run(context.Background(), "crashy", "first prompt") {
	}
	t.Fatal("the crash tool did not crash")
}

func TestResumeAfterCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crash.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("child: %v\n%s", err, out)
	}
	db, err := sqlitestore.Open(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sess, err := db.Get(context.Background(), "crashy")
	if err != nil {
		t.Fatal(err)
	}
	// The prompt and the first, completed turn survive; the turn in
	// progress (the crash call) is lost.
	if len(sess.Messages) != 3 || sess.Messages[1].ToolCalls[0].ID != "c1" || sess.Messages[2].ToolResults[0].CallID != "c1" {
		t.Fatalf("after the crash the session holds %+v", sess.Messages)
	}
	m := agenttest.New(agenttest.Reply{Text: "resumed"})
	a := llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "a", Model: m}))
	r, _ := runner.New(runner.Config[struct{}]{Agent: a, Store: db})
	res, err := agent.Collect(r.Run(context.Background(), "crashy", "second prompt"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "resumed" || res.SessionID != "crashy" {
		t.Errorf("result %+v", res)
	}
	req := m.Requests()[0]
	if len(req.Messages) != 4 || req.Messages[0].Text != "first prompt" || req.Messages[3].Text != "second prompt" {
		t.Errorf("resumed conversation = %+v", req.Messages)
	}
	sess, _ = db.Get(context.Background(), "crashy")
	if len(sess.Messages) != 5 {
		t.Errorf("stored %d messages after the resumed run, want 5", len(sess.Messages))
	}
}

func TestRunnerRejectsConcurrentRunOfOneSession(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	block := newTool("block", func() { close(started); <-release })
	m := agenttest.New(agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("b", "block", `{}`)}}, agenttest.Reply{Text: "ok"})
	a := llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "a", Model: m, Tools: []helikon.Tool[struct{}]{block}}))
	r, _ := runner.New(runner.Config[struct{}]{Agent: a})
	done := make(chan error)
	go func() {
		_, err := agent.Collect(r.Run(context.Background(), "one", "x"))
		done <- err
	}()
	<-started
	_, err := agent.Collect(r.Run(context.Background(), "one", "y"))
	close(release)
	if !errors.Is(err, runner.ErrSessionBusy) {
		t.Errorf("second run: %v", err)
	}
	if err := <-done; err != nil {
		t.Errorf("first run: %v", err)
	}
}

// BenchmarkSQLiteIdleSession reports the disk space an idle session of one
// tool-calling exchange takes in the SQLite store (an idle session holds no
// memory in the process: it is on disk).
func BenchmarkSQLiteIdleSession(b *testing.B) {
	msgs := []model.Message{
		model.UserMessage("How much did I spend on dining in October?"),
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "call_1", Name: "lookup_spending", Args: json.RawMessage(`{"category":"Dining","month":"2026-10"}`)}}},
		{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "call_1", Name: "lookup_spending", Content: `{"total":312.4,"count":18}`}}},
		{Role: model.RoleAssistant, Text: "You spent $312.40 on dining in October, over 18 transactions."},
	}
	ctx := context.Background()
	const n = 200
	for b.Loop() {
		dir := b.TempDir()
		path := filepath.Join(dir, "s.db")
		db, err := sqlitestore.Open(ctx, path, nil)
		if err != nil {
			b.Fatal(err)
		}
		for i := range n {
			if err := db.Append(ctx, fmt.Sprintf("s%d", i), msgs, map[string]any{"fetches": 1}); err != nil {
				b.Fatal(err)
			}
		}
		db.Close() // checkpoints the WAL into the main file
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(fi.Size())/n, "disk-bytes/session")
	}
}
