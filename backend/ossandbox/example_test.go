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

// Say which PATH directories commands can run programs from, and which
// credential locations they never read, as helikon doctor does.
func ExampleExplainPath() {
	r, err := ossandbox.ExplainPath(&ossandbox.Options{HidePaths: []string{".config/my-app/token"}})
	if err != nil {
		panic(err)
	}
	for _, e := range r.Entries {
		fmt.Printf("%s usable=%v: %s\n", e.Dir, e.Usable, e.Why)
	}
	for _, x := range r.Exposed {
		fmt.Printf("%s is readable as %s (a hard link)\n", x.Hidden, x.Name)
	}
}

// A program in a directory commands cannot read fails with a
// NotReadableError naming the directory to grant.
func ExampleNotReadableError() {
	dir, _ := os.MkdirTemp("", "project-")
	defer os.RemoveAll(dir)
	b, err := ossandbox.New(dir, &ossandbox.Options{NoPath: true})
	if err != nil {
		fmt.Println("no OS sandbox here:", err)
		return
	}
	_, err = b.Run(context.Background(), &backend.Request{Argv: []string{"python3", "-c", "print(1)"}})
	var ne *ossandbox.NotReadableError
	if errors.As(err, &ne) {
		fmt.Printf("grant %s (--read-path %s) or leave PATH granted\n", ne.Dir, ne.Dir)
	}
}
