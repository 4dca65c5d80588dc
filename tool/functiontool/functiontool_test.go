package functiontool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/functiontool"
)

type address struct {
	City string `json:"city" jsonschema:"the city"`
	Zip  string `json:"zip,omitempty"`
}

type orderArgs struct {
	Item     string   `json:"item" jsonschema_description:"what to order"`
	Quantity int      `json:"quantity" description:"how many"`
	Size     string   `json:"size,omitempty" enum:"S,M,L" default:"M"`
	Priority int      `json:"priority,omitempty" enum:"1,2,3"`
	Ship     address  `json:"ship"`
	Note     *string  `json:"note"`
	Tags     []string `json:"tags,omitempty"`
	Gift     *address `json:"gift,omitempty"`
}

type orderOut struct {
	Summary string `json:"summary"`
	Size    string `json:"size" enum:"S,M,L"`
}

func orderTool(t *testing.T, opts *functiontool.Options, fn functiontool.Func[struct{}, orderArgs, orderOut]) *functiontool.Tool[struct{}, orderArgs, orderOut] {
	t.Helper()
	if fn == nil {
		fn = func(_ *helikon.ToolContext[struct{}], in orderArgs) (orderOut, error) {
			return orderOut{Summary: in.Item + " to " + in.Ship.City, Size: in.Size}, nil
		}
	}
	tool, err := functiontool.New("order", "Place an order.", fn, opts)
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

func invoke(tool helikon.Tool[struct{}], args string) (string, error) {
	out, err := tool.Invoke(helikon.NewToolContext(context.Background(), struct{}{}, nil), json.RawMessage(args))
	return string(out), err
}

func TestInferredSchema(t *testing.T) {
	tool := orderTool(t, nil, nil)
	b, err := json.Marshal(tool.Schema())
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		`"item":{"type":"string","description":"what to order"}`,
		`"quantity":{"type":"integer","description":"how many"}`,
		`"enum":["S","M","L"]`, `"default":"M"`, `"enum":[1,2,3]`,
		`"city":{"type":"string","description":"the city"}`,
		`"note":{"type":["null","string"]}`,
		`"required":["item","quantity","ship","note"]`,
		`"additionalProperties":false`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("schema lacks %s:\n%s", want, s)
		}
	}
	if tool.OutputSchema() == nil {
		t.Error("no output schema inferred")
	}
}

