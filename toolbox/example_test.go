package toolbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/toolbox"
)

// ExampleNew builds the contained toolset on a directory (Bash in the OS
// sandbox) and calls its tools through the permission pipeline: the
// accept-edits mode lets the file change through, the first command is
// asked about and answered "always", which allows exactly that command
// from then on, and the deny rule stops rm before anyone is asked.
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "toolbox")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	tb, err := toolbox.New[struct{}](ctx, &toolbox.Options{
		Root: dir,
		Mode: helikon.ModeAcceptEdits,
		Deny: helikon.MustParseRules("Bash(rm)"),
		Approver: &toolbox.Approver{Ask: func(_ context.Context, _ *helikon.ApprovalRequest, offer []helikon.Rule) (toolbox.Answer, error) {
			fmt.Println("asked, offering", offer)
			return toolbox.Always, nil
		}},
	})
	if err != nil {
		log.Fatal(err) // no OS sandbox here: the error says what to do
	}
	defer tb.Close()
	call := func(tool, args string) {
		if _, err := tb.Call(ctx, struct{}{}, tool, json.RawMessage(args)); err != nil {
			fmt.Println(tool, helikon.KindOf(err))
			return
		}
		fmt.Println(tool, "ok")
	}
	call("Write", `{"path":"a.txt","content":"x"}`)
	call("Bash", `{"command":"ls"}`)
	call("Bash", `{"command":"ls"}`)
	call("Bash", `{"command":"rm a.txt"}`)
	// Output:
	// Write ok
	// asked, offering [Bash(=ls)]
	// Bash ok
	// Bash ok
	// Bash denied
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

// ExampleResume hands a question to the application instead of asking
// through an approval handler: the call ends with an *AskError, the
// application asks the person when it likes (here, an agent framework's
// interrupt would), and makes the same call again with the answer.
func ExampleResume() {
	dir, _ := os.MkdirTemp("", "toolbox")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	tb, err := toolbox.New[struct{}](ctx, &toolbox.Options{Root: dir, Uncontained: true, DeferAsks: true})
	if err != nil {
		log.Fatal(err)
	}
	defer tb.Close()
	args := json.RawMessage(`{"path":"a.txt","content":"x"}`)
	_, err = tb.Call(ctx, struct{}{}, "Write", args)
	var ask *toolbox.AskError
	if errors.As(err, &ask) {
		fmt.Println("asked about", ask.Request.Tool, "offering", ask.Offer)
		_, err = tb.Call(toolbox.Resume(ctx, ask.Request, toolbox.Yes), struct{}{}, "Write", args)
	}
	fmt.Println("resumed:", err)
	// Output:
	// asked about Write offering [Write(/a.txt)]
	// resumed: <nil>
}
