package genkitadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

// call is one tool request of a scripted model's turn.
type call struct {
	tool, args string
}

// defineScripted registers a model that asks for calls in its first turn
// and, once every call has a response, answers with the responses, one
// line per call: "tool: output". It stands for a real model without a key.
func defineScripted(g *genkit.Genkit, calls []call) ai.Model {
	return genkit.DefineModel(g, "scripted/model", &ai.ModelOptions{Supports: &ai.ModelSupports{Tools: true, Multiturn: true}},
		func(_ context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			var lines []string
			for _, m := range req.Messages {
				for _, p := range m.Content {
					if p.IsToolResponse() {
						out, _ := json.Marshal(p.ToolResponse.Output)
						lines = append(lines, fmt.Sprintf("%s %s: %s", p.ToolResponse.Ref, p.ToolResponse.Name, out))
					}
				}
			}
			if len(lines) > 0 {
				slices.Sort(lines) // by Ref: Genkit answers resumed requests last
				return &ai.ModelResponse{Request: req, FinishReason: ai.FinishReasonStop, Message: ai.NewModelTextMessage(strings.Join(lines, "\n"))}, nil
			}
			msg := &ai.Message{Role: ai.RoleModel}
			for i, c := range calls {
				var in any
				if err := json.Unmarshal([]byte(c.args), &in); err != nil {
					return nil, err
				}
				msg.Content = append(msg.Content, ai.NewToolRequestPart(&ai.ToolRequest{Name: c.tool, Ref: fmt.Sprint(i), Input: in}))
			}
			return &ai.ModelResponse{Request: req, FinishReason: ai.FinishReasonStop, Message: msg}, nil
		})
}
