package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/mcptools"
)

func TestServerListsToolsWithSchemasAndAnnotations(t *testing.T) {
	k := newKit(t)
	cs := serve(t, k.tools, nil, nil, "")
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(k.tools) {
		t.Fatalf("listed %d tools, want %d", len(res.Tools), len(k.tools))
	}
	for _, def := range res.Tools {
		tool := k.tool(def.Name)
		if def.Description != tool.Description() {
			t.Errorf("%s: description %q, want %q", def.Name, def.Description, tool.Description())
		}
		if got, want := normJSON(t, def.InputSchema), normJSON(t, tool.Schema()); got != want {
			t.Errorf("%s: input schema\n got %s\nwant %s", def.Name, got, want)
		}
		if out := helikon.OutputSchemaOf(tool); out != nil {
			if got, want := normJSON(t, def.OutputSchema), normJSON(t, out); got != want {
				t.Errorf("%s: output schema\n got %s\nwant %s", def.Name, got, want)
			}
		}
		if got, want := mustJSON(t, def.Annotations), mustJSON(t, mcptools.Annotations(helikon.EffectOf(tool))); got != want {
			t.Errorf("%s: annotations %s, want %s", def.Name, got, want)
		}
		if got, want := mcptools.EffectOf(def.Annotations), helikon.EffectOf(tool); got != want {
			t.Errorf("%s: effect read back from annotations is %s, want %s", def.Name, got, want)
		}
	}
}

// normJSON re-encodes v through a generic value so that key order does not
// matter.
func normJSON(t testing.TB, v any) string {
	t.Helper()
	var g any
	if err := json.Unmarshal([]byte(mustJSON(t, v)), &g); err != nil {
		t.Fatal(err)
	}
	return mustJSON(t, g)
}

func TestAnnotationsRoundTrip(t *testing.T) {
	for _, e := range []helikon.Effect{helikon.EffectReadOnly, helikon.EffectWrite, helikon.EffectSideEffect} {
		a := mcptools.Annotations(e)
		// Through the wire format, as a client sees them.
		var back mcp.ToolAnnotations
		if err := json.Unmarshal([]byte(mustJSON(t, a)), &back); err != nil {
			t.Fatal(err)
		}
		if got := mcptools.EffectOf(&back); got != e {
			t.Errorf("EffectOf(Annotations(%s)) = %s", e, got)
		}
	}
	if got := mcptools.EffectOf(nil); got != helikon.EffectSideEffect {
		t.Errorf("no annotations: effect %s, want side_effect", got)
	}
	if got := mcptools.EffectOf(&mcp.ToolAnnotations{Title: "x"}); got != helikon.EffectSideEffect {
		t.Errorf("annotations without hints: effect %s, want side_effect", got)
	}
}

// TestServerResultsMatchWhatAModelSees checks that each outcome of a call
// through MCP carries exactly the text a model gets for the same call in a
// helikon run.
func TestServerResultsMatchWhatAModelSees(t *testing.T) {
	k := newKit(t)
	cs := serve(t, k.tools, nil, nil, "")
	tests := []struct {
		tool     string
		args     string
		isError  bool
		contains []string
	}{
		{"echo", `{"text":"hi","times":2}`, false, []string{`"echo":"hi hi"`}},
		{"echo", `{"text":5,"times":"x","color":"red"}`, true, []string{"invalid arguments for tool echo", `"text"`, `"times"`, `"color"`, "Fix the arguments"}},
		{"echo", `{}`, true, []string{"invalid arguments for tool echo", `"text"`}},
		{"fail", `{}`, true, []string{"error: the disk is full; free some space and try again"}},
		{"refuse", `{}`, true, []string{"denied: no such account; ask the user for the account id", "Do not retry"}},
	}
	for _, tt := range tests {
		t.Run(tt.tool+tt.args, func(t *testing.T) {
			res := callTool(t, cs, tt.tool, json.RawMessage(tt.args))
			if res.IsError != tt.isError {
				t.Fatalf("isError = %v, want %v (%s)", res.IsError, tt.isError, text(res))
			}
			// What the model sees in a run for the same call.
			tool := k.tool(tt.tool)
			out, err := tool.Invoke(helikon.NewToolContext(context.Background(), app{}, nil), json.RawMessage(tt.args))
			want := model.ToolResultFor(model.ToolCall{Name: tt.tool}, out, err).Content
			if got := text(res); got != want {
				t.Errorf("text\n got %s\nwant %s", got, want)
			}
			for _, s := range tt.contains {
				if !strings.Contains(text(res), s) {
					t.Errorf("text %q does not contain %q", text(res), s)
				}
			}
			if tt.isError {
				em, ok := res.Meta[mcptools.MetaError].(map[string]any)
				if !ok || em["kind"] != string(helikon.KindOf(err)) {
					t.Errorf("_meta %v: want kind %s", res.Meta, helikon.KindOf(err))
				}
			} else if res.StructuredContent == nil {
				t.Error("a tool with an output schema returned no structured content")
			}
		})
	}
}

