package docker

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/backendtest"
)

func TestProcessConformanceIsolated(t *testing.T) {
	ws := create(t, newEngine(t, Options{Isolate: true}))
	backendtest.RunProcesses(t, ws, nil)
}

func TestProcessConformanceBind(t *testing.T) {
	ws := create(t, newEngine(t, Options{Root: bindRoot(t)}))
	backendtest.RunProcesses(t, ws, nil)
}

// keeperChildEnv names the session TestProcessKeeperChild starts its
// process in, when the test binary runs as the child of
// TestProcessesEndWhenHelikonIsKilled.
const keeperChildEnv = "HELIKON_TEST_KEEPER_CHILD"

// TestProcessKeeperChild is the child of TestProcessesEndWhenHelikonIsKilled:
// it creates the session's workspace, starts a process tree in it, says
// "started" and waits to be killed.
func TestProcessKeeperChild(t *testing.T) {
	sess := os.Getenv(keeperChildEnv)
	if sess == "" {
		t.Skip("the child of TestProcessesEndWhenHelikonIsKilled")
	}
	e, err := New(t.Context(), &Options{Image: image(), Isolate: true})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := e.Create(t.Context(), sess)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ws.(*Workspace).Start(context.Background(), &backend.StartRequest{Request: backend.Request{
		Command: `sleep 4711 & (sleep 4712 &); echo up; sleep 4713`}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Output().Wait(t.Context(), 0, 0); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("started\n")
	select {}
}

// TestProcessesEndWhenHelikonIsKilled kills, with SIGKILL, a process that
// started a process tree in a workspace, and looks for that tree in the
// container: the keeper exec ends it when the killed process's connection
// drops. Without the keeper the tree runs on (checked by disabling it).
func TestProcessesEndWhenHelikonIsKilled(t *testing.T) {
	e := newEngine(t, Options{Isolate: true})
	sess := session(t)
	child := exec.Command(os.Args[0], "-test.run=^TestProcessKeeperChild$", "-test.v")
	child.Env = append(os.Environ(), keeperChildEnv+"="+sess)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	deadline := time.After(2 * time.Minute)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the child ended before it started its process")
			}
			if l == "started" {
				break wait
			}
		case <-deadline:
			t.Fatal("the child never started its process")
		}
	}
	go func() {
		for range lines {
		}
	}()
	ws, err := e.Attach(t.Context(), sess)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close(context.Background()) })
	w := ws.(*Workspace)
	if s := sleepers(t, w, "sleep 471"); strings.Count(s, "sleep 471") != 3 {
		t.Fatalf("the child's tree does not run: %q", s)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	var left string
	for range 200 {
		if left = sleepers(t, w, "sleep 471"); left == "" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("processes of the killed process survive in the container:\n%s", left)
}