func TestValidation(t *testing.T) {
	tool := orderTool(t, nil, nil)
	ok := `"item":"tea","quantity":2,"ship":{"city":"Oslo"},"note":null`
	tests := []struct {
		name     string
		args     string
		problems []string // substrings, one per expected problem
	}{
		{"valid", `{` + ok + `}`, nil},
		{"missing field", `{"item":"tea","ship":{"city":"Oslo"},"note":null}`, []string{`missing required field "quantity" (an integer)`}},
		{"wrong type", `{"item":"tea","quantity":"two","ship":{"city":"Oslo"},"note":null}`, []string{`field "quantity" must be an integer, got string "two"`}},
		{"float for integer", `{"item":"tea","quantity":2.5,"ship":{"city":"Oslo"},"note":null}`, []string{`field "quantity" must be an integer, got number 2.5`}},
		{"unknown field", `{` + ok + `,"colour":"red"}`, []string{`unknown field "colour" (allowed fields: item, quantity, size, priority, ship, note, tags, gift)`}},
		{"enum", `{` + ok + `,"size":"XL"}`, []string{`field "size" must be one of "S", "M", "L", got "XL"`}},
		{"numeric enum", `{` + ok + `,"priority":7}`, []string{`field "priority" must be one of 1, 2, 3, got 7`}},
		{"nested struct", `{"item":"tea","quantity":1,"ship":{"zip":5},"note":null}`, []string{`missing required field "ship.city"`, `field "ship.zip" must be a string, got integer 5`}},
		{"nested unknown", `{"item":"tea","quantity":1,"ship":{"city":"Oslo","planet":"Mars"},"note":null}`, []string{`unknown field "ship.planet"`}},
		{"pointer accepts null and value", `{` + strings.Replace(ok, `"note":null`, `"note":"ring"`, 1) + `}`, nil},
		{"pointer wrong type", `{` + strings.Replace(ok, `"note":null`, `"note":3`, 1) + `}`, []string{`field "note" must be a string or null, got integer 3`}},
		{"slice", `{` + ok + `,"tags":["a",2]}`, []string{`field "tags[1]" must be a string, got integer 2`}},
		{"slice wrong type", `{` + ok + `,"tags":"a"}`, []string{`field "tags" must be an array or null, got string "a"`}},
		{"pointer to struct", `{` + ok + `,"gift":{}}`, []string{`missing required field "gift.city"`}},
		{"all at once", `{"quantity":"x","extra":1}`, []string{`missing required field "item"`, `missing required field "ship"`, `missing required field "note"`, `field "quantity" must be an integer`, `unknown field "extra"`}},
		{"not an object", `[1,2]`, []string{"must be a JSON object, got an array"}},
		{"malformed JSON", `{"item":`, []string{"not valid JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := invoke(tool, tt.args)
			if tt.problems == nil {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			var ia *helikon.InvalidArgsError
			if !errors.As(err, &ia) {
				t.Fatalf("err = %v, want invalid arguments", err)
			}
			if ia.Tool != "order" {
				t.Errorf("tool = %q", ia.Tool)
			}
			if len(ia.Problems) != len(tt.problems) {
				t.Errorf("got %d problems %q, want %d", len(ia.Problems), ia.Problems, len(tt.problems))
			}
			joined := strings.Join(ia.Problems, "\n")
			for _, p := range tt.problems {
				if !strings.Contains(joined, p) {
					t.Errorf("problems lack %q:\n%s", p, joined)
				}
			}
		})
	}
}

func TestDefaultsApplied(t *testing.T) {
	tool := orderTool(t, nil, nil)
	out, err := invoke(tool, `{"item":"tea","quantity":2,"ship":{"city":"Oslo"},"note":null}`)
	if err != nil {
		t.Fatal(err)
	}
	if out != `{"summary":"tea to Oslo","size":"M"}` {
		t.Errorf("out = %s", out)
	}
}

func TestAllowUnknownFields(t *testing.T) {
	tool := orderTool(t, &functiontool.Options{AllowUnknownFields: true}, nil)
	if _, err := invoke(tool, `{"item":"tea","quantity":2,"ship":{"city":"Oslo","x":1},"note":null,"extra":true}`); err != nil {
		t.Fatalf("unknown fields rejected with AllowUnknownFields: %v", err)
	}
}

func TestOutputSchemaViolationIsOtherError(t *testing.T) {
	tool := orderTool(t, nil, func(*helikon.ToolContext[struct{}], orderArgs) (orderOut, error) {
		return orderOut{Summary: "x", Size: "XXL"}, nil
	})
	_, err := invoke(tool, `{"item":"tea","quantity":2,"ship":{"city":"Oslo"},"note":null}`)
	if helikon.KindOf(err) != helikon.KindOther || !strings.Contains(err.Error(), "does not match its output schema") {
		t.Fatalf("err = %v, want an other error about the output schema", err)
	}
	noOut := orderTool(t, &functiontool.Options{NoOutputSchema: true}, func(*helikon.ToolContext[struct{}], orderArgs) (orderOut, error) {
		return orderOut{Summary: "x", Size: "XXL"}, nil
	})
	if _, err := invoke(noOut, `{"item":"tea","quantity":2,"ship":{"city":"Oslo"},"note":null}`); err != nil || noOut.OutputSchema() != nil {
		t.Fatalf("NoOutputSchema: %v", err)
	}
}

func TestFunctionErrorsKeepTheirKind(t *testing.T) {
	for _, tt := range []struct {
		err  error
		kind helikon.ErrorKind
	}{
		{helikon.Denied("no"), helikon.KindDenied},
		{helikon.InvalidArgs("quantity must be positive"), helikon.KindInvalidArgs},
		{errors.New("disk full"), helikon.KindOther},
	} {
		tool := orderTool(t, nil, func(*helikon.ToolContext[struct{}], orderArgs) (orderOut, error) { return orderOut{}, tt.err })
		_, err := invoke(tool, `{"item":"tea","quantity":2,"ship":{"city":"Oslo"},"note":null}`)
		if helikon.KindOf(err) != tt.kind {
			t.Errorf("%v: kind %s, want %s", tt.err, helikon.KindOf(err), tt.kind)
		}
	}
}

func TestBuildTimeErrors(t *testing.T) {
	noop := func(*helikon.ToolContext[struct{}], int) (int, error) { return 0, nil }
	if _, err := functiontool.New("n", "d", noop, nil); err == nil || !strings.Contains(err.Error(), "must be a struct") {
		t.Errorf("non-struct input: %v", err)
	}
	ok := func(*helikon.ToolContext[struct{}], orderArgs) (orderOut, error) { return orderOut{}, nil }
	if _, err := functiontool.New("bad name!", "d", ok, nil); err == nil {
		t.Error("invalid name accepted")
	}
	type badEnum struct {
		N int `json:"n" enum:"one"`
	}
	if _, err := functiontool.New("e", "d", func(*helikon.ToolContext[struct{}], badEnum) (orderOut, error) { return orderOut{}, nil }, nil); err == nil {
		t.Error("non-numeric enum on an int field accepted")
	}
	type withChan struct {
		C chan int `json:"c"`
	}
	if _, err := functiontool.New("c", "d", func(*helikon.ToolContext[struct{}], withChan) (orderOut, error) { return orderOut{}, nil }, nil); err == nil {
		t.Error("channel field accepted")
	}
	if _, err := functiontool.New[struct{}, orderArgs, orderOut]("f", "d", nil, nil); err == nil {
		t.Error("nil function accepted")
	}
}

func TestPointerInput(t *testing.T) {
	tool, err := functiontool.New("p", "d", func(_ *helikon.ToolContext[struct{}], in *address) (address, error) { return *in, nil }, nil)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := invoke(tool, `{"city":"Rome"}`); err != nil || out != `{"city":"Rome"}` {
		t.Fatalf("%s %v", out, err)
	}
	if _, err := invoke(tool, `null`); helikon.KindOf(err) != helikon.KindInvalidArgs {
		t.Fatalf("null args to a struct with required fields: %v", err)
	}
}
