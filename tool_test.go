package helikon_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
)

// echoTool is a hand-written tool that embeds ToolInfo.
type echoTool struct {
	helikon.ToolInfo
}

func (echoTool) Invoke(_ *helikon.ToolContext[struct{}], args json.RawMessage) (json.RawMessage, error) {
	return args, nil
}

func newEcho(name string) echoTool {
	return echoTool{helikon.ToolInfo{ToolName: name, ToolDescription: "echo", InputSchema: &jsonschema.Schema{Type: "object"}}}
}

func TestToolsetRejectsDuplicatesAndBadNames(t *testing.T) {
	if _, err := helikon.NewToolset[struct{}](newEcho("a"), newEcho("b")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		tools []helikon.Tool[struct{}]
		want  string
	}{
		{"duplicate", []helikon.Tool[struct{}]{newEcho("a"), newEcho("a")}, "duplicate tool name \"a\""},
		{"bad name", []helikon.Tool[struct{}]{newEcho("a b")}, "invalid tool name"},
		{"empty name", []helikon.Tool[struct{}]{newEcho("")}, "invalid tool name"},
		{"too long", []helikon.Tool[struct{}]{newEcho(strings.Repeat("x", 65))}, "invalid tool name"},
		{"nil", []helikon.Tool[struct{}]{nil}, "nil"},
		{"no schema", []helikon.Tool[struct{}]{echoTool{helikon.ToolInfo{ToolName: "x"}}}, "no argument schema"},
	}
	for _, tt := range tests {
		_, err := helikon.NewToolset(tt.tools...)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err=%v, want containing %q", tt.name, err, tt.want)
		}
	}
	if err := helikon.ValidateToolName(strings.Repeat("x", 64)); err != nil {
		t.Errorf("64-character name rejected: %v", err)
	}
}

func TestToolsetLookup(t *testing.T) {
	s := helikon.MustToolset[struct{}](newEcho("b"), newEcho("a"))
	if got := s.Names(); fmt.Sprint(got) != "[b a]" {
		t.Errorf("Names() = %v", got)
	}
	if _, ok := s.Lookup("a"); !ok {
		t.Error("lookup a failed")
	}
	if _, ok := s.Lookup("c"); ok {
		t.Error("lookup c succeeded")
	}
	var nilSet *helikon.Toolset[struct{}]
	if _, ok := nilSet.Lookup("a"); ok || nilSet.Len() != 0 {
		t.Error("nil toolset not empty")
	}
}

func TestEffectDefaultsToSideEffect(t *testing.T) {
	var bare struct{ helikon.Tool[struct{}] }
	if got := helikon.EffectOf(bare); got != helikon.EffectSideEffect {
		t.Errorf("undeclared effect = %s", got)
	}
	e := newEcho("x")
	e.ToolEffect = helikon.EffectReadOnly
	if got := helikon.EffectOf(&e); got != helikon.EffectReadOnly {
		t.Errorf("declared effect = %s", got)
	}
	if helikon.OutputSchemaOf(bare) != nil {
		t.Error("output schema of a tool without one")
	}
}

func TestToolErrors(t *testing.T) {
	inv := helikon.InvalidArgs("field \"a\" is missing")
	den := helikon.Denied("path %s is outside the sandbox", "/etc/passwd")
	oth := helikon.Other(io.ErrUnexpectedEOF)
	wrapped := fmt.Errorf("calling: %w", den)
	tests := []struct {
		err  error
		kind helikon.ErrorKind
	}{
		{inv, helikon.KindInvalidArgs},
		{den, helikon.KindDenied},
		{wrapped, helikon.KindDenied},
		{oth, helikon.KindOther},
		{errors.New("plain"), helikon.KindOther},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := helikon.KindOf(tt.err); got != tt.kind {
			t.Errorf("KindOf(%v) = %q, want %q", tt.err, got, tt.kind)
		}
	}
	if !errors.Is(oth, io.ErrUnexpectedEOF) {
		t.Error("Other does not unwrap")
	}
	var de *helikon.DeniedError
	if !errors.As(wrapped, &de) || de.Reason != "path /etc/passwd is outside the sandbox" {
		t.Errorf("errors.As denied: %+v", de)
	}
	if helikon.Other(den) != den || helikon.Other(nil) != nil {
		t.Error("Other re-wrapped a tool error or a nil")
	}
	if got := helikon.SchemaErrors(fmt.Errorf("x: %w", inv)); len(got) != 1 {
		t.Errorf("SchemaErrors = %v", got)
	}
	if !errors.Is(inv, helikon.ErrInvalidArgs) || errors.Is(inv, helikon.ErrDenied) {
		t.Error("sentinel matching")
	}
}

func TestStateIncrementIfBelowIsAtomic(t *testing.T) {
	var s helikon.State // the zero value is usable
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 200 {
		wg.Go(func() {
			if _, ok, err := s.IncrementIfBelow("fetches", 50); err == nil && ok {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if granted != 50 {
		t.Errorf("granted %d increments, want 50", granted)
	}
	s.Set("x", "str")
	if _, _, err := s.IncrementIfBelow("x", 5); err == nil {
		t.Error("incremented a string")
	}
	s.Restore(map[string]any{"fetches": float64(3)}) // as decoded from JSON
	if n, ok, _ := s.IncrementIfBelow("fetches", 5); !ok || n != 4 {
		t.Errorf("restored counter: %d %v", n, ok)
	}
}

func TestToolContextView(t *testing.T) {
	type app struct{ user string }
	ctx, cancel := context.WithCancel(context.Background())
	rc := helikon.NewRunContext(app{"ann"}, &helikon.RunConfig{Mode: helikon.ModePlan, MaxAgentDepth: 2})
	tc := rc.ToolContext(ctx, "call_1")
	if tc.App().user != "ann" || tc.PermissionMode() != helikon.ModePlan || tc.CallID() != "call_1" || tc.MaxAgentDepth() != 2 {
		t.Fatalf("tool context view wrong: %+v", tc)
	}
	tc.State().Set("k", 1)
	if v, _ := rc.State().Get("k"); v != 1 {
		t.Error("state not shared with the run")
	}
	sub, _ := rc.SubAgent()
	sub.ToolContext(ctx, "").Actions().Escalate()
	if !rc.Actions().Escalated() {
		t.Error("escalation from a sub-agent not seen by the run")
	}
	sub2, err := sub.SubAgent()
	if err != nil || sub2.AgentDepth() != 2 {
		t.Fatalf("depth 2: %v", err)
	}
	if _, err := sub2.SubAgent(); !errors.Is(err, helikon.ErrMaxAgentDepth) {
		t.Errorf("depth 3 with max 2: %v", err)
	}
	cancel()
	if tc.Err() == nil {
		t.Error("tool context does not carry cancellation")
	}
}

func TestValidateToolName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"a", true}, {"_", true}, {"Read", true}, {"mcp_tool-1", true}, {"A9-_z", true}, {strings.Repeat("x", 64), true},
		{"", false}, {"9a", false}, {"-a", false}, {"a b", false}, {"a.b", false}, {"é", false}, {strings.Repeat("x", 65), false},
	} {
		if err := helikon.ValidateToolName(tt.name); (err == nil) != tt.ok {
			t.Errorf("ValidateToolName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}
