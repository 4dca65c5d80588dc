package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"testing"

	"github.com/paigasus/helikon/model"
)

// chunks is a model that yields a fixed stream.
type chunks []*model.Chunk

func (c chunks) Name() string { return "fixed" }

func (c chunks) Stream(context.Context, *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		for _, ch := range c {
			if !yield(ch, nil) {
				return
			}
		}
	}
}

func TestGenerate(t *testing.T) {
	resp := &model.Response{Message: model.Message{Role: model.RoleAssistant, Text: "hi"}}
	got, err := model.Generate(context.Background(), chunks{{Text: "h"}, {Text: "i"}, {Response: resp}}, &model.Request{})
	if err != nil || got != resp {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := model.Generate(context.Background(), chunks{{Text: "h"}}, &model.Request{}); !errors.Is(err, model.ErrNoResponse) {
		t.Fatalf("stream without response: %v", err)
	}
}

func TestUsageAdd(t *testing.T) {
	u := model.Usage{InputTokens: 1, OutputTokens: 2, CachedInputTokens: 3, Requests: 1}
	u.Add(model.Usage{InputTokens: 10, OutputTokens: 20, CachedInputTokens: 30, Requests: 1})
	if u != (model.Usage{InputTokens: 11, OutputTokens: 22, CachedInputTokens: 33, Requests: 2}) || u.TotalTokens() != 33 {
		t.Fatalf("%+v", u)
	}
}

func TestMessageJSONRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		args, stored string
	}{
		{`{"a":1}`, `{"a":1}`},
		{``, `{}`},
		{`{"a":`, `"{\"a\":"`}, // malformed arguments survive as a string
	} {
		m := model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c", Name: "t", Args: json.RawMessage(tc.args)}}}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		var back model.Message
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if string(back.ToolCalls[0].Args) != tc.stored {
			t.Errorf("%q stored as %s", tc.args, back.ToolCalls[0].Args)
		}
	}
}

// FuzzToolCallJSON checks that any tool call, whatever bytes the model sent
// as arguments, encodes to valid JSON (so a session can always be stored).
func FuzzToolCallJSON(f *testing.F) {
	f.Add("c1", "Read", []byte(`{"path":"a"}`))
	f.Add("", "x", []byte(`{"a":`))
	f.Add("id", "n", []byte{0xff, 0x00})
	f.Fuzz(func(t *testing.T, id, name string, args []byte) {
		b, err := json.Marshal(model.ToolCall{ID: id, Name: name, Args: args})
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Fatalf("invalid JSON %q", b)
		}
	})
}
