package mcptools_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/tool/functiontool"
	"github.com/paigasus/helikon/tool/mcptools"
	"github.com/paigasus/helikon/workspace"
)

// sessionEngine's workspaces answer every command with their session id,
// so a test sees which workspace a call reached.
type sessionEngine struct {
	mu      sync.Mutex
	created map[string]int
	closed  map[string]int
}

func (e *sessionEngine) Name() string { return "sessions" }
func (e *sessionEngine) Dir() string  { return "/ws" }
func (e *sessionEngine) Guarantees() backend.Guarantees {
	return backend.Guarantees{Label: "sessions"}
}

func (e *sessionEngine) Create(_ context.Context, session string) (workspace.Workspace, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.created[session]++
	return &sessionWS{e: e, session: session}, nil
}

func (e *sessionEngine) Attach(context.Context, string) (workspace.Workspace, error) {
	return nil, workspace.ErrNotFound
}
func (e *sessionEngine) List(context.Context) ([]workspace.Info, error) { return nil, nil }
func (e *sessionEngine) Remove(context.Context, string) error           { return nil }

func (e *sessionEngine) counts() (created, closed map[string]int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	created, closed = maps.Clone(e.created), maps.Clone(e.closed)
	return created, closed
}

type sessionWS struct {
	workspace.FS // unused by the test's tool
	e            *sessionEngine
	session      string
}

func (w *sessionWS) Run(context.Context, *backend.Request) (*backend.Result, error) {
	return &backend.Result{Stdout: []byte(w.session)}, nil
}
func (w *sessionWS) Guarantees() backend.Guarantees { return w.e.Guarantees() }
func (w *sessionWS) Info() workspace.Info {
	return workspace.Info{ID: w.session, Engine: "sessions", Session: w.session}
}
func (w *sessionWS) Close(context.Context) error {
	w.e.mu.Lock()
	w.e.closed[w.session]++
	w.e.mu.Unlock()
	return nil
}

// TestHTTPSessionsEachGetTheirOwnWorkspaceClosedAtTheirEnd: two clients of
// one server reach two workspaces; a client that ends its session has its
// workspace closed, the other's stays.
func TestHTTPSessionsEachGetTheirOwnWorkspaceClosedAtTheirEnd(t *testing.T) {
	e := &sessionEngine{created: map[string]int{}, closed: map[string]int{}}
	sessions := &workspace.Sessions{Engine: e}
	ws, err := sessions.ByContext("")
	if err != nil {
		t.Fatal(err)
	}
	whoami, err := functiontool.New("whoami", "says which workspace the call reached",
		func(tc *helikon.ToolContext[app], _ empty) (echoOut, error) {
			res, err := ws.Run(tc, &backend.Request{Command: "true"})
			if err != nil {
				return echoOut{}, err
			}
			return echoOut{Echo: string(res.Stdout)}, nil
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcptools.NewServer(helikon.MustToolset[app](whoami), &mcptools.ServerOptions[app]{Sessions: sessions})
	if err != nil {
		t.Fatal(err)
	}
	url := startHTTP(t, srv, nil)
	ctx := context.Background()
	var names [2]string
	var srcs [2]*mcptools.Source[app]
	for i := range srcs {
		src, err := mcptools.Connect[app](ctx, mcptools.HTTP(url, nil), nil)
		if err != nil {
			t.Fatal(err)
		}
		srcs[i] = src
		for range 2 {
			out, err := invoke(toolsByName(t, src)["whoami"], `{}`)
			if err != nil {
				t.Fatal(err)
			}
			var got echoOut
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			names[i] = got.Echo
		}
	}
	if names[0] == names[1] || !strings.HasPrefix(names[0], "mcp-") {
		t.Fatalf("the two sessions reached %s and %s, want two workspaces of their own", names[0], names[1])
	}
	created, _ := e.counts()
	if len(created) != 2 {
		t.Fatalf("created %v, want one workspace per session", created)
	}
	srcs[0].Close()
	first := names[0]
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, closed := e.counts()
		if closed[first] == 1 {
			if len(closed) != 1 {
				t.Fatalf("closed %v, want only the ended session's workspace", closed)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the workspace of the ended session %s was not closed: %v", first, closed)
		}
		time.Sleep(10 * time.Millisecond)
	}
	srcs[1].Close()
}
