package toolbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/toolbox"
)

// ExampleNew builds the contained toolset on a directory and calls its
// tools through the permission pipeline: Write and the one Bash command
// are allowed by rules, a Bash command no rule allows is asked about and,
// with no approval handler, denied.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "toolbox")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	tb, err := toolbox.New[struct{}](ctx, &toolbox.Options{
		Root:  dir,
		Allow: helikon.MustParseRules("Write(/notes.txt)", "Bash(=wc -l notes.txt)"),
	})
	if err != nil {
		log.Fatal(err) // no OS sandbox here: the error says what to do
	}
	defer tb.Close()
	for _, c := range []struct{ tool, args string }{
		{"Write", `{"path":"notes.txt","content":"buy milk\ncall mum\n"}`},
		{"Read", `{"path":"notes.txt"}`},
		{"Bash", `{"command":"wc -l notes.txt"}`},
		{"Bash", `{"command":"rm notes.txt"}`},
	} {
		out, err := tb.Call(ctx, struct{}{}, c.tool, json.RawMessage(c.args))
		if err != nil {
			fmt.Printf("%s: %s\n", c.tool, helikon.KindOf(err))
			continue
		}
		var res struct {
			Content *string `json:"content"`
			Stdout  *string `json:"stdout"`
			Created *bool   `json:"created"`
		}
		json.Unmarshal(out, &res)
		switch {
		case res.Content != nil:
			fmt.Printf("%s: %q\n", c.tool, *res.Content)
		case res.Stdout != nil:
			fmt.Printf("%s: %q\n", c.tool, *res.Stdout)
		default:
			fmt.Printf("%s: created %v\n", c.tool, *res.Created)
		}
	}
	// Output:
	// Write: created true
	// Read: "buy milk\ncall mum\n"
	// Bash: "2 notes.txt\n"
	// Bash: denied
}

// ExampleApprover adds "always" to a way of asking a person: here a
// function that answers Always to every question. The rule it adds allows
// exactly the command approved, so the second identical call is not asked
// about, and a different command is asked again.
func ExampleApprover() {
	asked := 0
	a := &toolbox.Approver{Ask: func(_ context.Context, req *helikon.ApprovalRequest, offer []helikon.Rule) (toolbox.Answer, error) {
		asked++
		fmt.Printf("asked about %s, offering %v\n", req.Tool, offer)
		return toolbox.Always, nil
	}}
	touch := func(args ...string) *helikon.ApprovalRequest {
		return &helikon.ApprovalRequest{Tool: "Bash", Targets: &helikon.Targets{Commands: []helikon.Command{{Args: args}}}}
	}
	for _, req := range []*helikon.ApprovalRequest{touch("touch", "a"), touch("touch", "a"), touch("touch", "b")} {
		ok, _ := a.Approve(context.Background(), req)
		fmt.Println(ok)
	}
	fmt.Println("questions:", asked)
	// Output:
	// asked about Bash, offering [Bash(=touch a)]
	// true
	// true
	// asked about Bash, offering [Bash(=touch b)]
	// true
	// questions: 2
}

// ExampleAlwaysRules shows the narrowest rules an "always" answer can add,
// and the calls for which none can be written.
func ExampleAlwaysRules() {
	bash := func(args ...string) *helikon.ApprovalRequest {
		return &helikon.ApprovalRequest{Tool: "Bash", Targets: &helikon.Targets{Commands: []helikon.Command{{Args: args}}}}
	}
	fmt.Println(toolbox.AlwaysRules(bash("go", "test", "./...")))
	fmt.Println(toolbox.AlwaysRules(bash("python3", "x.py"))) // runs code its words do not show
	fmt.Println(toolbox.AlwaysRules(&helikon.ApprovalRequest{Tool: "Edit", Targets: &helikon.Targets{Paths: []helikon.PathTarget{{Path: "/w/src/a.go", Root: "/w", Access: helikon.AccessWrite}}}}))
	// Output:
	// [Bash(=go test ./...)]
	// []
	// [Edit(/src/a.go)]
}
