package workspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"

	"github.com/paigasus/helikon/backend"
)

// Describer is implemented by engines that know, before a workspace exists,
// the root its workspaces have and the guarantees their commands get.
// [Sessions.Open] then returns a workspace that is created (or attached to)
// on its first use, so a session that never calls a tool costs nothing.
type Describer interface {
	// Dir is the root every workspace of the engine has ([FS.Dir]), or ""
	// when the engine cannot say before a workspace exists (a root
	// resolved only inside it): such an engine does not describe its
	// workspaces (see [Describe]).
	Dir() string
	// Guarantees is what every workspace's commands get
	// ([backend.Backend.Guarantees]).
	Guarantees() backend.Guarantees
}

// Describe returns the engine as a [Describer] if it describes its
// workspaces before they exist: it implements Describer and its Dir is
// known (not "").
func Describe(e Engine) (Describer, bool) {
	d, ok := e.(Describer)
	if !ok || d.Dir() == "" {
		return nil, false
	}
	return d, true
}

// Sessions holds one workspace per session open on one engine: the
// workspace of a session is attached to when it exists and created
// otherwise, kept until [Sessions.Close] of that session, and every
// workspace still open is closed by [Sessions.CloseAll] (at a runner's
// end, an MCP server's shutdown, a CLI's exit or signal).
//
// A Sessions is safe for concurrent use. Its zero value is not usable: set
// Engine.
type Sessions struct {
	// Engine creates and finds the workspaces.
	Engine Engine
	// Logger receives a line for each workspace created, attached to and
	// closed; nil means slog.Default().
	Logger *slog.Logger
	// Notify, when set, is called with the Info of each workspace as it is
	// attached to or created (Info.Attached tells which), so a command can
	// tell its user that a session's workspace was gone and a fresh one
	// started.
	Notify func(Info)

	mu     sync.Mutex
	open   map[string]*lazy
	closed bool
}

// ErrSessionsClosed is returned by [Sessions.Open] after
// [Sessions.CloseAll].
var ErrSessionsClosed = errors.New("workspace sessions closed")

func (s *Sessions) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// Open returns the workspace of session, the same value for every call
// with the same session until it is closed. When the engine
// describes its workspaces ([Describe]) the workspace is attached to or created on its first use;
// otherwise here, and an error comes back now. Close a session's workspace
// through [Sessions.Close] or [Sessions.CloseAll], not its own Close, so
// that the session's next Open opens it again.
func (s *Sessions) Open(ctx context.Context, session string) (Workspace, error) {
	if s.Engine == nil {
		return nil, errors.New("workspace: Sessions has no Engine")
	}
	if err := ValidSession(session); err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrSessionsClosed
	}
	if s.open == nil {
		s.open = map[string]*lazy{}
	}
	d, describes := Describe(s.Engine)
	l, ok := s.open[session]
	if !ok {
		l = &lazy{sessions: s, session: session}
		l.forward.get = l.get
		if describes {
			l.dir, l.guarantees = d.Dir(), d.Guarantees()
		}
		s.open[session] = l
	}
	s.mu.Unlock()
	if describes {
		return l, nil
	}
	ws, err := l.get(ctx)
	if err != nil {
		s.forget(session, l)
		return nil, err
	}
	// The workspace itself, so that the optional interfaces it implements
	// (a cheap link resolver, a time limit) reach the tools.
	return ws, nil
}

// Close closes the workspace of session, if it is open. The session's next
// Open attaches to it again where the engine keeps it, or creates a fresh
// one.
func (s *Sessions) Close(ctx context.Context, session string) error {
	s.mu.Lock()
	l := s.open[session]
	delete(s.open, session)
	s.mu.Unlock()
	if l == nil {
		return nil
	}
	return l.Close(ctx)
}

// CloseAll closes every open workspace and makes later Opens fail. It
// returns the errors joined.
func (s *Sessions) CloseAll(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	open := s.open
	s.open = nil
	s.mu.Unlock()
	var errs []error
	for _, l := range open {
		errs = append(errs, l.Close(ctx))
	}
	return errors.Join(errs...)
}

