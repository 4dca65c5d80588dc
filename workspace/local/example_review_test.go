package local_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/workspace/local"
)

// A review: the agent's workspace is built on the review's copy, its
// command changes the copy only, and the user applies what it did.
func ExampleStartReview() {
	project, _ := os.MkdirTemp("", "local-example-project")
	defer os.RemoveAll(project)
	store, _ := os.MkdirTemp("", "local-example-reviews") // default: under $XDG_STATE_HOME
	defer os.RemoveAll(store)
	os.WriteFile(filepath.Join(project, "notes.txt"), []byte("keep me\n"), 0o644)
	ctx := context.Background()

	review, err := local.StartReview(ctx, project, &local.ReviewOptions{Dir: store})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer review.Close()
	b, _ := host.New(review.Tree(), nil) // the OS sandbox in real use
	engine, _ := local.New(review.Tree(), b)
	ws, _ := engine.Create(ctx, "example")
	defer ws.Close(ctx)
	ws.Run(ctx, &backend.Request{Command: "echo changed > notes.txt"})

	data, _ := os.ReadFile(filepath.Join(project, "notes.txt"))
	fmt.Print("before apply: ", string(data))
	changes, _ := review.Diff(ctx)
	for _, c := range changes {
		fmt.Println(c.Kind, c.Path)
	}
	if _, err := review.Apply(ctx); err != nil {
		fmt.Println(err)
		return
	}
	data, _ = os.ReadFile(filepath.Join(project, "notes.txt"))
	fmt.Print("after apply: ", string(data))
	// Output:
	// before apply: keep me
	// modified notes.txt
	// after apply: changed
}
