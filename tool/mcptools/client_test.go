package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/mcptools"
)

// serverEnv makes the test binary run foreignServer on stdio (see TestMain).
const serverEnv = "HELIKON_MCPTOOLS_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		srv, _ := foreignServer(true)
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if helikonBin.dir != "" {
		os.RemoveAll(helikonBin.dir)
	}
	os.Exit(code)
}

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

type weatherOut struct {
	City string  `json:"city"`
	Temp float64 `json:"temp"`
}

type pathIn struct {
	Path string `json:"path"`
}

// foreignServer is an MCP server written with the go-sdk alone, as any third
// party would. calls counts the tool calls that reached it. With process
// set, it offers exit_now, which ends the server process mid-call.
func foreignServer(process bool) (*mcp.Server, *atomic.Int32) {
	calls := &atomic.Int32{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "foreign", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "get_weather", Description: "Current weather in a city.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, weatherOut, error) {
			calls.Add(1)
			return nil, weatherOut{City: in.City, Temp: 21}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "delete_file", Description: "Delete a file."},
		func(_ context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deleted " + in.Path}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fs.read", Description: "Read a file.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "contents of " + in.Path}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "fail", Description: "Fails."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			calls.Add(1)
			return nil, nil, errors.New("boom happened")
		})
	srv.AddTool(&mcp.Tool{Name: "strict", Description: "Rejects its parameters at the protocol level.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			calls.Add(1)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "widget id 7 does not exist"}
		})
	if process {
		mcp.AddTool(srv, &mcp.Tool{Name: "exit_now", Description: "Ends the server."},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				os.Exit(3)
				return nil, nil, nil
			})
	}
	return srv, calls
}

// connectInMemory connects a Source to srv over in-memory transports.
func connectInMemory(t testing.TB, srv *mcp.Server, opts *mcptools.ClientOptions) *mcptools.Source[app] {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, err := mcptools.Connect[app](ctx, mcptools.Transport(ct), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		src.Close()
		ss.Close()
	})
	return src
}

func toolsByName(t testing.TB, src *mcptools.Source[app]) map[string]helikon.Tool[app] {
	t.Helper()
	tools, err := src.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]helikon.Tool[app]{}
	for _, tool := range tools {
		m[tool.Name()] = tool
	}
	return m
}

func invoke(tool helikon.Tool[app], args string) (json.RawMessage, error) {
	return tool.Invoke(helikon.NewToolContext(context.Background(), app{}, nil), json.RawMessage(args))
}

func TestClientWrapsForeignTools(t *testing.T) {
	srv, _ := foreignServer(false)
	tools := toolsByName(t, connectInMemory(t, srv, nil))
	want := map[string]helikon.Effect{
		"get_weather": helikon.EffectReadOnly,
		"delete_file": helikon.EffectSideEffect, // no annotations
		"fs_read":     helikon.EffectReadOnly,   // "fs.read" is not a helikon tool name
		"fail":        helikon.EffectSideEffect,
		"strict":      helikon.EffectSideEffect,
	}
	if len(tools) != len(want) {
		t.Fatalf("tools %v", slices.Collect(mapsKeys(tools)))
	}
	for name, effect := range want {
		tool, ok := tools[name]
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		if got := helikon.EffectOf(tool); got != effect {
			t.Errorf("%s: effect %s, want %s", name, got, effect)
		}
	}
	w := tools["get_weather"]
	if w.Description() != "Current weather in a city." || !slices.Contains(w.Schema().Required, "city") || helikon.OutputSchemaOf(w) == nil {
		t.Errorf("get_weather: %q %+v", w.Description(), w.Schema())
	}
	// IgnoreAnnotations: nothing is trusted to be read-only.
	for _, tool := range toolsByName(t, connectInMemory(t, srv, &mcptools.ClientOptions{IgnoreAnnotations: true})) {
		if helikon.EffectOf(tool) != helikon.EffectSideEffect {
			t.Errorf("IgnoreAnnotations: %s has effect %s", tool.Name(), helikon.EffectOf(tool))
		}
	}
}

