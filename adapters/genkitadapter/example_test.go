package genkitadapter_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/adapters/genkitadapter"
	"github.com/paigasus/helikon/toolbox"
)

// Example runs Genkit's generate loop with helikon's tools and a scripted
// model (no key): the deny rule stops rm, the Write lands (accept-edits
// mode), and the touch is asked about: the generation ends interrupted, the
// application asks the person (here: yes) and restarts the tool request
// with the answer; the command then runs in the OS sandbox.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "genkitadapter")
	defer os.RemoveAll(dir)
	tb, err := toolbox.New[struct{}](ctx, &toolbox.Options{
		Root: dir, DeferAsks: true, Mode: helikon.ModeAcceptEdits, Deny: helikon.MustParseRules("Bash(rm)"),
	})
	if err != nil {
		log.Fatal(err) // no OS sandbox here: the error says what to do
	}
	defer tb.Close()
	ts, err := genkitadapter.New(tb)
	if err != nil {
		log.Fatal(err)
	}
	g := genkit.Init(ctx)
	model := defineScripted(g, []call{
		{"Bash", `{"command":"rm -r /"}`},
		{"Write", `{"path":"notes.txt","content":"hello"}`},
		{"Bash", `{"command":"touch done.txt"}`},
	})
	tools := ai.WithTools(ts.Tools()...)
	resp, err := genkit.Generate(ctx, g, ai.WithModel(model), ai.WithPrompt("tidy up"), tools)
	if err != nil {
		log.Fatal(err)
	}
	var restarts []*ai.Part
	for _, p := range resp.Interrupts() {
		q, _ := ai.InterruptAs[toolbox.Question](p)
		fmt.Printf("asked: %s %s\n", q.Tool, q.Args)
		part, err := ts.Answer(p, toolbox.Yes)
		if err != nil {
			log.Fatal(err)
		}
		restarts = append(restarts, part)
	}
	resp, err = genkit.Generate(ctx, g, ai.WithModel(model), ai.WithMessages(resp.History()...), tools, ai.WithToolRestarts(restarts...))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Text())
	_, err = os.Stat(filepath.Join(dir, "done.txt"))
	fmt.Println("done.txt exists:", err == nil)
	// Output:
	// asked: Bash {"command":"touch done.txt"}
	// 0 Bash: {"error":"denied: Bash is denied by rule Bash(rm)","kind":"denied"}
	// 1 Write: {"bytes_written":5,"created":true,"path":"notes.txt"}
	// 2 Bash: {"exit_code":0,"stderr":"","stdout":"","timed_out":false,"truncated":false}
	// done.txt exists: true
}
