package agenttest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent/agenttest"
)

// A scripted model answers in order: here a tool call first, then text. Each
// request is recorded, so a test can check what the model was shown.
func ExampleNew() {
	model := agenttest.New(
		agenttest.Reply{ToolCalls: []helikon.ToolCall{agenttest.Call("c1", "read", `{"path":"a.txt"}`)}},
		agenttest.Reply{Text: "The file says hi."},
	)
	ctx := context.Background()
	req := &helikon.ModelRequest{Messages: []helikon.Message{helikon.UserMessage("What does a.txt say?")}}
	first, err := helikon.Generate(ctx, model, req)
	if err != nil {
		panic(err)
	}
	call := first.Message.ToolCalls[0]
	fmt.Println(first.StopReason, call.Name, string(call.Args))

	second, err := helikon.Generate(ctx, model, req)
	if err != nil {
		panic(err)
	}
	fmt.Println(second.Message.Text, model.Calls(), agenttest.Contains(model.Requests()[0], "a.txt"))

	// A third call finds the script exhausted.
	_, err = helikon.Generate(ctx, model, req)
	fmt.Println(errors.Is(err, agenttest.ErrScriptExhausted))
	// Output:
	// tool_calls read {"path":"a.txt"}
	// The file says hi. 2 true
	// true
}

// Func computes each reply from the request, here from the tool results the
// model is sent back.
func ExampleModel_Func() {
	model := &agenttest.Model{Func: func(req *helikon.ModelRequest) agenttest.Reply {
		if res := agenttest.LastToolResults(req); len(res) > 0 {
			return agenttest.Reply{Text: "the tool said " + res[0].Content}
		}
		return agenttest.Reply{ToolCalls: []helikon.ToolCall{agenttest.Call("c1", "clock", `{}`)}}
	}}
	req := &helikon.ModelRequest{Messages: []helikon.Message{
		helikon.UserMessage("What time is it?"),
		{Role: helikon.RoleAssistant, ToolCalls: []helikon.ToolCall{agenttest.Call("c1", "clock", `{}`)}},
		{Role: helikon.RoleTool, ToolResults: []helikon.ToolResult{{CallID: "c1", Name: "clock", Content: `"12:00"`}}},
	}}
	resp, err := helikon.Generate(context.Background(), model, req)
	if err != nil {
		panic(err)
	}
	fmt.Println(model.Name(), resp.Message.Text)
	// Output: scripted the tool said "12:00"
}