func mapsKeys[K comparable, V any](m map[K]V) func(func(K) bool) {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func TestClientCallsAndMapsErrors(t *testing.T) {
	srv, calls := foreignServer(false)
	tools := toolsByName(t, connectInMemory(t, srv, nil))
	tests := []struct {
		tool, args string
		reaches    bool // the call reaches the server
		out        string
		kind       helikon.ErrorKind
		msg        string
	}{
		{"get_weather", `{"city":"Oslo"}`, true, `{"city":"Oslo","temp":21}`, "", ""},
		{"delete_file", `{"path":"a.txt"}`, true, `"deleted a.txt"`, "", ""},
		{"fs_read", `{"path":"b"}`, true, `"contents of b"`, "", ""},
		{"get_weather", `{}`, false, "", helikon.KindInvalidArgs, `"city"`},
		{"get_weather", `{"city":5}`, false, "", helikon.KindInvalidArgs, `"city"`},
		{"get_weather", `[1]`, false, "", helikon.KindInvalidArgs, "must be a JSON object"},
		{"get_weather", `{"city":`, false, "", helikon.KindInvalidArgs, "not valid JSON"},
		{"fail", `{}`, true, "", helikon.KindOther, "boom happened"},
		{"strict", `{}`, true, "", helikon.KindInvalidArgs, "widget id 7 does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			before := calls.Load()
			out, err := invoke(tools[tt.tool], tt.args)
			if reached := calls.Load() > before; reached != tt.reaches {
				t.Errorf("reached the server: %v, want %v", reached, tt.reaches)
			}
			if helikon.KindOf(err) != tt.kind {
				t.Fatalf("error %v (kind %q), want kind %q", err, helikon.KindOf(err), tt.kind)
			}
			if err != nil {
				if !strings.Contains(err.Error(), tt.msg) {
					t.Errorf("error %q does not contain %q", err, tt.msg)
				}
				return
			}
			if normJSON(t, out) != normJSON(t, json.RawMessage(tt.out)) {
				t.Errorf("output %s, want %s", out, tt.out)
			}
		})
	}
}

// TestHelikonToolsRoundTrip serves helikon tools and consumes them back with
// the helikon client: effects, outputs and the three tool errors survive,
// with the very text a model sees.
func TestHelikonToolsRoundTrip(t *testing.T) {
	k := newKit(t)
	srv, err := mcptools.NewServer(helikon.MustToolset(k.tools...), &mcptools.ServerOptions[app]{NoElicitation: true})
	if err != nil {
		t.Fatal(err)
	}
	remote := toolsByName(t, connectInMemory(t, srv, nil))
	for _, local := range k.tools {
		r := remote[local.Name()]
		if r == nil {
			t.Fatalf("tool %s missing", local.Name())
		}
		if helikon.EffectOf(r) != helikon.EffectOf(local) {
			t.Errorf("%s: effect %s after the round trip, want %s", local.Name(), helikon.EffectOf(r), helikon.EffectOf(local))
		}
	}
	calls := []struct{ tool, args string }{
		{"echo", `{"text":"a","times":3}`},
		{"echo", `{"text":1,"bogus":true}`},
		{"fail", `{}`},
		{"refuse", `{}`},
		{"touch_system", `{}`}, // the guard asks; nobody to ask: denied
	}
	for _, c := range calls {
		call := model.ToolCall{ID: "1", Name: c.tool, Args: json.RawMessage(c.args)}
		rout, rerr := invoke(remote[c.tool], c.args)
		local := k.tool(c.tool)
		d := (&helikon.Permissions{}).Check(context.Background(), helikon.CallFor(local, call.Args, helikon.ModeDefault))
		var lout json.RawMessage
		lerr := d.Err()
		if d.Allowed {
			lout, lerr = invoke(local, c.args)
		}
		got, want := model.ToolResultFor(call, rout, rerr), model.ToolResultFor(call, lout, lerr)
		if got.IsError != want.IsError || got.Kind != want.Kind || (got.IsError && got.Content != want.Content) || (!got.IsError && normJSON(t, json.RawMessage(got.Content)) != normJSON(t, json.RawMessage(want.Content))) {
			t.Errorf("%s %s through MCP:\n got %+v\nwant %+v", c.tool, c.args, got, want)
		}
	}
}

