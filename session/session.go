// Package session persists the conversations and run state of agent runs so
// that a run can be resumed by session id.
//
// A [Store] keeps, per session, the list of messages and the run-scoped state
// (helikon.State). The runner (agent/runner) writes to it at two points: when
// a run starts (the user's message) and after every completed turn (the
// turn's messages and the state as it is then), each as one atomic
// [Store.Append]. A crash therefore loses at most the turn in progress, and a
// stored conversation never ends with tool calls whose results are missing.
//
// Two stores are provided: [Memory], in process, and sqlitestore, on disk
// (SQLite without cgo). Both are safe for concurrent use; runs on different
// sessions do not interfere.
//
// Not guaranteed: state values are stored as JSON, so on resume numbers come
// back as float64 and structs as map[string]any; values that cannot be
// encoded fail the Append. The stores do not encrypt anything: a conversation
// holds whatever the tools returned.
package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/paigasus/helikon/model"
)

// ErrNotFound is returned (wrapped) for a session id the store does not have.
var ErrNotFound = errors.New("session not found")

// Session is a stored conversation.
type Session struct {
	ID string
	// Messages is the whole conversation, oldest first.
	Messages []model.Message
	// State is the run-scoped state as of the last Append, decoded from
	// JSON (numbers are float64, structs map[string]any).
	State map[string]any
	// CreatedAt is when the first Append created the session; UpdatedAt
	// when the last one ran.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Store persists sessions.
type Store interface {
	// Get returns the session called id, or an error wrapping ErrNotFound.
	Get(ctx context.Context, id string) (*Session, error)
	// Append adds msgs to the session called id and replaces its state with
	// state, atomically, creating the session when it does not exist.
	Append(ctx context.Context, id string, msgs []model.Message, state map[string]any) error
	// Delete removes the session; deleting a missing session is not an
	// error.
	Delete(ctx context.Context, id string) error
}

// NewID returns a new random session id (32 hex digits).
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ValidateID checks that id is usable as a session id: 1 to 128 characters
// from [A-Za-z0-9._-].
func ValidateID(id string) error {
	if id == "" || len(id) > 128 {
		return fmt.Errorf("invalid session id %q: use 1 to 128 characters from A-Z a-z 0-9 . _ -", id)
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("invalid session id %q: use 1 to 128 characters from A-Z a-z 0-9 . _ -", id)
		}
	}
	return nil
}

// Memory is an in-process [Store]. Its zero value is not usable; call
// [NewMemory]. Sessions are kept as encoded JSON, so what a resumed run sees
// is exactly what a disk store would give back.
type Memory struct {
	mu sync.Mutex
	m  map[string]*memSession
}

type memSession struct {
	msgs    [][]byte
	state   []byte
	created time.Time
	updated time.Time
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory { return &Memory{m: map[string]*memSession{}} }

// Get implements [Store].
func (s *Memory) Get(ctx context.Context, id string) (*Session, error) {
	s.mu.Lock()
	ms, ok := s.m[id]
	var msgs [][]byte
	var state []byte
	var created, updated time.Time
	if ok {
		msgs, state, created, updated = slices.Clone(ms.msgs), ms.state, ms.created, ms.updated
	}
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("session %s: %w", id, ErrNotFound)
	}
	out := &Session{ID: id, Messages: make([]model.Message, len(msgs)), CreatedAt: created, UpdatedAt: updated}
	for i, b := range msgs {
		if err := json.Unmarshal(b, &out.Messages[i]); err != nil {
			return nil, fmt.Errorf("session %s: message %d: %w", id, i, err)
		}
	}
	if err := DecodeState(state, &out.State); err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return out, nil
}

// Append implements [Store].
func (s *Memory) Append(ctx context.Context, id string, msgs []model.Message, state map[string]any) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	enc := make([][]byte, len(msgs))
	for i := range msgs {
		b, err := json.Marshal(&msgs[i])
		if err != nil {
			return fmt.Errorf("session %s: encoding message: %w", id, err)
		}
		enc[i] = b
	}
	st, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("session %s: encoding state: %w", id, err)
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	ms, ok := s.m[id]
	if !ok {
		ms = &memSession{created: now}
		s.m[id] = ms
	}
	ms.msgs = append(ms.msgs, enc...)
	ms.state = st
	ms.updated = now
	return nil
}

// Delete implements [Store].
func (s *Memory) Delete(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
	return nil
}

// DecodeState decodes a stored state; empty or "null" gives an empty map.
func DecodeState(b []byte, into *map[string]any) error {
	*into = map[string]any{}
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("decoding state: %w", err)
	}
	if *into == nil {
		*into = map[string]any{}
	}
	return nil
}
