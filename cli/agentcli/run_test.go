package agentcli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/cli/agentcli"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/provider/anthropic/anthropictest"
	"github.com/paigasus/helikon/provider/openai/openaitest"
)

type runEnv struct {
	vars     map[string]string
	terminal bool
	stdin    string
}

func runAgentCLI(t *testing.T, e runEnv, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{
		Stdin: strings.NewReader(e.stdin), Stdout: &out, Stderr: &errb,
		Getenv:     func(k string) string { return e.vars[k] },
		IsTerminal: func() bool { return e.terminal },
	}
	code := cli.Main(context.Background(), env, append([]string{"run"}, args...))
	return code, out.String(), errb.String()
}

func openaiEnv(t *testing.T, srv *openaitest.Server) map[string]string {
	return map[string]string{
		"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.BaseURL(),
		"HELIKON_MODEL": "openai:gpt-test", "HELIKON_SESSION_DB": filepath.Join(t.TempDir(), "sessions.db"),
	}
}

func TestRunWritesUnderAcceptEditsAndPrintsJSONEvents(t *testing.T) {
	dir := t.TempDir()
	srv := openaitest.NewServer(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "Write", Args: `{"path":"hello.txt","content":"hi\n"}`}}, InputTokens: 10, OutputTokens: 5},
		openaitest.Reply{Text: "Created hello.txt.", InputTokens: 20, OutputTokens: 4},
	)
	defer srv.Close()
	code, stdout, stderr := runAgentCLI(t, runEnv{vars: openaiEnv(t, srv)}, "--root", dir, "--backend", "host", "--mode", "accept-edits", "--json", "create hello.txt")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "hello.txt")); string(b) != "hi\n" {
		t.Errorf("hello.txt = %q", b)
	}
	var kinds []agent.EventKind
	var last agent.Event
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var ev agent.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		kinds = append(kinds, ev.Kind)
		last = ev
	}
	if kinds[0] != agent.EventRunStarted || last.Kind != agent.EventRunCompleted || last.Text != "Created hello.txt." {
		t.Errorf("events %v, last %+v", kinds, last)
	}
	if last.Usage == nil || last.Usage.InputTokens != 30 || last.Usage.OutputTokens != 9 {
		t.Errorf("usage %+v", last.Usage)
	}
	// Read, Write, Edit, Bash and WebFetch are offered; WebSearch is not
	// without a search key.
	var names []string
	for _, tl := range srv.Requests()[0].Body["tools"].([]any) {
		names = append(names, tl.(map[string]any)["function"].(map[string]any)["name"].(string))
	}
	for _, want := range []string{"Read", "Write", "Edit", "Bash", "WebFetch"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Errorf("tool %s not offered: %v", want, names)
		}
	}
	if strings.Contains(strings.Join(names, ","), "WebSearch") {
		t.Errorf("WebSearch offered without a key: %v", names)
	}
}

func bashScript(marker string) []openaitest.Reply {
	call := func(id string) openaitest.Reply {
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: id, Name: "Bash", Args: `{"command":"echo ran >> ` + marker + `"}`}}}
	}
	return []openaitest.Reply{call("b1"), call("b2"), {Text: "done"}}
}

func TestRunApprovals(t *testing.T) {
	tests := []struct {
		name     string
		terminal bool
		stdin    string
		mode     string
		wantRuns int
		wantErr  string
	}{
		{"no terminal denies", false, "", "default", 0, "no terminal"},
		{"yes then no", true, "y\nn\n", "default", 1, "Bash wants to run"},
		{"always", true, "a\n", "default", 2, "[a]lways, for exactly this call (this session: Bash(=echo ran), Bash(=> DIR/marker))"},
		{"accept-edits still asks for Bash", true, "n\nn\n", "accept-edits", 0, "declined"},
		{"plan denies without asking", true, "y\ny\n", "plan", 0, "plan mode"},
		{"bypass never asks", false, "", "bypass", 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			srv := openaitest.NewServer(bashScript("marker")...)
			defer srv.Close()
			code, stdout, stderr := runAgentCLI(t, runEnv{vars: openaiEnv(t, srv), terminal: tt.terminal, stdin: tt.stdin},
				"--root", dir, "--backend", "host", "--mode", tt.mode, "run it twice")
			if code != 0 {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "marker"))
			if got := strings.Count(string(b), "ran"); got != tt.wantRuns {
				t.Errorf("Bash ran %d times, want %d\nstderr %s", got, tt.wantRuns, stderr)
			}
			all := stderr + string(srv.Requests()[1].Raw)
			if want := strings.ReplaceAll(tt.wantErr, "DIR", dir); want != "" && !strings.Contains(all, want) {
				t.Errorf("%q not shown or told to the model\nstderr %s", tt.wantErr, stderr)
			}
			if strings.TrimSpace(stdout) != "done" {
				t.Errorf("stdout %q", stdout)
			}
		})
	}
}

