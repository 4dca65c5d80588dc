package mcptools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/mcptools"
)

// FuzzServedCall: for any JSON arguments, a call through MCP gives exactly
// the outcome and text of the same call made directly in a helikon run, and
// never a protocol error or a crash.
func FuzzServedCall(f *testing.F) {
	for _, s := range []string{`{"text":"a"}`, `{"text":"a","times":3}`, `{}`, `[]`, `null`, `"x"`, `{"text":1,"times":"2","z":null}`, `{"text":"\u0000"}`} {
		f.Add([]byte(s))
	}
	k := newKit(f)
	cs := serve(f, k.tools, nil, nil, "")
	echo := k.tool("echo")
	f.Fuzz(func(t *testing.T, args []byte) {
		if !json.Valid(args) {
			return
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(args)})
		if err != nil {
			var v any
			json.Unmarshal(args, &v)
			if _, isObject := v.(map[string]any); isObject {
				t.Fatalf("protocol error for object arguments %s: %v", args, err)
			}
			return // the SDK itself refuses non-object arguments
		}
		out, derr := echo.Invoke(helikon.NewToolContext(context.Background(), app{}, nil), args)
		want := model.ToolResultFor(model.ToolCall{Name: "echo"}, out, derr)
		if res.IsError != want.IsError {
			t.Fatalf("args %s: isError %v, direct call %v (%s)", args, res.IsError, want.IsError, text(res))
		}
		if want.IsError && text(res) != want.Content {
			t.Fatalf("args %s:\n got %s\nwant %s", args, text(res), want.Content)
		}
	})
}

// FuzzResultJSON: whatever a foreign server returns, the helikon tool's
// output is valid JSON.
func FuzzResultJSON(f *testing.F) {
	f.Add([]byte(`{"a":1}`), "text", true)
	f.Add([]byte(``), "{\"x\":", false)
	f.Add([]byte(`[1,2]`), "", true)
	f.Fuzz(func(t *testing.T, structured []byte, txt string, withText bool) {
		res := &mcp.CallToolResult{}
		if json.Valid(structured) {
			res.StructuredContent = json.RawMessage(structured)
		}
		if withText {
			res.Content = []mcp.Content{&mcp.TextContent{Text: txt}, &mcp.TextContent{Text: txt}}
		} else {
			res.Content = []mcp.Content{&mcp.ImageContent{Data: []byte(txt), MIMEType: "image/png"}}
		}
		out, err := mcptools.ResultJSON(res)
		if err == nil && !json.Valid(out) {
			t.Fatalf("invalid JSON output %q", out)
		}
	})
}

// FuzzEffectOf: annotations never grant more than they say. Only an explicit
// readOnlyHint makes a tool read-only, and only an explicit openWorldHint
// false makes it a write tool.
func FuzzEffectOf(f *testing.F) {
	for _, s := range []string{`{}`, `{"readOnlyHint":true}`, `{"openWorldHint":false}`, `{"readOnlyHint":false,"destructiveHint":false,"idempotentHint":true}`, `{"readOnlyHint":"true"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var a mcp.ToolAnnotations
		if json.Unmarshal(raw, &a) != nil {
			return
		}
		var m map[string]any
		json.Unmarshal(raw, &m)
		switch mcptools.EffectOf(&a) {
		case helikon.EffectReadOnly:
			if m["readOnlyHint"] != true {
				t.Fatalf("%s: read-only without readOnlyHint true", raw)
			}
		case helikon.EffectWrite:
			if m["openWorldHint"] != false {
				t.Fatalf("%s: write without openWorldHint false", raw)
			}
		}
	})
}
