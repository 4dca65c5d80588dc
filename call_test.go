package helikon_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
)

// probeTool reports its "path" argument as a write target, counts how often
// it is asked, and echoes the targets its context carries.
type probeTool struct {
	helikon.ToolInfo
	asked  atomic.Int32
	invoke func(tc *helikon.ToolContext[struct{}], args json.RawMessage) (json.RawMessage, error)
}

func newProbe() *probeTool {
	return &probeTool{ToolInfo: helikon.ToolInfo{ToolName: "probe", InputSchema: &jsonschema.Schema{Type: "object"}, ToolEffect: helikon.EffectWrite}}
}

func (p *probeTool) Targets(args json.RawMessage) (helikon.Targets, error) {
	p.asked.Add(1)
	var in struct{ Path string }
	if err := json.Unmarshal(args, &in); err != nil {
		return helikon.Targets{}, err
	}
	return helikon.Targets{Paths: []helikon.PathTarget{{Path: "/root/" + in.Path, Root: "/root", Access: helikon.AccessWrite}}}, nil
}

func (p *probeTool) Invoke(tc *helikon.ToolContext[struct{}], args json.RawMessage) (json.RawMessage, error) {
	if p.invoke != nil {
		return p.invoke(tc, args)
	}
	tg := tc.Targets()
	if tg == nil {
		return json.RawMessage(`"no targets"`), nil
	}
	return json.Marshal(tg.Paths[0].Path)
}

func TestCallToolParsesTargetsOnceAndHandsThemToTheTool(t *testing.T) {
	p := newProbe()
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	out, err := helikon.CallTool(tc, &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("Edit(secret/**)")}}, p, json.RawMessage(` {"path":"a.txt"} `))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `"/root/a.txt"` || p.asked.Load() != 1 {
		t.Errorf("out %s after %d Targets calls, want the pipeline's targets after exactly one", out, p.asked.Load())
	}
	// Invoked directly, the tool sees no targets: nothing was checked.
	out, _ = p.Invoke(tc, json.RawMessage(`{"path":"a.txt"}`))
	if string(out) != `"no targets"` {
		t.Errorf("a direct call saw targets: %s", out)
	}
}

func TestReplacedArgumentsCarryTheirOwnTargets(t *testing.T) {
	p := newProbe()
	perms := &helikon.Permissions{Policy: helikon.PolicyFunc(func(context.Context, *helikon.Call, *helikon.Targets) (helikon.PolicyDecision, error) {
		return helikon.PolicyReplace(json.RawMessage(`{"path":"safe.txt"}`)), nil
	})}
	out, err := helikon.CallTool(helikon.NewToolContext(context.Background(), struct{}{}, nil), perms, p, json.RawMessage(`{"path":"a.txt"}`))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `"/root/safe.txt"` {
		t.Errorf("the tool saw targets %s, want those of the replacement arguments", out)
	}
}

func TestCheckCallOutcomes(t *testing.T) {
	rc := helikon.NewRunContext(struct{}{}, &helikon.RunConfig{Mode: helikon.ModePlan})
	for _, tc := range []struct {
		name   string
		args   string
		perms  *helikon.Permissions
		kind   helikon.ErrorKind
		stage  helikon.Stage
		inText string
	}{
		{"not JSON", `{"path":`, nil, helikon.KindInvalidArgs, "", helikon.ErrorInvalidJSON},
		{"plan mode refuses a write", `{"path":"a"}`, nil, helikon.KindDenied, helikon.StageMode, "plan mode"},
		{"deny rule", `{"path":"a"}`, &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("probe")}}, helikon.KindDenied, helikon.StageDenyRule, "denied by rule probe"},
		{"allow rule beats plan", `{"path":"a"}`, &helikon.Permissions{Allow: []helikon.Rule{helikon.MustParseRule("probe")}}, "", helikon.StageAllowRule, ""},
		{"blank arguments are the empty object", " \n", &helikon.Permissions{Allow: []helikon.Rule{helikon.MustParseRule("probe")}}, "", helikon.StageAllowRule, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProbe()
			p.invoke = func(*helikon.ToolContext[struct{}], json.RawMessage) (json.RawMessage, error) { return nil, nil }
			checked, d, err := helikon.CheckCall(context.Background(), rc, tc.perms, p, json.RawMessage(tc.args))
			if helikon.KindOf(err) != tc.kind || d.Stage != tc.stage || !strings.Contains(errText(err), tc.inText) {
				t.Fatalf("got kind %q stage %q err %v, want kind %q stage %q containing %q", helikon.KindOf(err), d.Stage, err, tc.kind, tc.stage, tc.inText)
			}
			if err == nil {
				out, err := checked.Invoke(rc.ToolContext(context.Background(), "c1"))
				if err != nil || string(out) != "null" {
					t.Errorf("empty output became %q, %v; want null", out, err)
				}
			}
		})
	}
}

func TestInvokeSortsToolFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		invoke func(*helikon.ToolContext[struct{}], json.RawMessage) (json.RawMessage, error)
		kind   helikon.ErrorKind
		inText string
	}{
		{"panic is other, never a crash", func(*helikon.ToolContext[struct{}], json.RawMessage) (json.RawMessage, error) { panic("boom") }, helikon.KindOther, "bug in the tool"},
		{"output that is not JSON is other", func(*helikon.ToolContext[struct{}], json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage("{oops"), nil
		}, helikon.KindOther, "not valid JSON"},
		{"invalid args get the tool's name", func(*helikon.ToolContext[struct{}], json.RawMessage) (json.RawMessage, error) {
			return nil, helikon.InvalidArgs("x is missing")
		}, helikon.KindInvalidArgs, "for tool probe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProbe()
			p.invoke = tc.invoke
			_, err := helikon.CallTool(helikon.NewToolContext(context.Background(), struct{}{}, nil), nil, p, json.RawMessage(`{"path":"a"}`))
			if helikon.KindOf(err) != tc.kind || !strings.Contains(errText(err), tc.inText) {
				t.Errorf("got %v (kind %q), want kind %q containing %q", err, helikon.KindOf(err), tc.kind, tc.inText)
			}
			var pe *helikon.PanicError
			if errors.As(err, &pe) && len(pe.Stack) == 0 {
				t.Error("a panic's stack was not kept for the log")
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestTargetsDecodedOnlyForTheSameArguments: the decoded value a tool stores
// with its targets comes back for the same argument bytes only, so a tool
// never runs on the decoding of other arguments.
func TestTargetsDecodedOnlyForTheSameArguments(t *testing.T) {
	args := json.RawMessage(`{"path":"a"}`)
	tg := helikon.Targets{Hosts: []string{"example.com"}}.WithDecoded(args, "decoded")
	if v, ok := tg.Decoded(json.RawMessage(`{"path":"a"}`)); !ok || v != "decoded" {
		t.Errorf("same bytes: got %v, %v", v, ok)
	}
	for _, other := range []string{`{"path":"b"}`, `{"path": "a"}`, ``} {
		if v, ok := tg.Decoded(json.RawMessage(other)); ok {
			t.Errorf("%q: got %v for other arguments", other, v)
		}
	}
	empty := helikon.Targets{}.WithDecoded(args, nil)
	if _, ok := empty.Decoded(args); ok {
		t.Error("no value stored, yet one came back")
	}
	var none *helikon.Targets
	if _, ok := none.Decoded(args); ok {
		t.Error("nil targets returned a value")
	}
}
