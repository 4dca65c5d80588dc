package forkd_test

import (
	"context"
	"fmt"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/microvm"
	"github.com/paigasus/helikon/internal/forkdfake"
	"github.com/paigasus/helikon/workspace/forkd"
)

func ExampleNew() {
	// A fake controller stands in for forkd here; in production the URL is
	// https://controller:8889, the token comes from FORKD_TOKEN, and the
	// root is DefaultDir (/workspace) in the microVM.
	ctl := forkdfake.New("example-token")
	ctl.AddSnapshot("helikon")
	srv := ctl.Start()
	defer srv.Close()

	ctx := context.Background()
	e, err := forkd.New(ctx, &forkd.Options{
		Options: microvm.Options{URL: srv.URL, Token: "example-token", Snapshot: "helikon"},
		Dir:     "workspace",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	w, err := e.Create(ctx, "example-session")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer w.Close(ctx)
	if _, err := w.WriteFile(ctx, "greet.sh", []byte("echo hello from the workspace\n")); err != nil {
		fmt.Println(err)
		return
	}
	res, err := w.Run(ctx, &backend.Request{Command: "sh greet.sh"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(res.Stdout))
	fmt.Println(w.Info().ID, w.Guarantees().Filesystem, ctl.Workspaces())
	// Output:
	// hello from the workspace
	// helikon-example-session virtualized [helikon-example-session]
}
