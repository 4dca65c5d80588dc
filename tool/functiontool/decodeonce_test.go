package functiontool_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/functiontool"
)

// countedString decodes like a string and counts its decodings in the
// counter of the test that uses it.
type countedString string

var decodes atomic.Int64

func (c *countedString) UnmarshalJSON(b []byte) error {
	decodes.Add(1)
	var s string
	err := json.Unmarshal(b, &s)
	*c = countedString(s)
	return err
}

type pathArgs struct {
	Path countedString `json:"path"`
}

// pathTool reports its path as a target from the decoded arguments, as the
// Bash and file tools do.
type pathTool struct {
	*functiontool.Tool[struct{}, pathArgs, string]
	got []string // the paths the function was called with
}

func newPathTool(t *testing.T) *pathTool {
	t.Helper()
	pt := &pathTool{}
	ft, err := functiontool.New("Touch", "Touch a path.", func(_ *helikon.ToolContext[struct{}], in pathArgs) (string, error) {
		pt.got = append(pt.got, string(in.Path))
		return string(in.Path), nil
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pt.Tool = ft
	return pt
}

func (pt *pathTool) Targets(args json.RawMessage) (helikon.Targets, error) {
	return pt.DecodeTargets(args, func(in pathArgs) helikon.Targets {
		return helikon.Targets{Paths: []helikon.PathTarget{{Path: "/w/" + string(in.Path), Access: helikon.AccessWrite}}}
	})
}

// TestCheckedCallDecodesOnce: a call that comes through the pipeline is
// validated and decoded once, by the Targets step, and the function runs on
// that value. It fails if Invoke decodes the arguments a second time.
func TestCheckedCallDecodesOnce(t *testing.T) {
	pt := newPathTool(t)
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	decodes.Store(0)
	out, err := helikon.CallTool(tc, nil, pt, json.RawMessage(`{"path":"a.txt"}`))
	if err != nil || string(out) != `"a.txt"` {
		t.Fatalf("got %s, %v", out, err)
	}
	if n := decodes.Load(); n != 1 {
		t.Errorf("the arguments were decoded %d times, want once", n)
	}

	// Invoked directly (no targets), the tool decodes them itself.
	decodes.Store(0)
	if _, err := pt.Invoke(tc, json.RawMessage(`{"path":"b.txt"}`)); err != nil {
		t.Fatal(err)
	}
	if n := decodes.Load(); n != 1 {
		t.Errorf("a direct call decoded %d times, want once", n)
	}
}

// TestReplacedArgumentsAreTheOnesRun: when the policy replaces the
// arguments, the targets (and the decoded value) are those of the
// replacement, and the function runs on the replacement.
func TestReplacedArgumentsAreTheOnesRun(t *testing.T) {
	pt := newPathTool(t)
	perms := &helikon.Permissions{Policy: helikon.PolicyFunc(func(context.Context, *helikon.Call, *helikon.Targets) (helikon.PolicyDecision, error) {
		return helikon.PolicyDecision{Behavior: helikon.BehaviorReplace, Args: json.RawMessage(`{"path":"safe.txt"}`)}, nil
	})}
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	decodes.Store(0)
	if _, err := helikon.CallTool(tc, perms, pt, json.RawMessage(`{"path":"a.txt"}`)); err != nil {
		t.Fatal(err)
	}
	if want := []string{"safe.txt"}; !reflect.DeepEqual(pt.got, want) {
		t.Errorf("the function ran with %q, want %q", pt.got, want)
	}
	if n := decodes.Load(); n != 2 {
		t.Errorf("decoded %d times, want twice (the call's arguments and the replacement, each once)", n)
	}
}

// TestInvalidArgumentsSameErrorChecked: arguments that fail validation give
// the same error through the pipeline (where the Targets step fails first)
// as when the tool is invoked directly.
func TestInvalidArgumentsSameErrorChecked(t *testing.T) {
	pt := newPathTool(t)
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	for _, args := range []string{`{}`, `{"path":1}`, `{"path":"a","x":1}`, `[]`, `null`, ``} {
		_, direct := pt.Invoke(tc, json.RawMessage(args))
		_, checked := helikon.CallTool(tc, nil, pt, json.RawMessage(args))
		var d, c *helikon.InvalidArgsError
		if !errors.As(direct, &d) || !errors.As(checked, &c) {
			t.Fatalf("%s: direct %v, checked %v; want invalid arguments both", args, direct, checked)
		}
		if !reflect.DeepEqual(d, c) {
			t.Errorf("%s: direct %+v, checked %+v", args, d, c)
		}
	}
}

// wrongTool reports targets through one function tool and runs another of
// the same types: the second must not take the first's decoded value, since
// its schema may differ.
type wrongTool struct {
	*pathTool
	other *pathTool
}

func (w wrongTool) Invoke(tc *helikon.ToolContext[struct{}], args json.RawMessage) (json.RawMessage, error) {
	return w.other.Invoke(tc, args)
}

func TestDecodedValueStaysWithItsTool(t *testing.T) {
	w := wrongTool{pathTool: newPathTool(t), other: newPathTool(t)}
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	decodes.Store(0)
	if _, err := helikon.CallTool(tc, nil, w, json.RawMessage(`{"path":"a.txt"}`)); err != nil {
		t.Fatal(err)
	}
	if n := decodes.Load(); n != 2 {
		t.Errorf("decoded %d times, want twice: the other tool decodes for itself", n)
	}
}
