package docker

import (
	"context"
	"errors"
	"strings"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
)

func TestNewFailsClosed(t *testing.T) {
	for _, c := range []struct {
		name string
		opts Options
		want string
		is   error
	}{
		{"BindWithoutRoot", Options{Image: "x"}, "needs a root directory", nil},
		{"RootIsAFile", Options{Image: "x", Root: "/etc/passwd"}, "is not a directory", nil},
		{"NoDaemon", Options{Image: "x", Isolate: true, Host: "unix:///nonexistent/docker.sock"}, "does not answer", backend.ErrUnavailable},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(t.Context(), &c.opts)
			if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
				t.Errorf("New: %v, want an error saying %q", err, c.want)
			}
		})
	}
	if _, err := New(t.Context(), nil); err == nil {
		t.Error("New with nil options (bind mode without a root) succeeded")
	}
}

// TestAnEngineWithoutAnImageListsButDoesNotCreate: helikon workspaces
// list|reap build an engine without an image.
func TestAnEngineWithoutAnImageListsButDoesNotCreate(t *testing.T) {
	needDaemon(t)
	e, err := New(t.Context(), &Options{Isolate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.List(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Create(t.Context(), session(t)); err == nil || !strings.Contains(err.Error(), "needs an image") {
		t.Fatalf("Create without an image: %v", err)
	}
}

func TestNewNamesAMissingImageAndNeverPulls(t *testing.T) {
	needDaemon(t)
	const missing = "helikon-test-missing-image:never"
	_, err := New(t.Context(), &Options{Image: missing, Isolate: true})
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "never pulls") {
		t.Errorf("New with a missing image: %v, want an error naming it and saying helikon never pulls", err)
	}
}

func TestLifecycle(t *testing.T) {
	e := newEngine(t, Options{Isolate: true})
	s := session(t)
	ws, err := e.Create(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close(context.Background()) })
	if _, err := e.Create(t.Context(), s); err == nil || !strings.Contains(err.Error(), "already has a workspace") {
		t.Errorf("a second Create of the session: %v, want a refusal", err)
	}
	if _, err := ws.WriteFile(t.Context(), "kept", []byte("state\n")); err != nil {
		t.Fatal(err)
	}

	list, err := e.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var found *workspace.Info
	for i := range list {
		if list[i].ID == ws.Info().ID {
			found = &list[i]
		}
	}
	if found == nil {
		t.Fatalf("List does not report the workspace %s: %+v", ws.Info().ID, list)
	}
	for _, k := range []string{workspace.LabelManaged, workspace.LabelSession, workspace.LabelHost, workspace.LabelUser, workspace.LabelCreated} {
		if found.Labels[k] == "" {
			t.Errorf("label %s missing: %v", k, found.Labels)
		}
	}
	if found.Session != s || found.Engine != EngineName || found.State != "running" || found.Created.IsZero() {
		t.Errorf("List entry %+v, want session %s, engine docker, running, a creation time", found, s)
	}

	again, err := e.Attach(t.Context(), s)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Info().Attached || again.Info().ID != ws.Info().ID {
		t.Errorf("Attach: %+v, want the same container, attached", again.Info())
	}
	if got := sh(t, again, "cat kept"); got != "state\n" {
		t.Errorf("the attached workspace holds %q, want the session's state", got)
	}
	if _, err := e.Attach(t.Context(), session(t)); !errors.Is(err, workspace.ErrNotFound) {
		t.Errorf("Attach of an unknown session: %v, want ErrNotFound", err)
	}

	if err := ws.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(t.Context()); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	if _, err := e.cli.ContainerInspect(t.Context(), ws.Info().ID, client.ContainerInspectOptions{}); !cerrdefs.IsNotFound(err) {
		t.Errorf("after Close the container is still there: %v", err)
	}
	// The other handle on the removed container fails closed.
	if _, err := again.Run(t.Context(), &backend.Request{Command: "true"}); !errors.Is(err, workspace.ErrGone) {
		t.Errorf("Run in a removed container: %v, want ErrGone", err)
	}
	if _, err := again.Stat(t.Context(), "kept"); !errors.Is(err, workspace.ErrGone) {
		t.Errorf("Stat in a removed container: %v, want ErrGone", err)
	}
	if err := e.Remove(t.Context(), ws.Info().ID); err != nil {
		t.Errorf("Remove of a container already gone: %v, want nil", err)
	}
}

func TestRemoveReapsAndRefusesForeignContainers(t *testing.T) {
	e := newEngine(t, Options{Isolate: true})
	ws := create(t, e)
	if err := e.Remove(t.Context(), ws.Info().ID); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Run(t.Context(), &backend.Request{Command: "true"}); !errors.Is(err, workspace.ErrGone) {
		t.Errorf("Run after Remove: %v, want ErrGone", err)
	}
	// A container without helikon's label is not removed.
	cr, err := e.cli.ContainerCreate(t.Context(), client.ContainerCreateOptions{Image: image(), Name: "foreign-" + session(t), Config: &container.Config{Cmd: []string{"true"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.cli.ContainerRemove(context.Background(), cr.ID, client.ContainerRemoveOptions{Force: true})
	})
	if err := e.Remove(t.Context(), cr.ID); err == nil || !strings.Contains(err.Error(), "not a helikon workspace") {
		t.Errorf("Remove of a foreign container: %v, want a refusal", err)
	}
}

func TestAttachRestartsAStoppedContainer(t *testing.T) {
	e := newEngine(t, Options{Isolate: true})
	ws := create(t, e)
	sh(t, ws, "echo x > kept")
	if _, err := e.cli.ContainerKill(t.Context(), ws.Info().ID, client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Run(t.Context(), &backend.Request{Command: "true"}); !errors.Is(err, workspace.ErrGone) {
		t.Errorf("Run in a stopped container: %v, want ErrGone", err)
	}
	again, err := e.Attach(t.Context(), ws.Info().Session)
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(t, again, "cat kept"); got != "x\n" {
		t.Errorf("after the restart the workspace holds %q", got)
	}
}

func TestGuaranteesSayWhatIsEnforced(t *testing.T) {
	// runc named, whatever HELIKON_DOCKER_RUNTIME says: this is what a host-kernel runtime enforces.
	ws := create(t, newEngine(t, Options{Isolate: true, Memory: 256 << 20, CPUs: 1, Runtime: "runc"}))
	g := ws.Guarantees()
	if g.Filesystem != backend.IsolationOSKernel || g.Network != backend.IsolationOSKernel || g.Syscalls != backend.IsolationOSKernel {
		t.Errorf("runc, network none, default seccomp: %v, want os_kernel on every axis", g)
	}
	if got := sh(t, ws, "grep Seccomp: /proc/self/status"); !strings.Contains(got, "2") {
		t.Errorf("the guarantees say seccomp, the command's status says %q", got)
	}
	joined := strings.Join(g.Features, "; ")
	for _, want := range []string{"memory 268435456", "cpus 1.00", "pids 4096", "network: none", "user: helikon"} {
		if !strings.Contains(joined, want) {
			t.Errorf("features %q lack %q", joined, want)
		}
	}
	if got := sh(t, ws, "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max"); strings.TrimSpace(got) != "268435456" {
		t.Errorf("the memory limit in the container is %q", got)
	}
}

// TestEngineDescribesItsWorkspacesBeforeTheyExist: what Sessions shows
// before a session's container is created is what the container gets.
func TestEngineDescribesItsWorkspacesBeforeTheyExist(t *testing.T) {
	for _, isolate := range []bool{false, true} {
		opts := Options{Isolate: isolate}
		if !isolate {
			opts.Root = t.TempDir()
		}
		e := newEngine(t, opts)
		ws, err := e.Create(t.Context(), session(t))
		if err != nil {
			t.Fatal(err)
		}
		if ws.Dir() != e.Dir() || ws.Guarantees().String() != e.Guarantees().String() {
			t.Errorf("isolate %v: engine says %s %s, workspace %s %s", isolate, e.Dir(), e.Guarantees(), ws.Dir(), ws.Guarantees())
		}
		ws.Close(context.Background())
	}
}
