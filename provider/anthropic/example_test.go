package anthropic_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon/model"

	"github.com/paigasus/helikon/provider/anthropic"
	"github.com/paigasus/helikon/provider/anthropic/anthropictest"
)

func ExampleNew() {
	// A local server speaking Anthropic's wire format stands in for the API.
	srv := anthropictest.NewServer(anthropictest.Reply{Text: "Hello!", InputTokens: 9, OutputTokens: 2})
	defer srv.Close()
	llm, err := anthropic.New("claude-sonnet-4-5", &anthropic.Options{APIKey: "sk-ant-example", BaseURL: srv.BaseURL()})
	if err != nil {
		panic(err)
	}
	resp, err := model.Generate(context.Background(), llm, &model.Request{
		Messages: []model.Message{model.UserMessage("Say hello.")},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(llm.Name(), resp.Message.Text, resp.StopReason)
	// Output: anthropic:claude-sonnet-4-5 Hello! end_turn
}
