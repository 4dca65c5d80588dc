package process_test

import (
	"errors"
	"testing"

	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/workspace"
)

// TestSessionsKeepEachSessionsProcessesApart: a session cannot reach
// another's process by its id, each has its own maximum, and closing a
// session ends its processes only.
func TestSessionsKeepEachSessionsProcessesApart(t *testing.T) {
	b, err := host.New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	s := &process.Sessions{Backend: b, Options: &process.Options{MaxProcesses: 1}}
	defer s.CloseAll()
	a := workspace.WithSession(t.Context(), "a")
	bctx := workspace.WithSession(t.Context(), "b")
	ta, err := s.TableFor(a)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := s.TableFor(bctx)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := s.TableFor(a); again != ta {
		t.Fatal("a session got a second table")
	}
	ea := start(t, ta, "sleep 300")
	if _, err := tb.Get(ea.ID); !errors.Is(err, process.ErrNotFound) {
		t.Errorf("session b reached session a's %s: %v", ea.ID, err)
	}
	eb := start(t, tb, "sleep 300") // b's maximum is its own
	if err := s.Close("a"); err != nil {
		t.Fatal(err)
	}
	if ea.Info().Running {
		t.Error("session a's process outlived its session")
	}
	if !eb.Info().Running {
		t.Error("closing session a ended session b's process")
	}
	if err := s.CloseAll(); err != nil {
		t.Fatal(err)
	}
	if eb.Info().Running {
		t.Error("session b's process outlived CloseAll")
	}
	if _, err := s.TableFor(a); !errors.Is(err, process.ErrClosed) {
		t.Errorf("TableFor after CloseAll = %v, want ErrClosed", err)
	}
}
