package anthropictest_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/provider/anthropic"
	"github.com/paigasus/helikon/provider/anthropic/anthropictest"
)

// The server answers a provider/anthropic model with a scripted tool_use
// block and records the request, so a test can check what was sent.
func ExampleNewServer() {
	srv := anthropictest.NewServer(anthropictest.Reply{
		Text:      "Let me check.",
		ToolCalls: []anthropictest.ToolCall{{ID: "toolu_1", Name: "get_weather", Args: `{"city":"Oslo"}`}},
	})
	defer srv.Close()
	llm, err := anthropic.New("claude-sonnet-4-5", &anthropic.Options{APIKey: "sk-ant-example", BaseURL: srv.BaseURL()})
	if err != nil {
		panic(err)
	}
	resp, err := model.Generate(context.Background(), llm, &model.Request{
		Messages: []model.Message{model.UserMessage("Weather in Oslo?")},
	})
	if err != nil {
		panic(err)
	}
	call := resp.Message.ToolCalls[0]
	fmt.Println(resp.Message.Text, resp.StopReason, call.ID, call.Name, string(call.Args))
	req := srv.Requests()[0]
	fmt.Println(req.Path, req.Body["model"])
	// Output:
	// Let me check. tool_calls toolu_1 get_weather {"city":"Oslo"}
	// /v1/messages claude-sonnet-4-5
}