func TestRunResumesASession(t *testing.T) {
	dir := t.TempDir()
	srv := openaitest.NewServer(openaitest.Reply{Text: "first answer"}, openaitest.Reply{Text: "second answer"})
	defer srv.Close()
	vars := openaiEnv(t, srv)
	code, _, stderr := runAgentCLI(t, runEnv{vars: vars}, "--root", dir, "--backend", "host", "--session", "s-1", "first question")
	if code != 0 || !strings.Contains(stderr, "--session s-1") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runAgentCLI(t, runEnv{vars: vars}, "--root", dir, "--backend", "host", "--session", "s-1", "second question")
	if code != 0 || strings.TrimSpace(stdout) != "second answer" {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	msgs := srv.Requests()[1].Body["messages"].([]any)
	var texts []string
	for _, m := range msgs[1:] {
		texts = append(texts, m.(map[string]any)["content"].(string))
	}
	if strings.Join(texts, "|") != "first question|first answer|second question" {
		t.Errorf("resumed conversation %v", texts)
	}
}

func TestRunWithAnthropic(t *testing.T) {
	srv := anthropictest.NewServer(anthropictest.Reply{Text: "hello from claude"})
	defer srv.Close()
	vars := map[string]string{"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": srv.BaseURL(), "HELIKON_SESSION_DB": filepath.Join(t.TempDir(), "s.db")}
	code, stdout, stderr := runAgentCLI(t, runEnv{vars: vars}, "--root", t.TempDir(), "--backend", "host", "--model", "anthropic:claude-test", "hi")
	if code != 0 || strings.TrimSpace(stdout) != "hello from claude" {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
}

func TestRunFailures(t *testing.T) {
	srv := openaitest.NewServer()
	srv.Func = func(*openaitest.Request) openaitest.Reply {
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "r", Name: "Read", Args: `{"path":"missing.txt"}`}}}
	}
	defer srv.Close()
	dir := t.TempDir()
	tests := []struct {
		name string
		vars map[string]string
		args []string
		code int
		want string
	}{
		{"no model", map[string]string{}, []string{"hi"}, cli.ExitUsage, "HELIKON_MODEL"},
		{"bad model spec", map[string]string{}, []string{"--model", "gpt-4", "hi"}, cli.ExitUsage, "PROVIDER:MODEL"},
		{"unknown provider", map[string]string{}, []string{"--model", "acme:x", "hi"}, cli.ExitUsage, "unknown model provider"},
		{"missing key", map[string]string{}, []string{"--model", "openai:x", "hi"}, cli.ExitUsage, "OPENAI_API_KEY"},
		{"no prompt", openaiEnv(t, srv), nil, cli.ExitUsage, "PROMPT"},
		{"max turns", openaiEnv(t, srv), []string{"--max-turns", "2", "loop"}, cli.ExitOther, "maximum number of turns"},
		{"bad session id", openaiEnv(t, srv), []string{"--session", "../x", "hi"}, cli.ExitOther, "invalid session id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--root", dir, "--backend", "host"}, tt.args...)
			code, stdout, stderr := runAgentCLI(t, runEnv{vars: tt.vars}, args...)
			if code != tt.code || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d (want %d), stderr %q lacks %q; stdout %s", code, tt.code, stderr, tt.want, stdout)
			}
		})
	}
}