func TestServerRejectsNonObjectArguments(t *testing.T) {
	k := newKit(t)
	cs := serve(t, k.tools, nil, nil, "")
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`[1,2]`)})
	if err != nil {
		return // rejected by the SDK before the tool: also fine
	}
	if !res.IsError || !strings.Contains(text(res), "must be a JSON object") {
		t.Fatalf("got %v %q", res.IsError, text(res))
	}
}

func TestPlanModeServerRefusesWrite(t *testing.T) {
	k := newKit(t)
	cs := serve(t, k.tools, &mcptools.ServerOptions[app]{Mode: helikon.ModePlan}, nil, "")
	res := callTool(t, cs, "write_note", map[string]any{"name": "a", "body": "b"})
	if !res.IsError || !strings.Contains(text(res), "not permitted in plan mode") {
		t.Fatalf("write in plan mode: isError=%v %q", res.IsError, text(res))
	}
	if _, wrote := k.notes.Load("a"); wrote {
		t.Fatal("the write tool ran in plan mode")
	}
	if res := callTool(t, cs, "echo", map[string]any{"text": "x"}); res.IsError {
		t.Fatalf("read-only tool refused in plan mode: %s", text(res))
	}
}

func TestServerAppliesRules(t *testing.T) {
	k := newKit(t)
	perms := &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("write_note")}}
	cs := serve(t, k.tools, &mcptools.ServerOptions[app]{Permissions: perms, Mode: helikon.ModeBypass}, nil, "")
	res := callTool(t, cs, "write_note", map[string]any{"name": "a", "body": "b"})
	if !res.IsError || !strings.Contains(text(res), "denied by rule write_note") {
		t.Fatalf("denied tool: isError=%v %q", res.IsError, text(res))
	}
	if _, wrote := k.notes.Load("a"); wrote {
		t.Fatal("a tool denied by rule ran")
	}
}

// TestAskGoesToClientByElicitation runs a call that a guard stops (a write
// to /etc) under both protocol generations: the question reaches the
// client's elicitation handler, and its answer decides.
func TestAskGoesToClientByElicitation(t *testing.T) {
	for _, proto := range protocols {
		for _, answer := range []string{"accept", "decline", "no-elicitation"} {
			t.Run(protoName(proto)+"/"+answer, func(t *testing.T) {
				k := newKit(t)
				var asked []string
				copts := &mcp.ClientOptions{}
				if answer != "no-elicitation" {
					copts.ElicitationHandler = func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						asked = append(asked, req.Params.Message)
						return &mcp.ElicitResult{Action: answer, Content: map[string]any{"approve": answer == "accept"}}, nil
					}
				}
				cs := serve(t, k.tools, nil, copts, proto)
				res := callTool(t, cs, "touch_system", map[string]any{})
				switch answer {
				case "accept":
					if res.IsError || k.touched.Load() != 1 {
						t.Fatalf("approved call: isError=%v %q, ran %d times", res.IsError, text(res), k.touched.Load())
					}
				case "decline":
					if !res.IsError || !strings.Contains(text(res), "declined by the user") || k.touched.Load() != 0 {
						t.Fatalf("declined call: isError=%v %q, ran %d times", res.IsError, text(res), k.touched.Load())
					}
				default:
					if !res.IsError || !strings.Contains(text(res), "there is no one to ask") || k.touched.Load() != 0 {
						t.Fatalf("call without elicitation: isError=%v %q, ran %d times", res.IsError, text(res), k.touched.Load())
					}
				}
				if answer != "no-elicitation" && (len(asked) != 1 || !strings.Contains(asked[0], "guard protected-system-path")) {
					t.Fatalf("elicitations: %q", asked)
				}
			})
		}
	}
}

