package mcptools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/mcptools"
)

var helikonBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// helikonBinary builds cmd/helikon and cmd/helikon/helikon-agent once per
// test binary and returns the path of helikon.
func helikonBinary(t testing.TB) string {
	t.Helper()
	helikonBin.once.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			helikonBin.err = err
			return
		}
		helikonBin.dir, helikonBin.err = os.MkdirTemp("", "helikon-mcptools-")
		if helikonBin.err != nil {
			return
		}
		// helikon executes helikon-agent, built next to it, for mcp and tool.
		helikonBin.path = filepath.Join(helikonBin.dir, "helikon")
		out, err := exec.Command(gobin, "build", "-o", helikonBin.dir+string(filepath.Separator), "github.com/paigasus/helikon/cmd/helikon/...").CombinedOutput()
		if err != nil {
			helikonBin.err = &buildError{err, out}
		}
	})
	if helikonBin.err != nil {
		if _, ok := helikonBin.err.(*buildError); ok {
			t.Fatal(helikonBin.err)
		}
		t.Skipf("cannot build the helikon binary (no go tool?): %v", helikonBin.err)
	}
	return helikonBin.path
}

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string {
	return "go build cmd/helikon: " + e.err.Error() + "\n" + string(e.out)
}

// hasBuiltin reports whether the helikon binary has the built-in tool name.
func hasBuiltin(t testing.TB, name string) bool {
	var stderr bytes.Buffer
	cmd := exec.Command(helikonBinary(t), "tool", name, "{}", "--root", t.TempDir(), "--backend", "host")
	cmd.Stderr = &stderr
	cmd.Run()
	return !strings.Contains(stderr.String(), "unknown tool")
}

