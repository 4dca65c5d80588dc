package forkd_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/forkdapi"
	"github.com/paigasus/helikon/internal/forkdfake"
)

// BenchmarkRunOverhead measures what the workspace adds to a call beyond
// the controller's answer: Workspace.Run of a command against the raw
// client's Exec of the very arguments Run sends (its cd wrapper and mark
// included, so that the fake controller does the same work for both).
func BenchmarkRunOverhead(b *testing.B) {
	c := forkdfake.New(token)
	c.AddSnapshot("helikon")
	srv := c.Start()
	defer srv.Close()
	e := newEngine(b, srv, nil)
	ctx := context.Background()
	w, err := e.Create(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close(ctx)
	req := &backend.Request{Command: "true"}
	if _, err := w.Run(ctx, req); err != nil {
		b.Fatal(err)
	}
	calls := c.Calls()
	last := calls[len(calls)-1]
	var body struct {
		Args []string `json:"args"`
	}
	if err := json.Unmarshal(last.Body, &body); err != nil {
		b.Fatal(err)
	}
	sandbox := c.Live()[0]
	cl, err := forkdapi.NewClient(srv.URL, forkdapi.ClientOptions{Token: token})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("ClientExec", func(b *testing.B) {
		for b.Loop() {
			if _, err := cl.Exec(ctx, sandbox, body.Args, 30, 1<<20); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("WorkspaceRun", func(b *testing.B) {
		for b.Loop() {
			if _, err := w.Run(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