func TestTerminalApproverGuardIsAlwaysAsked(t *testing.T) {
	a := &agentcli.TerminalApprover{In: bufio.NewReader(strings.NewReader("a\ny\n")), Out: &bytes.Buffer{}, IsTerminal: func() bool { return true }}
	ok, err := a.Approve(context.Background(), &helikon.ApprovalRequest{Tool: "Bash", Args: json.RawMessage(`{"command":"rm -rf ~"}`), Reason: "guard", Guard: true})
	// "a" is not an answer to a guard prompt: the approver asks again and
	// takes the "y".
	if err != nil || !ok {
		t.Fatalf("ok=%v err=%v", ok, err)
	}
	out := a.Out.(*bytes.Buffer).String()
	if strings.Count(out, "allow?") != 2 || strings.Contains(out, "[a]lways") {
		t.Errorf("prompt: %s", out)
	}
	ok, err = a.Approve(context.Background(), &helikon.ApprovalRequest{Tool: "Bash", Reason: "guard", Guard: true})
	if ok || err == nil {
		t.Errorf("EOF approved: ok=%v err=%v", ok, err)
	}
}

// TestTerminalOutputCannotCarryEscapeSequences: text from the model and
// from tool calls (paths in a guard's reason, arguments) cannot send the
// terminal escape sequences that would rewrite or hide an approval prompt.
func TestTerminalOutputCannotCarryEscapeSequences(t *testing.T) {
	var out bytes.Buffer
	a := &agentcli.TerminalApprover{In: bufio.NewReader(strings.NewReader("n\n")), Out: &out, IsTerminal: func() bool { return true }}
	_, err := a.Approve(context.Background(), &helikon.ApprovalRequest{
		Tool:   "Write",
		Args:   json.RawMessage("{\"path\":\"/etc/x\u009b2K\u202e\"}"),
		Reason: "guard protected-system-path: the call writes to /etc/x\x1b[2K\r\x1b[8m, beneath /etc",
		Guard:  true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.ContainsAny(s, "\x1b\r\u009b\u202e") || !strings.Contains(s, `\x1b[8m`) {
		t.Errorf("approval prompt carries raw control characters: %q", s)
	}

	srv := openaitest.NewServer(
		openaitest.Reply{Text: "look\x1b[8m", ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "Read", Args: "{\"path\":\"a\u009bb\"}"}}},
		openaitest.Reply{Text: "done\x1b]0;owned\x07\n"},
	)
	defer srv.Close()
	code, stdout, stderr := runAgentCLI(t, runEnv{vars: openaiEnv(t, srv)}, "--root", t.TempDir(), "--backend", "host", "go")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if strings.ContainsAny(stdout+stderr, "\x1b\x07\u009b") {
		t.Errorf("raw control characters printed:\nstdout %q\nstderr %q", stdout, stderr)
	}
	if !strings.Contains(stdout, `done\x1b]0;owned\a`) {
		t.Errorf("the answer's text was lost: %q", stdout)
	}
}

// TestTerminalApproverAfterACancelledPrompt: a prompt cancelled while
// waiting for its answer does not swallow the answer to the next prompt.
func TestTerminalApproverAfterACancelledPrompt(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	a := &agentcli.TerminalApprover{In: bufio.NewReader(pr), Out: io.Discard, IsTerminal: func() bool { return true }}
	req := &helikon.ApprovalRequest{Tool: "Bash", Args: json.RawMessage(`{}`), Reason: "policy"}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ok, err := a.Approve(ctx, req); ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled prompt: ok=%v err=%v", ok, err)
	}
	go pw.Write([]byte("y\n"))
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if ok, err := a.Approve(ctx2, req); !ok || err != nil {
		t.Fatalf("the answer to the next prompt was lost: ok=%v err=%v", ok, err)
	}
}

// A model served through another provider's API (Ollama through OpenAI's)
// is named as the user wrote it, and a call that cannot reach it says what
// to check.
func TestOllamaUnreachableSaysWhatToCheck(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	vars := map[string]string{"OLLAMA_HOST": addr, "HELIKON_SESSION_DB": filepath.Join(t.TempDir(), "sessions.db")}
	code, _, stderr := runAgentCLI(t, runEnv{vars: vars}, "--root", t.TempDir(), "--backend", "host", "--model", "ollama:qwen3", "hi")
	if code != cli.ExitOther || !strings.Contains(stderr, "model ollama:qwen3") || !strings.Contains(stderr, "is Ollama running at http://"+addr) || strings.Contains(stderr, "openai:qwen3") {
		t.Fatalf("exit %d, stderr %s; want 1, naming ollama:qwen3 (not openai:qwen3) and where Ollama was looked for", code, stderr)
	}
}
