package workspace_test

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"testing"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
)

// countingEngine records what Sessions asks of an engine. Its workspaces
// implement only what Sessions forwards; the engines' own behaviour is the
// business of the conformance suite (workspacetest).
type countingEngine struct {
	mu       sync.Mutex
	existing map[string]bool // sessions with a workspace on the "remote" side
	created  []string
	attached []string
	closed   []string
	failNext error
	starts   bool // its workspaces are backend.Starters (startingWS)
}

func (e *countingEngine) Name() string { return "counting" }

func (e *countingEngine) Create(_ context.Context, session string) (workspace.Workspace, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.failNext; err != nil {
		e.failNext = nil
		return nil, err
	}
	if e.existing == nil {
		e.existing = map[string]bool{}
	}
	e.existing[session] = true
	e.created = append(e.created, session)
	if e.starts {
		return &startingWS{countingWS{e: e, session: session}}, nil
	}
	return &countingWS{e: e, session: session}, nil
}

func (e *countingEngine) Attach(_ context.Context, session string) (workspace.Workspace, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.existing[session] {
		return nil, workspace.ErrNotFound
	}
	e.attached = append(e.attached, session)
	return &countingWS{e: e, session: session, attached: true}, nil
}

func (e *countingEngine) List(context.Context) ([]workspace.Info, error) { return nil, nil }
func (e *countingEngine) Remove(context.Context, string) error           { return nil }

type describingEngine struct{ countingEngine }

func (*describingEngine) Dir() string { return "/ws" }
func (*describingEngine) Guarantees() backend.Guarantees {
	return backend.Guarantees{Label: "counting"}
}

// unsureEngine implements Describer but cannot say its root before a
// workspace exists.
type unsureEngine struct{ countingEngine }

func (*unsureEngine) Dir() string                    { return "" }
func (*unsureEngine) Guarantees() backend.Guarantees { return backend.Guarantees{} }

type countingWS struct {
	workspace.FS // nil: calls other than Dir and Stat panic
	e            *countingEngine
	session      string
	attached     bool
}

func (w *countingWS) Dir() string { return "/ws" }
func (w *countingWS) Stat(context.Context, string) (fs.FileInfo, error) {
	return nil, fs.ErrNotExist
}
func (w *countingWS) Run(context.Context, *backend.Request) (*backend.Result, error) {
	return &backend.Result{}, nil
}
func (w *countingWS) Guarantees() backend.Guarantees { return backend.Guarantees{Label: "counting"} }
func (w *countingWS) Info() workspace.Info {
	return workspace.Info{ID: "id-" + w.session, Engine: "counting", Session: w.session, Attached: w.attached}
}
func (w *countingWS) Close(context.Context) error {
	w.e.mu.Lock()
	w.e.closed = append(w.e.closed, w.session)
	w.e.mu.Unlock()
	return nil
}

