package openaitest_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/provider/openai"
	"github.com/paigasus/helikon/provider/openai/openaitest"
)

// The server answers a provider/openai model with a scripted tool call and
// records the request, so a test can check what was sent on the wire.
func ExampleNewServer() {
	srv := openaitest.NewServer(openaitest.Reply{
		ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "get_weather", Args: `{"city":"Oslo"}`}},
	})
	defer srv.Close()
	llm, err := openai.New("gpt-4.1-mini", &openai.Options{APIKey: "sk-example", BaseURL: srv.BaseURL()})
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
	fmt.Println(resp.StopReason, call.ID, call.Name, string(call.Args))
	req := srv.Requests()[0]
	fmt.Println(req.Path, req.Body["model"], req.Header.Get("Authorization"))
	// Output:
	// tool_calls call_1 get_weather {"city":"Oslo"}
	// /v1/chat/completions gpt-4.1-mini Bearer sk-example
}