// TestAgentUsesMCPServerTools runs a helikon agent (scripted model, real
// runner and permission pipeline) whose tools come from a go-sdk MCP server
// spawned as a process. In plan mode the read-only tool runs and the
// unannotated one is refused before reaching the server.
func TestAgentUsesMCPServerTools(t *testing.T) {
	t.Setenv(serverEnv, "1")
	src, err := mcptools.Connect[app](context.Background(), mcptools.CommandArgs(os.Args[0]), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	m := agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{
			agenttest.Call("c1", "get_weather", `{"city":"Oslo"}`),
			agenttest.Call("c2", "delete_file", `{"path":"notes.txt"}`),
		}},
		agenttest.Reply{Text: "It is 21 degrees in Oslo."},
	)
	a := llmagent.Must(llmagent.NewBuilder[app]().Name("weather").Model(m).ToolSource(src).Build())
	r, err := runner.New(runner.Config[app]{Agent: a, Mode: helikon.ModePlan})
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Collect(r.Run(context.Background(), "", "Weather in Oslo? Then delete notes.txt."))
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "It is 21 degrees in Oslo." {
		t.Errorf("answer %q", res.Text)
	}
	reqs := m.Requests()
	if len(reqs) != 2 || len(reqs[0].Tools) != 6 {
		t.Fatalf("model requests: %d, tools offered: %d", len(reqs), len(reqs[0].Tools))
	}
	results := agenttest.LastToolResults(reqs[1])
	if len(results) != 2 {
		t.Fatalf("tool results %+v", results)
	}
	if results[0].IsError || normJSON(t, json.RawMessage(results[0].Content)) != `{"city":"Oslo","temp":21}` {
		t.Errorf("get_weather result %+v", results[0])
	}
	if !results[1].IsError || results[1].Kind != helikon.KindDenied || !strings.Contains(results[1].Content, "plan mode") {
		t.Errorf("delete_file result %+v", results[1])
	}
}

func TestClientFollowsToolListChanges(t *testing.T) {
	srv, _ := foreignServer(false)
	changed := make(chan struct{}, 10)
	src := connectInMemory(t, srv, &mcptools.ClientOptions{OnToolsChanged: func() { changed <- struct{}{} }})
	old := toolsByName(t, src)["delete_file"]

	mcp.AddTool(srv, &mcp.Tool{Name: "added", Description: "Added later."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
		})
	for {
		<-changed
		if _, ok := toolsByName(t, src)["added"]; ok {
			break
		}
	}
	srv.RemoveTools("delete_file")
	for {
		<-changed
		if _, ok := toolsByName(t, src)["delete_file"]; !ok {
			break
		}
	}
	if _, err := invoke(old, `{"path":"x"}`); helikon.KindOf(err) != helikon.KindOther || !strings.Contains(err.Error(), "no longer offers") {
		t.Fatalf("calling a removed tool: %v", err)
	}
}

