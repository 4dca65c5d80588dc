// Package sqlitestore is a [session.Store] in a SQLite database file, through
// modernc.org/sqlite (pure Go, no cgo).
//
// # Guarantees
//
//   - Each Append is one transaction: the messages of a turn and the state
//     after it are stored together or not at all. The database runs in WAL
//     mode with synchronous=FULL, so a committed turn survives a crash of
//     the process and of the machine.
//   - The store is safe for concurrent use, from several goroutines and
//     several processes sharing the file (writers wait up to BusyTimeout
//     for one another).
//
// # Not guaranteed
//
// The file is not encrypted and holds whatever tools returned; protect it
// like the data the agent works on. A network file system may not honour
// SQLite's locking.
package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	_ "modernc.org/sqlite" // the database/sql driver "sqlite"

	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/session"
)

// DefaultBusyTimeout is how long a writer waits for another one.
const DefaultBusyTimeout = 5 * time.Second

// Options configures a store. The zero value (or nil) means the defaults.
type Options struct {
	// BusyTimeout is how long a write waits for a concurrent writer
	// (0: DefaultBusyTimeout).
	BusyTimeout time.Duration
}

// Store is a SQLite session store.
type Store struct {
	db *sql.DB
}

var _ session.Store = (*Store)(nil)

const schema = `
CREATE TABLE IF NOT EXISTS sessions (
	id         TEXT PRIMARY KEY,
	state      BLOB NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS messages (
	session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
	seq        INTEGER NOT NULL,
	body       BLOB NOT NULL,
	PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
`

// Open opens (creating if needed) the database at path.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: opening %s: %w", path, err)
	}
	if _, err := db.ExecContext(ctx, schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitestore: creating the schema in %s: %w", path, err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Get implements [session.Store].
func (s *Store) Get(ctx context.Context, id string) (*session.Session, error) {
	var state []byte
	var created, updated int64
	err := s.db.QueryRowContext(ctx, `SELECT state, created_at, updated_at FROM sessions WHERE id = ?`, id).Scan(&state, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("session %s: %w", id, session.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: session %s: %w", id, err)
	}
	out := &session.Session{ID: id, CreatedAt: time.Unix(0, created), UpdatedAt: time.Unix(0, updated)}
	if err := session.DecodeState(state, &out.State); err != nil {
		return nil, fmt.Errorf("sqlitestore: session %s: %w", id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT body FROM messages WHERE session_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: session %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			return nil, fmt.Errorf("sqlitestore: session %s: %w", id, err)
		}
		var m model.Message
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, fmt.Errorf("sqlitestore: session %s: message %d: %w", id, len(out.Messages), err)
		}
		out.Messages = append(out.Messages, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitestore: session %s: %w", id, err)
	}
	return out, nil
}

// Append implements [session.Store].
func (s *Store) Append(ctx context.Context, id string, msgs []model.Message, state map[string]any) error {
	if err := session.ValidateID(id); err != nil {
		return err
	}
	st, err := json.Marshal(state)
	if err != nil {
		return fmt.Errorf("sqlitestore: session %s: encoding state: %w", id, err)
	}
	bodies := make([][]byte, len(msgs))
	for i := range msgs {
		if bodies[i], err = json.Marshal(&msgs[i]); err != nil {
			return fmt.Errorf("sqlitestore: session %s: encoding message: %w", id, err)
		}
	}
	now := time.Now().UnixNano()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitestore: session %s: %w", id, err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, state, created_at, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`, id, st, now, now); err != nil {
		return fmt.Errorf("sqlitestore: session %s: %w", id, err)
	}
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM messages WHERE session_id = ?`, id).Scan(&next); err != nil {
		return fmt.Errorf("sqlitestore: session %s: %w", id, err)
	}
	for _, b := range bodies {
		next++
		if _, err := tx.ExecContext(ctx, `INSERT INTO messages (session_id, seq, body) VALUES (?, ?, ?)`, id, next, b); err != nil {
			return fmt.Errorf("sqlitestore: session %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitestore: session %s: %w", id, err)
	}
	return nil
}

// Delete implements [session.Store].
func (s *Store) Delete(ctx context.Context, id string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM sessions WHERE id = ?`, id); err != nil {
		return fmt.Errorf("sqlitestore: session %s: %w", id, err)
	}
	return nil
}