func TestSessionsCreatesOnFirstUseWhenTheEngineDescribesItsWorkspaces(t *testing.T) {
	ctx := context.Background()
	e := &describingEngine{}
	s := &workspace.Sessions{Engine: e}
	ws, err := s.Open(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.created) != 0 {
		t.Fatalf("created %v before any use", e.created)
	}
	if ws.Dir() != "/ws" || ws.Guarantees().Label != "counting" {
		t.Fatalf("before first use: Dir %q, Guarantees %v", ws.Dir(), ws.Guarantees())
	}
	if got := ws.Info(); got.Session != "s1" || got.Engine != "counting" || got.ID != "" {
		t.Fatalf("Info before first use = %+v", got)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := ws.Run(ctx, &backend.Request{Command: "true"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(e.created) != 1 {
		t.Fatalf("created %v, want one workspace for eight concurrent first uses", e.created)
	}
	again, err := s.Open(ctx, "s1")
	if err != nil || again != ws {
		t.Fatalf("second Open = %v, %v; want the same workspace", again, err)
	}
}

func TestSessionsOpensAtOnceWhenTheEngineCannotDescribe(t *testing.T) {
	ctx := context.Background()
	unreachable := errors.New("daemon unreachable")
	e := &countingEngine{failNext: unreachable}
	s := &workspace.Sessions{Engine: e}
	if _, err := s.Open(ctx, "s1"); !errors.Is(err, unreachable) {
		t.Fatalf("Open with a failing engine = %v, want its error now", err)
	}
	ws, err := s.Open(ctx, "s1") // the failure is not remembered
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ws.(*countingWS); !ok {
		t.Fatalf("Open returned %T, want the engine's own workspace (its optional interfaces reach the tools)", ws)
	}
	if len(e.created) != 1 {
		t.Fatalf("created %v", e.created)
	}
}

func TestSessionsAttachesToAnExistingWorkspaceAndReopensAfterClose(t *testing.T) {
	ctx := context.Background()
	e := &describingEngine{}
	e.existing = map[string]bool{"old": true}
	s := &workspace.Sessions{Engine: e}
	ws, _ := s.Open(ctx, "old")
	if _, err := ws.Stat(ctx, "x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat = %v", err)
	}
	if !ws.Info().Attached || len(e.created) != 0 || len(e.attached) != 1 {
		t.Fatalf("info %+v, created %v, attached %v: want attached to the existing workspace", ws.Info(), e.created, e.attached)
	}
	if err := s.Close(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if len(e.closed) != 1 {
		t.Fatalf("closed %v", e.closed)
	}
	if _, err := ws.Run(ctx, &backend.Request{Command: "true"}); !errors.Is(err, workspace.ErrGone) {
		t.Fatalf("Run after Close = %v, want ErrGone", err)
	}
	ws2, _ := s.Open(ctx, "old")
	if ws2 == ws {
		t.Fatal("Open after Close returned the closed workspace")
	}
	if _, err := ws2.Run(ctx, &backend.Request{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	if len(e.attached) != 2 {
		t.Fatalf("attached %v, want the session's workspace attached again", e.attached)
	}
}

func TestSessionsCloseAllClosesWhatWasUsedAndRefusesNewSessions(t *testing.T) {
	ctx := context.Background()
	e := &describingEngine{}
	s := &workspace.Sessions{Engine: e}
	for _, id := range []string{"a", "b", "unused"} {
		ws, err := s.Open(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if id != "unused" {
			if _, err := ws.Run(ctx, &backend.Request{Command: "true"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.CloseAll(ctx); err != nil {
		t.Fatal(err)
	}
	if len(e.closed) != 2 || len(e.created) != 2 {
		t.Fatalf("created %v, closed %v: want the two used workspaces created and closed, the unused one never created", e.created, e.closed)
	}
	if _, err := s.Open(ctx, "c"); !errors.Is(err, workspace.ErrSessionsClosed) {
		t.Fatalf("Open after CloseAll = %v", err)
	}
}

func TestSessionsRefusesInvalidSessionIDs(t *testing.T) {
	s := &workspace.Sessions{Engine: &describingEngine{}}
	for _, id := range []string{"", "-x", "a b", "../x", "x/y", "ä", string(make([]byte, 49))} {
		if _, err := s.Open(context.Background(), id); err == nil {
			t.Errorf("Open(%q) accepted", id)
		}
	}
	for _, id := range []string{"a", "run-2026_12_01", "0123456789012345678901234567890123456789abcdefgh"} {
		if err := workspace.ValidSession(id); err != nil {
			t.Errorf("ValidSession(%q) = %v", id, err)
		}
	}
}

func TestByContextRoutesEachCallToItsSessionsWorkspace(t *testing.T) {
	ctx := context.Background()
	e := &describingEngine{}
	s := &workspace.Sessions{Engine: e}
	ws, err := s.ByContext("main")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []context.Context{workspace.WithSession(ctx, "a"), workspace.WithSession(ctx, "b"), workspace.WithSession(ctx, "a"), ctx} {
		if _, err := ws.Run(c, &backend.Request{Command: "true"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(e.created); got != 3 {
		t.Fatalf("created %v, want a, b and the fallback main once each", e.created)
	}
	if err := s.Close(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := ws.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(e.closed) != 3 {
		t.Fatalf("closed %v, want all three", e.closed)
	}

	none, _ := (&workspace.Sessions{Engine: &describingEngine{}}).ByContext("")
	if _, err := none.Stat(ctx, "x"); err == nil {
		t.Fatal("a call naming no session, without a fallback, was served")
	}
	if _, err := (&workspace.Sessions{Engine: &countingEngine{}}).ByContext("main"); err == nil {
		t.Fatal("ByContext accepted an engine that cannot describe its workspaces")
	}
	if _, err := (&workspace.Sessions{Engine: &unsureEngine{}}).ByContext("main"); err == nil {
		t.Fatal("ByContext accepted an engine whose Dir is unknown")
	}
}

func TestSessionsOpenNowWhenTheEngineCannotNameItsRoot(t *testing.T) {
	e := &unsureEngine{}
	if _, ok := workspace.Describe(e); ok {
		t.Fatal("Describe: an engine with Dir \"\" describes its workspaces")
	}
	if _, ok := workspace.Describe(&describingEngine{}); !ok {
		t.Fatal("Describe: an engine with a Dir does not describe its workspaces")
	}
	ws, err := (&workspace.Sessions{Engine: e}).Open(context.Background(), "s1")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.created) != 1 || ws.Dir() != "/ws" {
		t.Fatalf("Open: created %v, Dir %q; want the workspace made now, with its own root", e.created, ws.Dir())
	}
}

func TestSessionsNotifiesEachWorkspaceAttachedOrCreated(t *testing.T) {
	ctx := context.Background()
	e := &countingEngine{existing: map[string]bool{"old": true}}
	var got []workspace.Info
	s := &workspace.Sessions{Engine: e, Notify: func(i workspace.Info) { got = append(got, i) }}
	for _, id := range []string{"old", "new", "new"} {
		if _, err := s.Open(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 2 || got[0].Session != "old" || !got[0].Attached || got[1].Session != "new" || got[1].Attached {
		t.Fatalf("notified %+v, want old attached then new created, once each", got)
	}
}

// TestByContextServesConcurrentCallsOfOneSession: parallel calls of one
// session (a turn's tool calls) share its workspace; run with -race.
func TestByContextServesConcurrentCallsOfOneSession(t *testing.T) {
	e := &describingEngine{}
	s := &workspace.Sessions{Engine: e}
	ws, err := s.ByContext("main")
	if err != nil {
		t.Fatal(err)
	}
	ctx := workspace.WithSession(context.Background(), "s")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := ws.Run(ctx, &backend.Request{Command: "true"}); err != nil {
				t.Error(err)
			}
			if ws.Dir() != "/ws" {
				t.Error("Dir changed")
			}
		})
	}
	wg.Wait()
	if len(e.created) != 1 {
		t.Fatalf("created %v, want one workspace", e.created)
	}
}

// startingWS is a countingWS that starts processes: Start fails with
// errStarted, which says the call reached it.
type startingWS struct{ countingWS }

var errStarted = errors.New("Start reached the workspace")

func (*startingWS) Start(context.Context, *backend.StartRequest) (backend.Process, error) {
	return nil, errStarted
}

func TestSessionsForwardStartToTheSessionsWorkspace(t *testing.T) {
	for _, tt := range []struct {
		name   string
		starts bool
		want   error
	}{
		{"a workspace that starts processes", true, errStarted},
		{"one that cannot says so", false, backend.ErrNoProcesses},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := &describingEngine{countingEngine{starts: tt.starts}}
			s := &workspace.Sessions{Engine: e}
			ws, err := s.Open(t.Context(), "s1")
			if err != nil {
				t.Fatal(err)
			}
			_, err = backend.Start(t.Context(), ws, &backend.StartRequest{Request: backend.Request{Command: "true"}})
			if !errors.Is(err, tt.want) {
				t.Errorf("Start = %v, want %v", err, tt.want)
			}
			if len(e.created) != 1 {
				t.Errorf("created %q, want the session's workspace made at Start", e.created)
			}
		})
	}
}
