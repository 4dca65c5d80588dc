package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/functiontool"
	"github.com/paigasus/helikon/tool/mcptools"
)

type app = struct{}

type echoIn struct {
	Text  string `json:"text" jsonschema:"the text to echo"`
	Times int    `json:"times,omitempty" jsonschema:"how many times (default 1)"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

type noteIn struct {
	Name string `json:"name"`
	Body string `json:"body"`
}

type empty struct{}

// testKit is a set of tools with observable effects.
type testKit struct {
	tools     []helikon.Tool[app]
	notes     sync.Map
	started   chan struct{} // slow: the call started
	cancelled chan error    // slow: the call's context ended
	touched   atomic.Int32  // touch_system: invocations
}

// touchTool reports a write to a protected system path, so that the
// built-in guard asks before it runs.
type touchTool struct {
	*functiontool.Tool[app, touchIn, empty]
}

type touchIn struct {
	Note string `json:"note,omitempty"`
}

func (touchTool) Targets(json.RawMessage) (helikon.Targets, error) {
	return helikon.Targets{Paths: []helikon.PathTarget{{Path: "/etc/helikon-test", Access: helikon.AccessWrite}}}, nil
}

func newKit(t testing.TB) *testKit {
	k := &testKit{started: make(chan struct{}, 10), cancelled: make(chan error, 10)}
	ro := &functiontool.Options{Effect: helikon.EffectReadOnly}
	echo := functiontool.Must(functiontool.New("echo", "Echo text.", func(_ *helikon.ToolContext[app], in echoIn) (echoOut, error) {
		out := in.Text
		for i := 1; i < in.Times; i++ {
			out += " " + in.Text
		}
		return echoOut{Echo: out}, nil
	}, ro))
	note := functiontool.Must(functiontool.New("write_note", "Write a note.", func(_ *helikon.ToolContext[app], in noteIn) (empty, error) {
		k.notes.Store(in.Name, in.Body)
		return empty{}, nil
	}, &functiontool.Options{Effect: helikon.EffectWrite}))
	fail := functiontool.Must(functiontool.New("fail", "Always fails.", func(*helikon.ToolContext[app], empty) (empty, error) {
		return empty{}, errors.New("the disk is full; free some space and try again")
	}, nil))
	refuse := functiontool.Must(functiontool.New("refuse", "Always refuses.", func(*helikon.ToolContext[app], empty) (empty, error) {
		return empty{}, helikon.Denied("no such account; ask the user for the account id")
	}, nil))
	slow := functiontool.Must(functiontool.New("slow", "Runs until cancelled.", func(tc *helikon.ToolContext[app], _ empty) (empty, error) {
		k.started <- struct{}{}
		<-tc.Done()
		k.cancelled <- tc.Err()
		return empty{}, tc.Err()
	}, nil))
	touch := touchTool{functiontool.Must(functiontool.New("touch_system", "Touches a system file.", func(*helikon.ToolContext[app], touchIn) (empty, error) {
		k.touched.Add(1)
		return empty{}, nil
	}, nil))}
	k.tools = []helikon.Tool[app]{echo, note, fail, refuse, slow, touch}
	return k
}

func (k *testKit) tool(name string) helikon.Tool[app] {
	for _, t := range k.tools {
		if t.Name() == name {
			return t
		}
	}
	panic("no tool " + name)
}

// legacyProtocol is the newest protocol version before multi round-trip
// requests: approvals travel as elicitation/create requests.
const legacyProtocol = "2025-11-25"

// protocols are the protocol versions the server is tested under: the
// SDK's latest (multi round-trip requests) and the legacy handshake.
var protocols = []string{"", legacyProtocol}

func protoName(p string) string {
	if p == "" {
		return "latest"
	}
	return p
}

// serve serves tools in memory and returns a connected go-sdk client session.
func serve(t testing.TB, tools []helikon.Tool[app], opts *mcptools.ServerOptions[app], copts *mcp.ClientOptions, protocol string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	srv, err := mcptools.NewServer(helikon.MustToolset(tools...), opts)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, copts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Close()
	})
	got := cs.InitializeResult().ProtocolVersion
	if protocol == "" && got < "2026-07-28" || protocol != "" && got != protocol {
		t.Fatalf("negotiated protocol %s, want %s", got, protoName(protocol))
	}
	return cs
}

func callTool(t testing.TB, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

func text(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
