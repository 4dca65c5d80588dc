//go:build linux

package ossandbox_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox"
)

// A session with a loopback of its own: a server one command starts in the
// background is reached by the next command, on the session's 127.0.0.1;
// the host's loopback and every other address stay out of reach.
func ExampleOptions_loopback() {
	dir, _ := os.MkdirTemp("", "project-")
	defer os.RemoveAll(dir)
	os.WriteFile(dir+"/index.html", []byte("hello from the session\n"), 0o644)
	b, err := ossandbox.New(dir, &ossandbox.Options{Loopback: true})
	if err != nil {
		fmt.Println("no OS sandbox here:", err)
		return
	}
	defer b.Close()
	ctx := context.Background()
	srv, err := b.Start(ctx, &backend.StartRequest{Request: backend.Request{
		Argv: []string{"/usr/bin/python3", "-m", "http.server", "--bind", "127.0.0.1", "8080"}}})
	if err != nil {
		panic(err)
	}
	defer srv.Signal(os.Kill)
	res, err := b.Run(ctx, &backend.Request{Argv: []string{"/usr/bin/python3", "-c", `
import time, urllib.request
for _ in range(200):
    try:
        print(urllib.request.urlopen("http://127.0.0.1:8080/index.html").read().decode(), end="")
        break
    except OSError:
        time.sleep(0.05)
`}})
	if err != nil {
		panic(err)
	}
	fmt.Print(string(res.Stdout))
	// Output: hello from the session
}

// Forward a port of the session to the user: a server a command started in
// the session's namespace, served on this machine's 127.0.0.1.
func ExampleBackend_Forward() {
	dir, _ := os.MkdirTemp("", "project-")
	defer os.RemoveAll(dir)
	os.WriteFile(dir+"/index.html", []byte("hello through the forward\n"), 0o644)
	b, err := ossandbox.New(dir, &ossandbox.Options{Loopback: true})
	if err != nil {
		fmt.Println("no OS sandbox here:", err)
		return
	}
	defer b.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := b.Start(ctx, &backend.StartRequest{Request: backend.Request{
		Argv: []string{"/usr/bin/python3", "-m", "http.server", "--bind", "127.0.0.1", "8081"}}})
	if err != nil {
		panic(err)
	}
	defer srv.Signal(os.Kill)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // the user's side: this machine only
	if err != nil {
		panic(err)
	}
	go b.Forward(ctx, ln, 8081)
	for range 200 { // until the server listens
		resp, err := http.Get("http://" + ln.Addr().String() + "/index.html")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Print(string(body))
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Output: hello through the forward
}

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
	// Output: warm
}
