package helikon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/toolbox"
)

// Example_contained builds the contained toolset on a directory (package
// toolbox: the file tools confined to it, Bash in the OS sandbox on it) and
// calls its tools through the permission pipeline: allow rules let the
// write and one command through; a command no rule allows is asked about
// and, with no approval handler, denied.
func Example_contained() {
	dir, _ := os.MkdirTemp("", "helikon")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	tb, err := toolbox.New[struct{}](ctx, &toolbox.Options{
		Root:  dir,
		Allow: helikon.MustParseRules("Write(/hello.txt)", "Bash(=cat hello.txt)"),
	})
	if err != nil {
		log.Fatal(err) // no OS sandbox here: the error says what to do
	}
	defer tb.Close()
	for _, c := range [][2]string{
		{"Write", `{"path":"hello.txt","content":"hello\n"}`},
		{"Read", `{"path":"hello.txt"}`},
		{"Bash", `{"command":"cat hello.txt"}`},
		{"Bash", `{"command":"rm hello.txt"}`},
	} {
		out, err := tb.Call(ctx, struct{}{}, c[0], json.RawMessage(c[1]))
		if err != nil {
			fmt.Printf("%s: %s\n", c[0], helikon.KindOf(err))
			continue
		}
		var res struct{ Content, Stdout string }
		json.Unmarshal(out, &res)
		fmt.Printf("%s: ok %q\n", c[0], res.Content+res.Stdout)
	}
	// Output:
	// Write: ok ""
	// Read: ok "hello\n"
	// Bash: ok "hello\n"
	// Bash: denied
}

func ExamplePermissions() {
	perms := &helikon.Permissions{
		Deny:  []helikon.Rule{helikon.MustParseRule("Bash(rm)")},
		Allow: []helikon.Rule{helikon.MustParseRule("Bash(git)")},
	}
	// A Bash tool reports the commands a call would run through Targeter;
	// here a fixed list stands in for it.
	run := func(argv ...string) helikon.Targeter {
		return targeterFunc(func(json.RawMessage) (helikon.Targets, error) {
			return helikon.Targets{Commands: []helikon.Command{{Args: argv}}}, nil
		})
	}
	for _, c := range []helikon.Call{
		{Tool: "Bash", Mode: helikon.ModeDontAsk, Targeter: run("git", "status")},
		{Tool: "Bash", Mode: helikon.ModeBypass, Targeter: run("/bin/rm", "-r", "build")},
		{Tool: "Write", Effect: helikon.EffectWrite, Mode: helikon.ModePlan},
	} {
		d := perms.Check(context.Background(), c)
		fmt.Printf("%v at %s: %s\n", d.Allowed, d.Stage, d.Reason)
	}
	// Output:
	// true at allow_rule: allowed by rule Bash(git)
	// false at deny_rule: Bash is denied by rule Bash(rm)
	// false at mode: Write is not permitted in plan mode: only read-only tools may run, and Write has effect write; describe the change instead of making it
}

func ExampleNewToolset() {
	_, err := helikon.NewToolset[struct{}](newEcho("search"), newEcho("search"))
	fmt.Println(err)
	// Output:
	// helikon: duplicate tool name "search": every tool in a set needs its own name
}
