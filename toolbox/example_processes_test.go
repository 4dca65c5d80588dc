package toolbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/toolbox"
)

// ExampleOptions_processes starts a shell in the background, types a line
// into it and reads what it printed; the deny rule of rm holds for what is
// typed into the shell. (A Bash(rm) rule would deny typing rm as well, but
// also the start of the shell itself: the analysis of Bash commands cannot
// see what a shell will read from its input, see docs/design.md.)
func ExampleOptions_processes() {
	dir, _ := os.MkdirTemp("", "toolbox")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	tb, err := toolbox.New[struct{}](ctx, &toolbox.Options{
		Root:        dir,
		Uncontained: true, // the OS sandbox runs processes too; the host keeps the example portable
		Processes:   &process.Options{MaxProcesses: 2},
		Allow:       helikon.MustParseRules("Bash", "BashOutput", "KillShell"),
		Deny:        helikon.MustParseRules("BashInput(rm)"),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer tb.Close()
	call := func(tool string, args any) map[string]any {
		a, _ := json.Marshal(args)
		out, err := tb.Call(ctx, struct{}{}, tool, a)
		if err != nil {
			fmt.Println(tool, helikon.KindOf(err))
			return nil
		}
		var m map[string]any
		_ = json.Unmarshal(out, &m)
		return m
	}
	id := call("Bash", map[string]any{"command": "bash", "run_in_background": true})["shell_id"]
	call("BashInput", map[string]any{"shell_id": id, "input": "rm -rf .\n"})
	call("BashInput", map[string]any{"shell_id": id, "input": "echo hello\n"})
	var got string
	for !strings.Contains(got, "hello") {
		got += call("BashOutput", map[string]any{"bash_id": id, "wait_ms": 1000})["output"].(string)
	}
	fmt.Print(got)
	fmt.Println(call("KillShell", map[string]any{"shell_id": id})["status"])
	// Output:
	// BashInput denied
	// hello
	// killed
}
