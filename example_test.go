package helikon_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/paigasus/helikon"
)

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
