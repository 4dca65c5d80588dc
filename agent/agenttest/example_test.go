package agenttest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/model"
)

// A scripted model answers in order: here a tool call first, then text. Each
// request is recorded, so a test can check what the model was shown.
func ExampleNew() {
	llm := agenttest.New(
		agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("c1", "read", `{"path":"a.txt"}`)}},
		agenttest.Reply{Text: "The file says hi."},
	)
	ctx := context.Background()
	req := &model.Request{Messages: []model.Message{model.UserMessage("What does a.txt say?")}}
	first, err := model.Generate(ctx, llm, req)
	if err != nil {
		panic(err)
	}
	call := first.Message.ToolCalls[0]
	fmt.Println(first.StopReason, call.Name, string(call.Args))

	second, err := model.Generate(ctx, llm, req)
	if err != nil {
		panic(err)
	}
	fmt.Println(second.Message.Text, llm.Calls(), agenttest.Contains(llm.Requests()[0], "a.txt"))

	// A third call finds the script exhausted.
	_, err = model.Generate(ctx, llm, req)
	fmt.Println(errors.Is(err, agenttest.ErrScriptExhausted))
	// Output:
	// tool_calls read {"path":"a.txt"}
	// The file says hi. 2 true
	// true
}

// Func computes each reply from the request, here from the tool results the
// model is sent back.
func ExampleModel_Func() {
	llm := &agenttest.Model{Func: func(req *model.Request) agenttest.Reply {
		if res := agenttest.LastToolResults(req); len(res) > 0 {
			return agenttest.Reply{Text: "the tool said " + res[0].Content}
		}
		return agenttest.Reply{ToolCalls: []model.ToolCall{agenttest.Call("c1", "clock", `{}`)}}
	}}
	req := &model.Request{Messages: []model.Message{
		model.UserMessage("What time is it?"),
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{agenttest.Call("c1", "clock", `{}`)}},
		{Role: model.RoleTool, ToolResults: []model.ToolResult{{CallID: "c1", Name: "clock", Content: `"12:00"`}}},
	}}
	resp, err := model.Generate(context.Background(), llm, req)
	if err != nil {
		panic(err)
	}
	fmt.Println(llm.Name(), resp.Message.Text)
	// Output: scripted the tool said "12:00"
}