// helikonMCP connects a go-sdk client to `helikon mcp ARGS` over the command
// transport.
func helikonMCP(t testing.TB, copts *mcp.ClientOptions, args ...string) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(helikonBinary(t), append([]string{"mcp"}, args...)...)
	cmd.Stderr = os.Stderr
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, copts).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func TestHelikonMCPCommand(t *testing.T) {
	root := t.TempDir()
	progress := make(chan *mcp.ProgressNotificationParams, 100)
	cs := helikonMCP(t, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		select {
		case progress <- r.Params:
		default:
		}
	}}, "--root", root, "--backend", "host", "--tools", "Bash,Read", "--deny", "Bash(rm)", "--progress-interval", "50ms")
	if err := os.WriteFile(filepath.Join(root, "n.txt"), []byte("5\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, def := range list.Tools {
		names = append(names, def.Name)
		want := helikon.EffectSideEffect
		if def.Name == "Read" {
			want = helikon.EffectReadOnly
		}
		if got := mcptools.EffectOf(def.Annotations); got != want {
			t.Errorf("%s: effect %s, want %s", def.Name, got, want)
		}
	}
	if !slices.Equal(names, []string{"Bash", "Read"}) {
		t.Fatalf("tools %v", names)
	}

	t.Run("call", func(t *testing.T) {
		res := callTool(t, cs, "Read", map[string]any{"path": "n.txt"})
		if res.IsError || !strings.Contains(normJSON(t, res.StructuredContent), `"content":"5\n"`) {
			t.Fatalf("Read: %v %q %v", res.IsError, text(res), res.StructuredContent)
		}
	})
	t.Run("invalid arguments", func(t *testing.T) {
		res := callTool(t, cs, "Read", map[string]any{"path": 1, "c": 3})
		for _, s := range []string{"invalid arguments for tool Read", `"path"`, `"c"`} {
			if !res.IsError || !strings.Contains(text(res), s) {
				t.Errorf("want %q in %q", s, text(res))
			}
		}
	})
	t.Run("deny rule", func(t *testing.T) {
		if err := os.WriteFile(filepath.Join(root, "keep.txt"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		res := callTool(t, cs, "Bash", map[string]any{"command": "rm keep.txt"})
		if !res.IsError || !strings.Contains(text(res), "denied by rule Bash(rm)") {
			t.Fatalf("rm under --deny Bash(rm): %q", text(res))
		}
		if _, err := os.Stat(filepath.Join(root, "keep.txt")); err != nil {
			t.Fatal("the denied rm ran")
		}
	})
	t.Run("cancellation kills sleep", func(t *testing.T) {
		cancelKillsSleep(t, cs, progress)
	})
}

func TestHelikonMCPPlanModeRefusesWrites(t *testing.T) {
	root := t.TempDir()
	tools := "Bash,Read"
	write := hasBuiltin(t, "Write")
	if write {
		tools += ",Write"
	} else {
		t.Log("the Write built-in is not registered in this build; checking Bash only")
	}
	cs := helikonMCP(t, nil, "--root", root, "--backend", "host", "--tools", tools, "--mode", "plan")
	if err := os.WriteFile(filepath.Join(root, "n.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if res := callTool(t, cs, "Read", map[string]any{"path": "n.txt"}); res.IsError {
		t.Fatalf("read-only tool in plan mode: %q", text(res))
	}
	res := callTool(t, cs, "Bash", map[string]any{"command": "touch made.txt"})
	if !res.IsError || !strings.Contains(text(res), "plan mode") {
		t.Fatalf("Bash in plan mode: %q", text(res))
	}
	if write {
		res := callTool(t, cs, "Write", map[string]any{"path": "new.txt", "content": "x"})
		if !res.IsError || !strings.Contains(text(res), "plan mode") {
			t.Fatalf("Write in plan mode: %q", text(res))
		}
	}
	for _, f := range []string{"made.txt", "new.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); !os.IsNotExist(err) {
			t.Errorf("%s exists after plan-mode calls", f)
		}
	}
}

// npmDir is where the end-to-end test finds node_modules with
// @modelcontextprotocol/sdk: $HELIKON_MCPTOOLS_NPM_DIR, else testdata.
func npmDir() string {
	if d := os.Getenv("HELIKON_MCPTOOLS_NPM_DIR"); d != "" {
		return d
	}
	return "testdata"
}

type e2eOutput struct {
	Server struct{ Name string } `json:"server"`
	Tools  []struct {
		Name        string              `json:"name"`
		Annotations mcp.ToolAnnotations `json:"annotations"`
		InputSchema map[string]any      `json:"inputSchema"`
	} `json:"tools"`
	Calls []struct {
		Result *struct {
			Content           []struct{ Text string } `json:"content"`
			StructuredContent map[string]any          `json:"structuredContent"`
			IsError           bool                    `json:"isError"`
		} `json:"result"`
		Error     string `json:"error"`
		Progress  int    `json:"progress"`
		SawSleep  bool   `json:"sawSleep"`
		SleepGone bool   `json:"sleepGone"`
	} `json:"calls"`
	Elicitations []string `json:"elicitations"`
}

type e2eCall struct {
	Name             string         `json:"name"`
	Arguments        map[string]any `json:"arguments"`
	CancelOnProgress bool           `json:"cancelOnProgress,omitempty"`
	SleepArg         string         `json:"sleepArg,omitempty"`
}

// runE2E runs testdata/e2e.mjs against `helikon mcp ARGS`.
func runE2E(t *testing.T, elicit string, calls []e2eCall, args ...string) *e2eOutput {
	t.Helper()
	return runE2ECommand(t, elicit, calls, helikonBinary(t), append([]string{"mcp"}, args...)...)
}

// runE2ECommand runs testdata/e2e.mjs against the MCP server that command
// args starts.
func runE2ECommand(t *testing.T, elicit string, calls []e2eCall, command string, args ...string) *e2eOutput {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIP: node is not installed; the TypeScript SDK end-to-end test needs Node.js and `npm install --prefix tool/mcptools/testdata --no-save @modelcontextprotocol/sdk`")
	}
	dir := npmDir()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		t.Skipf("SKIP: @modelcontextprotocol/sdk is not installed in %s/node_modules; run `npm install --prefix tool/mcptools/testdata --no-save @modelcontextprotocol/sdk` (or set HELIKON_MCPTOOLS_NPM_DIR)", dir)
	}
	script := filepath.Join("testdata", "e2e.mjs")
	if dir != "testdata" {
		// Node resolves packages from the script's directory.
		b, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		script = filepath.Join(dir, "helikon-e2e.mjs")
		if err := os.WriteFile(script, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plan, _ := json.Marshal(map[string]any{"elicit": elicit, "calls": calls})
	argv, _ := json.Marshal(args)
	cmd := exec.Command(node, script, command, string(argv), string(plan))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node e2e.mjs: %v\n%s", err, out)
	}
	var res e2eOutput
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("e2e output %s: %v", out, err)
	}
	if len(res.Calls) != len(calls) {
		t.Fatalf("e2e made %d calls, want %d: %s", len(res.Calls), len(calls), out)
	}
	return &res
}

