package openai_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon/model"

	"github.com/paigasus/helikon/provider/openai"
	"github.com/paigasus/helikon/provider/openai/openaitest"
)

func ExampleNew() {
	// A local server speaking OpenAI's wire format stands in for the API;
	// without BaseURL the model talks to OPENAI_BASE_URL or api.openai.com.
	srv := openaitest.NewServer(openaitest.Reply{Text: "Hello!", InputTokens: 9, OutputTokens: 2})
	defer srv.Close()
	llm, err := openai.New("gpt-4.1-mini", &openai.Options{APIKey: "sk-example", BaseURL: srv.BaseURL()})
	if err != nil {
		panic(err)
	}
	resp, err := model.Generate(context.Background(), llm, &model.Request{
		Instructions: "Be brief.",
		Messages:     []model.Message{model.UserMessage("Say hello.")},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(llm.Name(), resp.Message.Text, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output: openai:gpt-4.1-mini Hello! 9 2
}