// TestClientReconnects: the server process dies during a call; that call
// fails (it may have run), and the next call reconnects by spawning the
// server again.
func TestClientReconnects(t *testing.T) {
	t.Setenv(serverEnv, "1")
	src, err := mcptools.Connect[app](context.Background(), mcptools.CommandArgs(os.Args[0]), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	tools := toolsByName(t, src)
	_, err = invoke(tools["exit_now"], `{}`)
	if helikon.KindOf(err) != helikon.KindOther || !strings.Contains(fmt.Sprint(err), "may or may not have run") {
		t.Fatalf("call during which the server died: %v", err)
	}
	out, err := invoke(tools["get_weather"], `{"city":"Rome"}`)
	if err != nil {
		t.Fatalf("call after the server died: %v", err)
	}
	if !strings.Contains(string(out), "Rome") {
		t.Fatalf("output %s", out)
	}
}

func TestToolsetReportsNameClashes(t *testing.T) {
	srv, _ := foreignServer(false)
	a := connectInMemory(t, srv, nil)
	b := connectInMemory(t, srv, nil)
	ctx := context.Background()
	if _, err := mcptools.Toolset(ctx, nil, a, b); err == nil || !strings.Contains(err.Error(), "Prefix") {
		t.Fatalf("clashing sources: %v", err)
	}
	k := newKit(t)
	local := []helikon.Tool[app]{k.tool("echo")}
	if _, err := mcptools.Toolset(ctx, []helikon.Tool[app]{k.tool("fail")}, a); err == nil || !strings.Contains(err.Error(), "local tools") {
		t.Fatalf("clash with a local tool: %v", err)
	}
	c := connectInMemory(t, srv, &mcptools.ClientOptions{Prefix: "w_"})
	set, err := mcptools.Toolset(ctx, local, a, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := set.Lookup("w_get_weather"); !ok || set.Len() != 11 {
		t.Fatalf("prefixed set: %v", set.Names())
	}
	out, err := invoke(mustLookup(set, "w_get_weather"), `{"city":"Bern"}`)
	if err != nil || !strings.Contains(string(out), "Bern") {
		t.Fatalf("prefixed tool call: %s %v", out, err)
	}
}

func mustLookup(set *helikon.Toolset[app], name string) helikon.Tool[app] {
	t, ok := set.Lookup(name)
	if !ok {
		panic(name)
	}
	return t
}

func TestCommandSplitsLikeAShell(t *testing.T) {
	tr, err := mcptools.Command(`/bin/server --name "two words" 'it''s'`)()
	if err != nil {
		t.Fatal(err)
	}
	got := tr.(*mcp.CommandTransport).Command.Args
	want := []string{"/bin/server", "--name", "two words", "its"}
	if !slices.Equal(got, want) {
		t.Fatalf("args %q, want %q", got, want)
	}
	for _, bad := range []string{"", "   ", `server "unterminated`} {
		if _, err := mcptools.Command(bad)(); err == nil {
			t.Errorf("Command(%q): no error", bad)
		}
	}
}

// TestClosedWorldToolsOfOtherServersAreNotWriteTools: openWorldHint false
// alone (a database tool, say) does not make a tool a helikon write tool,
// which AcceptEdits approves without asking; only a helikon server's mark
// does (TestHelikonToolsRoundTrip checks that write survives the trip).
func TestClosedWorldToolsOfOtherServersAreNotWriteTools(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "db", Version: "1"}, nil)
	f := false
	mcp.AddTool(srv, &mcp.Tool{Name: "drop_table", Description: "Drop a table.", Annotations: &mcp.ToolAnnotations{OpenWorldHint: &f}},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "dropped"}}}, nil, nil
		})
	tool := toolsByName(t, connectInMemory(t, srv, nil))["drop_table"]
	if e := helikon.EffectOf(tool); e != helikon.EffectSideEffect {
		t.Fatalf("drop_table has effect %s, want side_effect", e)
	}
	askAll := helikon.PolicyFunc(func(context.Context, *helikon.Call, *helikon.Targets) (helikon.PolicyDecision, error) {
		return helikon.PolicyAsk("asks about everything"), nil
	})
	d := (&helikon.Permissions{Policy: askAll}).Check(context.Background(), helikon.CallFor(tool, json.RawMessage(`{}`), helikon.ModeAcceptEdits))
	if d.Allowed {
		t.Errorf("accept-edits let drop_table run without asking: %+v", d)
	}
}
