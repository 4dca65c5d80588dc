package docker_test

import (
	"context"
	"fmt"
	"log"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace/docker"
)

// A session's workspace in a container from the image golang:1.26, with the
// project bind-mounted at its own path: Write through the FS, run it with a
// command, and close (remove) the container at the session's end. It needs
// a Docker daemon and the image, so it is compiled but not run.
func Example() {
	ctx := context.Background()
	e, err := docker.New(ctx, &docker.Options{Image: "golang:1.26", Root: "."})
	if err != nil {
		log.Fatal(err) // no daemon, or no such image (the engine never pulls)
	}
	defer e.Close()
	ws, err := e.Create(ctx, "my-session")
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close(ctx)
	if _, err := ws.WriteFile(ctx, "hello.sh", []byte("echo hello from $(hostname)\n")); err != nil {
		log.Fatal(err)
	}
	res, err := ws.Run(ctx, &backend.Request{Command: "sh hello.sh"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s%s\n", res.Stdout, ws.Guarantees().Label) // docker (runc, network none)
}
