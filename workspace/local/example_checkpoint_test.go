package local_test

import (
	"context"
	"fmt"
	"os"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
)

// A checkpoint before a destructive command, the diff, and the undo.
func ExampleWorkspace_Checkpoint() {
	dir, _ := os.MkdirTemp("", "local-example")
	defer os.RemoveAll(dir)
	store, _ := os.MkdirTemp("", "local-example-checkpoints") // default: under $XDG_STATE_HOME
	defer os.RemoveAll(store)
	ctx := context.Background()

	b, _ := host.New(dir, nil)
	engine, err := local.NewWithOptions(dir, b, &local.Options{Checkpoints: local.CheckpointOptions{Dir: store}})
	if err != nil {
		fmt.Println(err)
		return
	}
	ws, _ := engine.Create(ctx, "example")
	defer ws.Close(ctx)
	ws.WriteFile(ctx, "notes.txt", []byte("keep me\n"))

	cp := ws.(workspace.Checkpointer) // discovered by type assertion
	before, err := cp.Checkpoint(ctx, "before the command")
	if err != nil {
		fmt.Println(err)
		return
	}
	ws.Run(ctx, &backend.Request{Command: "rm notes.txt && echo oops > new.txt"})

	changes, _ := cp.Diff(ctx, before.ID, "")
	for _, c := range changes {
		fmt.Println(c.Kind, c.Path)
	}
	if err := cp.Restore(ctx, before.ID); err != nil {
		fmt.Println(err)
		return
	}
	data, _ := os.ReadFile(dir + "/notes.txt")
	fmt.Print(string(data))
	// Output:
	// added new.txt
	// deleted notes.txt
	// keep me
}