func (s *Sessions) forget(session string, l *lazy) {
	s.mu.Lock()
	if s.open[session] == l {
		delete(s.open, session)
	}
	s.mu.Unlock()
}

// lazy is the Workspace Sessions hands out: it attaches to or creates the
// real one on first use and forwards to it.
type lazy struct {
	forward
	sessions   *Sessions
	session    string
	dir        string
	guarantees backend.Guarantees

	mu     sync.Mutex
	ws     Workspace
	closed bool
}

var (
	_ Workspace    = (*lazy)(nil)
	_ ExpectWriter = (*lazy)(nil)
	_ ExpectWriter = (*routed)(nil)
)

// get returns the real workspace, attaching to the session's or creating
// one. A failed attempt is not remembered: the next call tries again.
func (l *lazy) get(ctx context.Context) (Workspace, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, fmt.Errorf("session %s: %w", l.session, ErrGone)
	}
	if l.ws != nil {
		return l.ws, nil
	}
	e := l.sessions.Engine
	ws, err := e.Attach(ctx, l.session)
	switch {
	case err == nil:
		l.sessions.logger().Info("workspace attached", "engine", e.Name(), "session", l.session, "id", ws.Info().ID)
	case errors.Is(err, ErrNotFound):
		ws, err = e.Create(ctx, l.session)
		if err != nil {
			return nil, fmt.Errorf("create the %s workspace of session %s: %w", e.Name(), l.session, err)
		}
		l.sessions.logger().Info("workspace created", "engine", e.Name(), "session", l.session, "id", ws.Info().ID)
	default:
		return nil, fmt.Errorf("attach to the %s workspace of session %s: %w", e.Name(), l.session, err)
	}
	l.ws = ws
	if n := l.sessions.Notify; n != nil {
		n(ws.Info())
	}
	if l.dir == "" {
		l.dir, l.guarantees = ws.Dir(), ws.Guarantees()
	}
	return ws, nil
}

func (l *lazy) Dir() string                    { return l.dir }
func (l *lazy) Guarantees() backend.Guarantees { return l.guarantees }

// Info describes the workspace; before its first use only Engine and
// Session are known.
func (l *lazy) Info() Info {
	l.mu.Lock()
	ws := l.ws
	l.mu.Unlock()
	if ws == nil {
		return Info{Engine: l.sessions.Engine.Name(), Session: l.session}
	}
	return ws.Info()
}

func (l *lazy) Close(ctx context.Context) error {
	l.mu.Lock()
	ws := l.ws
	already := l.closed
	l.closed = true
	l.mu.Unlock()
	l.sessions.forget(l.session, l)
	if already || ws == nil {
		return nil
	}
	err := ws.Close(ctx)
	l.sessions.logger().Info("workspace closed", "engine", l.sessions.Engine.Name(), "session", l.session, "id", ws.Info().ID, "err", err)
	return err
}

type sessionKey struct{}

// WithSession returns ctx carrying the session id, which the workspace of
// [Sessions.ByContext] routes each call by (an MCP server puts each client
// session's id there).
func WithSession(ctx context.Context, session string) context.Context {
	return context.WithValue(ctx, sessionKey{}, session)
}

// SessionFrom returns the session id [WithSession] put in ctx.
func SessionFrom(ctx context.Context) (string, bool) {
	s, ok := ctx.Value(sessionKey{}).(string)
	return s, ok && s != ""
}

// ByContext returns a workspace that routes every call to the workspace of
// the session its context names ([WithSession]), or of fallback when it
// names none, so one set of tools serves many sessions, each in its own
// workspace. The engine must describe its workspaces ([Describe]: their workspaces' Dir and
// Guarantees are the same for every session); fallback "" makes a call
// without a session fail.
func (s *Sessions) ByContext(fallback string) (Workspace, error) {
	d, ok := Describe(s.Engine)
	if !ok {
		return nil, fmt.Errorf("workspace: engine %s cannot route by session: it does not describe its workspaces before they exist", s.Engine.Name())
	}
	if fallback != "" {
		if err := ValidSession(fallback); err != nil {
			return nil, err
		}
	}
	r := &routed{s: s, fallback: fallback, dir: d.Dir(), guarantees: d.Guarantees()}
	r.forward.get = r.ws
	return r, nil
}

