package agentcli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paigasus/helikon/cli"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/functiontool"
)

// subAgentRun returns the stream of a run wired like `helikon run` (the CLI's
// policy and an approver from out) whose agent delegates to the sub-agent
// "helper" in calls (call ids h1, h2, ...); the helper says something, calls
// the tool "probe" with the given effect, and answers with a text holding an
// escape sequence.
func subAgentRun(t *testing.T, env *cli.Env, out *renderer, effect helikon.Effect, calls int) (iter.Seq2[*agent.Event, error], *atomic.Int64) {
	t.Helper()
	var probes atomic.Int64
	probe := functiontool.Must(functiontool.New("probe", "Probe.", func(*helikon.ToolContext[App], struct{}) (string, error) {
		probes.Add(1)
		return "probed", nil
	}, &functiontool.Options{Effect: effect}))
	helperModel := &agenttest.Model{Func: func(req *model.Request) agenttest.Reply {
		if agenttest.LastToolResults(req) != nil {
			return agenttest.Reply{Text: "sub answer \x1b[31m"}
		}
		return agenttest.Reply{Text: "let me probe", ToolCalls: []model.ToolCall{agenttest.Call("p", "probe", `{}`)}}
	}}
	helper := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "helper", Description: "Helps.", Model: helperModel, Tools: []helikon.Tool[App]{probe}}))
	var tcs []model.ToolCall
	for i := range calls {
		tcs = append(tcs, agenttest.Call(fmt.Sprint("h", i+1), "helper", `{"request":"probe it"}`))
	}
	parent := llmagent.Must(llmagent.New(llmagent.Config[App]{Name: "helikon", Model: agenttest.New(
		agenttest.Reply{ToolCalls: tcs},
		agenttest.Reply{Text: "parent answer"},
	), SubAgents: []agent.Agent[App]{helper}}))
	perms := &helikon.Permissions{
		Allow:    []helikon.Rule{helikon.MustParseRule("helper")}, // the agent tool has side effects
		Policy:   askUnlessReadOnly,
		Approver: out.approver(NewTerminalApprover(env)),
	}
	r, err := runner.New(runner.Config[App]{Agent: parent, Permissions: perms})
	if err != nil {
		t.Fatal(err)
	}
	return r.Run(context.Background(), "", "go"), &probes
}

func subAgentEnv(terminal bool, stdin string) (*cli.Env, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	return &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr, IsTerminal: func() bool { return terminal }}, &stdout, &stderr
}

// inOrder reports the first of wants that s does not hold after the ones
// before it.
func inOrder(s string, wants ...string) (missing string, ok bool) {
	for _, w := range wants {
		i := strings.Index(s, w)
		if i < 0 {
			return w, false
		}
		s = s[i+len(w):]
	}
	return "", true
}

func TestRunShowsSubAgentActivityIndented(t *testing.T) {
	env, stdout, stderr := subAgentEnv(false, "")
	out := &renderer{env: env}
	seq, probes := subAgentRun(t, env, out, helikon.EffectReadOnly, 1)
	if _, err := printRun(env, out, false, seq); err != nil {
		t.Fatal(err)
	}
	if probes.Load() != 1 {
		t.Fatalf("probe ran %d times", probes.Load())
	}
	// stdout is the run's answer alone: the sub-agent's text is not in it.
	if got := stdout.String(); got != "parent answer\n" {
		t.Errorf("stdout %q", got)
	}
	if missing, ok := inOrder(stderr.String(),
		"→ helper {\"request\":\"probe it\"}\n",
		"  helper: let me probe\n",
		"  helper → probe {}\n",
		"  helper ✓ probe \"probed\"\n",
		"  helper: sub answer \\x1b[31m\n",
		"✓ helper {\"response\":\"sub answer \\u001b[31m\"}\n",
	); !ok {
		t.Errorf("stderr lacks %q in order:\n%s", missing, stderr)
	}
	if strings.ContainsAny(stdout.String()+stderr.String(), "\x1b") {
		t.Errorf("a raw escape sequence was printed:\n%q", stderr)
	}
}

func TestRunJSONIncludesSubAgentEvents(t *testing.T) {
	env, stdout, _ := subAgentEnv(false, "")
	out := &renderer{env: env}
	seq, _ := subAgentRun(t, env, out, helikon.EffectReadOnly, 1)
	if _, err := printRun(env, out, true, seq); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var ev agent.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		k := string(ev.Kind)
		if ev.ToolCall != nil {
			k += " " + ev.ToolCall.Name
		}
		if ev.Forwarded() {
			if ev.Depth != 1 || ev.Agent != "helper" || !slices.Equal(ev.Path, []string{"h1"}) {
				t.Errorf("forwarded %s: agent %q, depth %d, path %v", ev.Kind, ev.Agent, ev.Depth, ev.Path)
			}
			k = "  " + k
		}
		kinds = append(kinds, k)
	}
	want := []string{
		"run_started", "turn_started", "tool_call helper",
		"  turn_started", "  text_delta", "  text_delta", "  tool_call probe", "  tool_result probe", "  turn_completed",
		"  turn_started", "  text_delta", "  text_delta", "  turn_completed",
		"tool_result helper", "turn_completed", "turn_started", "text_delta", "text_delta", "turn_completed", "run_completed",
	}
	if !slices.Equal(kinds, want) {
		t.Errorf("events\n got %q\nwant %q", kinds, want)
	}
}

// TestRunAsksForSubAgentApprovals: sub-agents running in parallel ask on the
// terminal one at a time, each prompt after the line saying which sub-agent
// asks, and nothing is printed while a prompt is open (run with -race: the
// sub-agents ask from their own goroutines).
func TestRunAsksForSubAgentApprovals(t *testing.T) {
	env, stdout, stderr := subAgentEnv(true, "y\ny\n")
	out := &renderer{env: env, spin: true}
	seq, probes := subAgentRun(t, env, out, helikon.EffectWrite, 2)
	if _, err := printRun(env, out, false, seq); err != nil {
		t.Fatal(err)
	}
	if probes.Load() != 2 {
		t.Errorf("probe ran %d times, want 2\n%s", probes.Load(), stderr)
	}
	ask := "  helper asks to run probe\n"
	prompt := "helikon: probe wants to run (write)."
	if missing, ok := inOrder(stderr.String(), ask, prompt, ask, prompt); !ok {
		t.Errorf("stderr lacks %q in order:\n%s", missing, stderr)
	}
	if n := strings.Count(stderr.String(), "  helper ✓ probe"); n != 2 {
		t.Errorf("%d probe results shown, want 2:\n%s", n, stderr)
	}
	if got := stdout.String(); got != "parent answer\n" {
		t.Errorf("stdout %q", got)
	}
}
