package ossandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox"
)

// Build the backend over a project directory and run a command in it. On a
// machine without Landlock (or seccomp, or Seatbelt), New fails and nothing
// runs: the caller decides whether to fall back to the host backend.
func Example() {
	dir, _ := os.MkdirTemp("", "project-")
	defer os.RemoveAll(dir)
	b, err := ossandbox.New(dir, &ossandbox.Options{})
	if errors.Is(err, backend.ErrUnavailable) {
		fmt.Println("no OS sandbox here:", err)
		return
	}
	if err != nil {
		panic(err)
	}
	res, err := b.Run(context.Background(), &backend.Request{Command: "echo hello from the sandbox > out && cat out"})
	if err != nil {
		panic(err)
	}
	fmt.Print(string(res.Stdout))
}
