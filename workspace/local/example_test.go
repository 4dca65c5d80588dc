package local_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
)

// A session's workspace on a project directory: a file written through
// the file system is there for the next command, and a path that leaves the
// root is refused.
func Example() {
	dir, _ := os.MkdirTemp("", "local-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	b, err := host.New(dir, nil) // or ossandbox.New(dir, nil), contained
	if err != nil {
		fmt.Println(err)
		return
	}
	engine, err := local.New(dir, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	ws, err := engine.Create(ctx, "session-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ws.Close(ctx)

	ws.WriteFile(ctx, "hello.sh", []byte("echo hello from the workspace\n"))
	res, _ := ws.Run(ctx, &backend.Request{Command: "sh hello.sh"})
	fmt.Print(string(res.Stdout))

	_, err = ws.Open(ctx, "../outside.txt")
	fmt.Println(errors.Is(err, workspace.ErrOutside))
	// Output:
	// hello from the workspace
	// true
}
