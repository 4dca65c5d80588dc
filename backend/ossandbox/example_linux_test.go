//go:build linux

package ossandbox_test

import (
	"context"
	"fmt"
	"os"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox"
)

// Keep the tools' caches across sessions of one project: a second backend
// on the same project (a later session) finds what the first left in
// GOCACHE. The session home, HOME, is the backend's own and goes with
// Close; the named caches stay in CacheDir.
func ExampleOptions_caches() {
	dir, _ := os.MkdirTemp("", "project-")
	defer os.RemoveAll(dir)
	caches, _ := os.MkdirTemp("", "caches-")
	defer os.RemoveAll(caches)
	opts := &ossandbox.Options{Caches: ossandbox.CacheProject, CacheDir: caches}
	for _, cmd := range []string{`echo warm > "$GOCACHE/entry"`, `cat "$GOCACHE/entry"`} {
		b, err := ossandbox.New(dir, opts)
		if err != nil {
			fmt.Println("no OS sandbox here:", err)
			return
		}
		res, err := b.Run(context.Background(), &backend.Request{Command: cmd})
		b.Close() // removes the session home, never the named caches
		if err != nil {
			panic(err)
		}
		fmt.Print(string(res.Stdout))
	}
}
