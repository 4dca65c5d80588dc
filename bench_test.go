package helikon_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/functiontool"
)

type addArgs struct {
	A float64 `json:"a" jsonschema:"the first amount"`
	B float64 `json:"b" jsonschema:"the second amount"`
}

type addOut struct {
	Total float64 `json:"total"`
}

// BenchmarkToolDispatch measures one tool call as a runner makes it: lookup by
// name, validation of the arguments against the inferred schema, decoding,
// the call, encoding and output validation.
func BenchmarkToolDispatch(b *testing.B) {
	add := functiontool.Must(functiontool.New("add", "Add two amounts.",
		func(_ *helikon.ToolContext[struct{}], in addArgs) (addOut, error) {
			return addOut{Total: in.A + in.B}, nil
		}, &functiontool.Options{Effect: helikon.EffectReadOnly}))
	set := helikon.MustToolset[struct{}](add)
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	args := json.RawMessage(`{"a": 19.99, "b": 4.5}`)
	b.ReportAllocs()
	for b.Loop() {
		t, ok := set.Lookup("add")
		if !ok {
			b.Fatal("lookup failed")
		}
		out, err := t.Invoke(tc, args)
		if err != nil || string(out) != `{"total":24.49}` {
			b.Fatalf("got %s, %v", out, err)
		}
	}
}

// BenchmarkCheckedCall measures the whole path every caller takes
// (helikon.CallTool): the JSON check, the permission pipeline with its
// guards, the call as in BenchmarkToolDispatch, and the output check.
func BenchmarkCheckedCall(b *testing.B) {
	add := functiontool.Must(functiontool.New("add", "Add two amounts.",
		func(_ *helikon.ToolContext[struct{}], in addArgs) (addOut, error) {
			return addOut{Total: in.A + in.B}, nil
		}, &functiontool.Options{Effect: helikon.EffectReadOnly}))
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	perms := &helikon.Permissions{Home: "/home/bench"}
	args := json.RawMessage(`{"a": 19.99, "b": 4.5}`)
	b.ReportAllocs()
	for b.Loop() {
		out, err := helikon.CallTool(tc, perms, add, args)
		if err != nil || string(out) != `{"total":24.49}` {
			b.Fatalf("got %s, %v", out, err)
		}
	}
}
