package backend_test

import (
	"context"
	"fmt"
	"os"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/workspace/fsroot"
)

// Code that runs commands depends on the Backend interface and checks the
// containment it needs through Guarantees before it runs anything. Here the
// host backend (no containment) is refused for a task that needs the
// filesystem confined, and used for one that does not.
func ExampleBackend() {
	dir, _ := os.MkdirTemp("", "backend-example")
	defer os.RemoveAll(dir)
	sb, err := fsroot.Open(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sb.Close()
	var b backend.Backend
	b, err = host.New(sb.Dir(), nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	g := b.Guarantees()
	fmt.Println(g.Label, g.Filesystem, g.Network, g.Syscalls)

	run := func(needConfinedFS bool, argv ...string) {
		if needConfinedFS && g.Filesystem == backend.IsolationNone {
			fmt.Printf("refusing %q: %s does not confine the filesystem\n", argv, g.Label)
			return
		}
		res, err := b.Run(context.Background(), &backend.Request{Argv: argv})
		if err != nil {
			fmt.Println(err)
			return
		}
		// A non-zero exit is a result, not an error.
		fmt.Printf("%q exit %d stdout %q\n", argv, *res.ExitCode, res.Stdout)
	}
	run(true, "sh", "-c", "cat ~/.ssh/id_ed25519")
	run(false, "sh", "-c", "echo checked; exit 3")
	// Output:
	// host (no containment) none none none
	// refusing ["sh" "-c" "cat ~/.ssh/id_ed25519"]: host (no containment) does not confine the filesystem
	// ["sh" "-c" "echo checked; exit 3"] exit 3 stdout "checked\n"
}
