package helikon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/model"
)

// greetTool is a hand-written tool. ToolInfo supplies the descriptive methods;
// the tool adds Invoke, and Targets so that rules such as
// Greet(//home/root) can see the path a call would touch. (Package functiontool builds tools like this
// from a typed function, schema included.)
type greetTool struct {
	helikon.ToolInfo
}

func (greetTool) Invoke(tc *helikon.ToolContext[string], args json.RawMessage) (json.RawMessage, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(args, &in); err != nil || in.Name == "" {
		return nil, helikon.InvalidArgs(`"name" must be a non-empty string`)
	}
	if strings.EqualFold(in.Name, "root") {
		return nil, helikon.Denied("greeting %s is not allowed; greet a person instead", in.Name)
	}
	// tc is a context.Context and carries the application context.
	return json.Marshal(tc.App() + ", " + in.Name + "!")
}

func (greetTool) Targets(args json.RawMessage) (helikon.Targets, error) {
	var in struct {
		Name string `json:"name"`
	}
	err := json.Unmarshal(args, &in)
	return helikon.Targets{Paths: []helikon.PathTarget{{Path: "/home/" + in.Name, Access: helikon.AccessRead}}}, err
}

// A tool implements helikon.Tool and reports failures as one of the three
// tool errors, which a runner turns into a result the model can act on.
// Callers run it through the pipeline with CallTool, never Invoke alone.
func ExampleTool() {
	greet := greetTool{helikon.ToolInfo{
		ToolName:        "Greet",
		ToolDescription: "Greets a person by name.",
		InputSchema: &jsonschema.Schema{Type: "object", Required: []string{"name"},
			Properties: map[string]*jsonschema.Schema{"name": {Type: "string"}}},
		ToolEffect: helikon.EffectReadOnly,
	}}
	tools, err := helikon.NewToolset[string](greet)
	if err != nil {
		panic(err)
	}
	tool, _ := tools.Lookup("Greet")
	fmt.Println(tool.Name(), helikon.EffectOf(tool))

	// Every call goes through the pipeline: the JSON check, the permission
	// rules (which see the call's targets before it runs), then the tool.
	perms := &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("Greet(//home/eve)")}}
	tc := helikon.NewToolContext(context.Background(), "Hello", nil)
	for _, args := range []string{`{"name":"Ada"}`, `{}`, `{"name":"root"}`, `{"name":"eve"}`} {
		call := model.ToolCall{ID: "c1", Name: "Greet", Args: json.RawMessage(args)}
		out, err := helikon.CallTool(tc, perms, tool, call.Args)
		res := model.ToolResultFor(call, out, err)
		fmt.Printf("%s %q\n", helikon.KindOf(err), res.Content)
	}
	// Output:
	// Greet read_only
	//  "\"Hello, Ada!\""
	// invalid_args "invalid arguments for tool Greet: \"name\" must be a non-empty string. Fix the arguments to match the tool's schema and call Greet again."
	// denied "denied: greeting root is not allowed; greet a person instead. Do not retry the same call; choose another way or ask the user."
	// denied "denied: Greet is denied by rule Greet(//home/eve). Do not retry the same call; choose another way or ask the user."
}
