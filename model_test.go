package helikon_test

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"testing"

	"github.com/paigasus/helikon"
)

// chunks is a model that yields a fixed stream.
type chunks []*helikon.ModelChunk

func (c chunks) Name() string { return "fixed" }

func (c chunks) Stream(context.Context, *helikon.ModelRequest) iter.Seq2[*helikon.ModelChunk, error] {
	return func(yield func(*helikon.ModelChunk, error) bool) {
		for _, ch := range c {
			if !yield(ch, nil) {
				return
			}
		}
	}
}

func TestGenerate(t *testing.T) {
	resp := &helikon.ModelResponse{Message: helikon.Message{Role: helikon.RoleAssistant, Text: "hi"}}
	got, err := helikon.Generate(context.Background(), chunks{{Text: "h"}, {Text: "i"}, {Response: resp}}, &helikon.ModelRequest{})
	if err != nil || got != resp {
		t.Fatalf("got %v, %v", got, err)
	}
	if _, err := helikon.Generate(context.Background(), chunks{{Text: "h"}}, &helikon.ModelRequest{}); !errors.Is(err, helikon.ErrNoResponse) {
		t.Fatalf("stream without response: %v", err)
	}
}

func TestUsageAdd(t *testing.T) {
	u := helikon.Usage{InputTokens: 1, OutputTokens: 2, CachedInputTokens: 3, Requests: 1}
	u.Add(helikon.Usage{InputTokens: 10, OutputTokens: 20, CachedInputTokens: 30, Requests: 1})
	if u != (helikon.Usage{InputTokens: 11, OutputTokens: 22, CachedInputTokens: 33, Requests: 2}) || u.TotalTokens() != 33 {
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
		m := helikon.Message{Role: helikon.RoleAssistant, ToolCalls: []helikon.ToolCall{{ID: "c", Name: "t", Args: json.RawMessage(tc.args)}}}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		var back helikon.Message
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
		b, err := json.Marshal(helikon.ToolCall{ID: id, Name: name, Args: args})
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(b) {
			t.Fatalf("invalid JSON %q", b)
		}
	})
}
