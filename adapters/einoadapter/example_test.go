package einoadapter_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/cloudwego/eino/adk"
	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/toolbox"
)

// Example runs eino's Runner and ChatModelAgent with helikon's file system
// and shell and a scripted model (no key): the deny rule stops rm, the
// write_file lands (accept-edits mode), and the touch is asked about: the
// run ends interrupted, the application asks the person (here: yes) and
// resumes that interrupt with the answer; the command then runs in the OS
// sandbox.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "einoadapter")
	defer os.RemoveAll(dir)
	tb, err := toolbox.New[struct{}](ctx, &toolbox.Options{
		Root: dir, DeferAsks: true, Mode: helikon.ModeAcceptEdits, Deny: helikon.MustParseRules("Bash(rm)"),
	})
	if err != nil {
		log.Fatal(err) // no OS sandbox here: the error says what to do
	}
	defer tb.Close()
	r, err := newRunner(tb, []call{
		{"execute", `{"command":"rm -r /"}`},
		{"write_file", `{"file_path":"/notes.txt","content":"hello"}`},
		{"execute", `{"command":"touch done.txt"}`},
	})
	if err != nil {
		log.Fatal(err)
	}
	_, ints, err := drain(r.Query(ctx, "tidy up", adk.WithCheckPointID("session-1")))
	if err != nil {
		log.Fatal(err)
	}
	answers := map[string]any{}
	for _, ic := range ints {
		q := ic.Info.(*toolbox.Question)
		fmt.Printf("asked: %s %s\n", q.Tool, q.Args)
		answers[ic.ID] = toolbox.Yes
	}
	it, err := r.ResumeWithParams(ctx, "session-1", &adk.ResumeParams{Targets: answers})
	if err != nil {
		log.Fatal(err)
	}
	text, _, err := drain(it)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(text)
	_, err = os.Stat(filepath.Join(dir, "done.txt"))
	fmt.Println("done.txt exists:", err == nil)
	// Output:
	// asked: Bash {"command":"touch done.txt"}
	// 0 execute: error: denied: Bash is denied by rule Bash(rm)
	// 1 write_file: Updated file /notes.txt
	// 2 execute: [Command executed successfully with no output]
	// done.txt exists: true
}
