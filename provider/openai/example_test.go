package openai_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/provider/openai"
	"github.com/paigasus/helikon/provider/openai/openaitest"
)

func ExampleNew() {
	// A local server speaking OpenAI's wire format stands in for the API;
	// without BaseURL the model talks to OPENAI_BASE_URL or api.openai.com.
	srv := openaitest.NewServer(openaitest.Reply{Text: "Hello!", InputTokens: 9, OutputTokens: 2})
	defer srv.Close()
	model, err := openai.New(openai.Options{Model: "gpt-4.1-mini", APIKey: "sk-example", BaseURL: srv.BaseURL()})
	if err != nil {
		panic(err)
	}
	resp, err := helikon.Generate(context.Background(), model, &helikon.ModelRequest{
		Instructions: "Be brief.",
		Messages:     []helikon.Message{helikon.UserMessage("Say hello.")},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(model.Name(), resp.Message.Text, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output: openai:gpt-4.1-mini Hello! 9 2
}