// TestForgedApprovalIsNotAccepted: under multi round-trip requests the
// client sends answers with its call. An answer not issued by the server
// for exactly this call (made up, or issued for other arguments) must not
// approve it.
func TestForgedApprovalIsNotAccepted(t *testing.T) {
	k := newKit(t)
	cs := serve(t, k.tools, nil, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the handler must not be called with multi round-trip disabled")
			return nil, nil
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}, "")
	yes := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}
	ctx := context.Background()

	// A made-up answer.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "touch_system", Arguments: map[string]any{},
		InputResponses: mcp.InputResponseMap{"approve-0000": yes}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || k.touched.Load() != 0 {
		t.Fatalf("made-up answer: needsInput=%v, ran %d times", res.NeedsInput(), k.touched.Load())
	}
	var id string
	for id = range res.InputRequests {
	}

	// The genuine answer, given for a call with other arguments.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "touch_system", Arguments: map[string]any{"note": "other"},
		InputResponses: mcp.InputResponseMap{id: yes}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() && !res.IsError || k.touched.Load() != 0 {
		t.Fatalf("answer for other arguments: %q, ran %d times", text(res), k.touched.Load())
	}

	// The genuine answer for this call.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "touch_system", Arguments: map[string]any{},
		InputResponses: mcp.InputResponseMap{id: yes}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.NeedsInput() || k.touched.Load() != 1 {
		t.Fatalf("genuine answer: isError=%v needsInput=%v %q, ran %d times", res.IsError, res.NeedsInput(), text(res), k.touched.Load())
	}
}

// TestCancellationCancelsTheCall: the client cancels a running call
// (notifications/cancelled) and the tool's context ends. Progress
// notifications arrive while it runs.
func TestCancellationCancelsTheCall(t *testing.T) {
	for _, proto := range protocols {
		t.Run(protoName(proto), func(t *testing.T) {
			k := newKit(t)
			progress := make(chan *mcp.ProgressNotificationParams, 100)
			cs := serve(t, k.tools, &mcptools.ServerOptions[app]{ProgressInterval: 10 * time.Millisecond}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					select {
					case progress <- req.Params:
					default:
					}
				},
			}, proto)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}
			params.SetProgressToken("tok-1")
			done := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, params)
				done <- err
			}()
			<-k.started
			p := <-progress
			if p.ProgressToken != "tok-1" || !strings.Contains(p.Message, "slow still running") {
				t.Errorf("progress %+v", p)
			}
			cancel()
			if err := <-k.cancelled; err == nil {
				t.Fatal("the tool's context ended without an error")
			}
			if err := <-done; err == nil {
				t.Fatal("a cancelled call returned no error to the client")
			}
		})
	}
}

func TestAddToolsRejectsBadTools(t *testing.T) {
	k := newKit(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "x"}, nil)
	dup := []helikon.Tool[app]{k.tool("echo"), k.tool("echo")}
	if err := mcptools.AddTools(srv, dup, nil); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("duplicate tools: %v", err)
	}
	bad := &helikon.ToolInfo{ToolName: "arr", InputSchema: k.tool("echo").Schema()}
	s := *bad.InputSchema
	s.Type = "array"
	bad.InputSchema = &s
	if err := mcptools.AddTools(srv, []helikon.Tool[app]{badTool{bad}}, nil); err == nil || !strings.Contains(err.Error(), "type object") {
		t.Fatalf("array input schema: %v", err)
	}
}

type badTool struct{ *helikon.ToolInfo }

func (badTool) Invoke(*helikon.ToolContext[app], json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}
