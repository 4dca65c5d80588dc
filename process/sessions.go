package process

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
)

// Source gives the process table of a call: a [*Table] is its own source,
// and [*Sessions] gives each session its own table. The process tools
// (package tool/bashtool) take a Source.
type Source interface {
	// TableFor returns the table the call whose context is ctx acts on.
	TableFor(ctx context.Context) (*Table, error)
}

// TableFor returns t: one table serves every call.
func (t *Table) TableFor(context.Context) (*Table, error) { return t, nil }

// Sessions gives every session (the id [workspace.SessionFrom] finds in a
// call's context; the MCP server puts its client's there) a table of its
// own, made at its first use, so that one client can neither see nor reach
// another's processes, and each session's maximum is its own. Calls whose
// context names no session share one table. The zero value is not usable:
// set Backend. It is safe for concurrent use.
type Sessions struct {
	// Backend starts the processes; it must implement [backend.Starter].
	Backend backend.Backend
	// Options configure each table; nil means the defaults.
	Options *Options

	mu     sync.Mutex
	closed bool
	tables map[string]*Table
}

// TableFor returns the table of the session ctx names.
func (s *Sessions) TableFor(ctx context.Context) (*Table, error) {
	id, _ := workspace.SessionFrom(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("process: %w", ErrClosed)
	}
	if t, ok := s.tables[id]; ok {
		return t, nil
	}
	// The table lives as long as its session, not as the call.
	t, err := New(context.Background(), s.Backend, s.Options)
	if err != nil {
		return nil, err
	}
	if s.tables == nil {
		s.tables = map[string]*Table{}
	}
	s.tables[id] = t
	return t, nil
}

// Close closes the table of session id, killing its processes; a session
// without one is no error. A later call of the session gets a new table.
func (s *Sessions) Close(id string) error {
	s.mu.Lock()
	t := s.tables[id]
	delete(s.tables, id)
	s.mu.Unlock()
	if t == nil {
		return nil
	}
	return t.Close()
}

// CloseAll closes every table, killing every process, and makes TableFor
// fail afterwards.
func (s *Sessions) CloseAll() error {
	s.mu.Lock()
	s.closed = true
	tables := s.tables
	s.tables = nil
	s.mu.Unlock()
	var errs []error
	for _, t := range tables {
		errs = append(errs, t.Close())
	}
	return errors.Join(errs...)
}