// routed is the Workspace of [Sessions.ByContext].
type routed struct {
	forward
	s          *Sessions
	fallback   string
	dir        string
	guarantees backend.Guarantees
}

func (r *routed) ws(ctx context.Context) (Workspace, error) {
	id, ok := SessionFrom(ctx)
	if !ok {
		id = r.fallback
	}
	if id == "" {
		return nil, errors.New("workspace: the call names no session")
	}
	return r.s.Open(ctx, id)
}

func (r *routed) Dir() string                    { return r.dir }
func (r *routed) Guarantees() backend.Guarantees { return r.guarantees }

// Info describes the fallback session's workspace.
func (r *routed) Info() Info {
	return Info{Engine: r.s.Engine.Name(), Session: r.fallback}
}

// Close closes every session's workspace ([Sessions.CloseAll]).
func (r *routed) Close(ctx context.Context) error { return r.s.CloseAll(ctx) }

// forward implements the calls of [FS] and [backend.Backend] by getting
// the workspace to forward to from each call's context.
type forward struct {
	get func(context.Context) (Workspace, error)
}

func (f forward) Run(ctx context.Context, req *backend.Request) (*backend.Result, error) {
	ws, err := f.get(ctx)
	if err != nil {
		return nil, err
	}
	return ws.Run(ctx, req)
}

// Start starts req in the session's workspace when that is a
// [backend.Starter], and fails with an error wrapping
// [backend.ErrNoProcesses] otherwise: which engine serves the session is
// known at its first use, not before.
func (f forward) Start(ctx context.Context, req *backend.StartRequest) (backend.Process, error) {
	ws, err := f.get(ctx)
	if err != nil {
		return nil, err
	}
	return backend.Start(ctx, ws, req)
}

func (f forward) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	ws, err := f.get(ctx)
	if err != nil {
		return nil, err
	}
	return ws.Stat(ctx, name)
}

func (f forward) Open(ctx context.Context, name string) (File, error) {
	ws, err := f.get(ctx)
	if err != nil {
		return nil, err
	}
	return ws.Open(ctx, name)
}

func (f forward) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	ws, err := f.get(ctx)
	if err != nil {
		return nil, err
	}
	return ws.ReadDir(ctx, name)
}

func (f forward) WriteFile(ctx context.Context, name string, data []byte) (WriteResult, error) {
	ws, err := f.get(ctx)
	if err != nil {
		return WriteResult{}, err
	}
	return ws.WriteFile(ctx, name, data)
}

func (f forward) UpdateFile(ctx context.Context, name string, maxSize int64, update func(old []byte) ([][]byte, error)) (WriteResult, error) {
	ws, err := f.get(ctx)
	if err != nil {
		return WriteResult{}, err
	}
	return ws.UpdateFile(ctx, name, maxSize, update)
}

// WriteFileExpect implements [ExpectWriter] with the workspace's own, or
// [WriteFileExpect]'s fallback when it has none.
func (f forward) WriteFileExpect(ctx context.Context, name string, data []byte, expect []string) (WriteResult, error) {
	ws, err := f.get(ctx)
	if err != nil {
		return WriteResult{}, err
	}
	return WriteFileExpect(ctx, ws, name, data, expect)
}

// UpdateFileExpect implements [ExpectWriter] as WriteFileExpect does.
func (f forward) UpdateFileExpect(ctx context.Context, name string, maxSize int64, expect []string, update func(old []byte) ([][]byte, error)) (WriteResult, error) {
	ws, err := f.get(ctx)
	if err != nil {
		return WriteResult{}, err
	}
	return UpdateFileExpect(ctx, ws, name, maxSize, expect, update)
}

func (f forward) Remove(ctx context.Context, name string) error {
	ws, err := f.get(ctx)
	if err != nil {
		return err
	}
	return ws.Remove(ctx, name)
}

func (f forward) Rename(ctx context.Context, oldname, newname string) error {
	ws, err := f.get(ctx)
	if err != nil {
		return err
	}
	return ws.Rename(ctx, oldname, newname)
}