// TestTypeScriptSDKDrivesHelikonMCP drives `helikon mcp` over stdio from the
// official TypeScript SDK: listing, annotations, calls, structured output,
// invalid arguments, a guard's question answered by elicitation, a deny
// rule, cancellation killing a Bash sleep, and plan mode.
func TestTypeScriptSDKDrivesHelikonMCP(t *testing.T) {
	root := t.TempDir()
	sleepCmd, sleepArg := uniqueSleep(t)
	guarded := "mkdir -p .git && echo approved > .git/note"
	if err := os.WriteFile(filepath.Join(root, "n.txt"), []byte("5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, answer := range []string{"accept", "decline"} {
		t.Run(answer, func(t *testing.T) {
			os.RemoveAll(filepath.Join(root, ".git"))
			calls := []e2eCall{
				{Name: "Read", Arguments: map[string]any{"path": "n.txt"}},
				{Name: "Read", Arguments: map[string]any{"path": 2, "c": 3}},
				{Name: "Bash", Arguments: map[string]any{"command": guarded}},
				{Name: "Bash", Arguments: map[string]any{"command": "rm -f x"}},
			}
			if answer == "accept" {
				calls = append(calls, e2eCall{Name: "Bash", Arguments: map[string]any{"command": sleepCmd}, CancelOnProgress: true, SleepArg: sleepArg})
			}
			out := runE2E(t, answer, calls, "--root", root, "--backend", "host", "--tools", "Read,Bash", "--deny", "Bash(rm)", "--progress-interval", "50ms")
			if out.Server.Name != "helikon" || len(out.Tools) != 2 {
				t.Fatalf("server %+v, tools %+v", out.Server, out.Tools)
			}
			for _, tool := range out.Tools {
				if tool.Name == "Read" && (!tool.Annotations.ReadOnlyHint || tool.InputSchema["type"] != "object") {
					t.Errorf("Read as listed: %+v", tool)
				}
			}
			c := out.Calls
			if c[0].Result == nil || c[0].Result.IsError || c[0].Result.StructuredContent["content"] != "5\n" {
				t.Errorf("Read: %+v", c[0])
			}
			if c[1].Result == nil || !c[1].Result.IsError || !strings.Contains(c[1].Result.Content[0].Text, `"path"`) || !strings.Contains(c[1].Result.Content[0].Text, `"c"`) {
				t.Errorf("invalid Read: %+v", c[1])
			}
			if len(out.Elicitations) != 1 || !strings.Contains(out.Elicitations[0], "guard sensitive-path") {
				t.Errorf("elicitations %q", out.Elicitations)
			}
			_, err := os.Stat(filepath.Join(root, ".git", "note"))
			if answer == "accept" && (c[2].Result == nil || c[2].Result.IsError || err != nil) {
				t.Errorf("approved guarded Bash: %+v (file: %v)", c[2], err)
			}
			if answer == "decline" && (c[2].Result == nil || !c[2].Result.IsError || !strings.Contains(c[2].Result.Content[0].Text, "declined by the user") || err == nil) {
				t.Errorf("declined guarded Bash: %+v (file: %v)", c[2], err)
			}
			if c[3].Result == nil || !c[3].Result.IsError || !strings.Contains(c[3].Result.Content[0].Text, "denied by rule Bash(rm)") {
				t.Errorf("denied rm: %+v", c[3])
			}
			if answer == "accept" {
				if c[4].Error == "" || !c[4].SawSleep || !c[4].SleepGone {
					t.Errorf("cancelled sleep: %+v", c[4])
				}
			}
		})
	}
	t.Run("plan mode", func(t *testing.T) {
		out := runE2E(t, "", []e2eCall{
			{Name: "Read", Arguments: map[string]any{"path": "n.txt"}},
			{Name: "Bash", Arguments: map[string]any{"command": "touch made.txt"}},
		}, "--root", root, "--backend", "host", "--tools", "Read,Bash", "--mode", "plan")
		if r := out.Calls[0].Result; r == nil || r.IsError {
			t.Errorf("Read in plan mode: %+v", out.Calls[0])
		}
		if r := out.Calls[1].Result; r == nil || !r.IsError || !strings.Contains(r.Content[0].Text, "plan mode") {
			t.Errorf("Bash in plan mode: %+v", out.Calls[1])
		}
		if _, err := os.Stat(filepath.Join(root, "made.txt")); !os.IsNotExist(err) {
			t.Error("Bash ran in plan mode")
		}
	})
}
