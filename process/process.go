// Package process is a session's table of processes that keep running: the
// background commands an agent started, each with an id the model uses to
// read its new output, write to its input and end it.
//
// # Guarantees
//
//   - At most [Options].MaxProcesses processes run at once; starting one
//     more fails with an error wrapping [ErrTooMany] that says what to do.
//   - Each process keeps at most [Options].RingSize bytes of output (its
//     most recent), whatever it writes; a reader learns how much it missed.
//   - A process is killed, with everything it started, when its lifetime
//     ends, when nobody read its output or wrote to its input for the idle
//     time, when the table's context ends and when the table is closed:
//     Close returns once every process is gone.
//   - Ids are never reused within a table, so an id cannot name another
//     process than the one it was given for; a table knows only its own
//     processes, so one session cannot reach another's.
//
// # Not guaranteed
//
// The table does not decide whether a command may start, nor what may be
// written to a process's input: that is the permission pipeline's business.
// The containment of a process is its backend's (see [backend.Starter]).
package process

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/paigasus/helikon/backend"
)

// Defaults of [Options].
const (
	// DefaultMaxProcesses is how many processes may run at once in one
	// session: enough for a server, a watcher and a REPL side by side.
	DefaultMaxProcesses = 8
	// DefaultIdle is how long a process may run without anyone reading
	// its output or writing to its input.
	DefaultIdle = 30 * time.Minute
	// keptEnded is how many ended processes stay in the table, for their
	// last output and status, beyond the running ones.
	keptEnded = 16
)

// ErrTooMany is wrapped by the error of [Table.Start] when the table runs
// its maximum of processes.
var ErrTooMany = errors.New("too many processes running")

// ErrNotFound is wrapped by the error of a lookup of an id the table does
// not hold.
var ErrNotFound = errors.New("no such process")

// ErrClosed is wrapped by the error of [Table.Start] after Close.
var ErrClosed = errors.New("the process table is closed")

// Options configures a [Table]. The zero value (or nil) gives the defaults.
type Options struct {
	// MaxProcesses is how many processes may run at once; zero means
	// [DefaultMaxProcesses].
	MaxProcesses int
	// RingSize is the output kept per process; zero means
	// [backend.DefaultRingSize].
	RingSize int64
	// Lifetime bounds each process's life; zero means
	// [backend.DefaultLifetime]. A request may shorten it.
	Lifetime time.Duration
	// Idle is how long a process may go without a read of its output or
	// a write to its input before it is killed; zero means [DefaultIdle].
	Idle time.Duration
	// Logger receives one record per start and end; nil means
	// slog.Default(). Commands are not logged: they may hold secrets.
	Logger *slog.Logger
}

// Table is one session's processes. It is safe for concurrent use.
type Table struct {
	b      backend.Starter
	opts   Options
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	closed bool
	seq    int
	procs  map[string]*Entry
	order  []string // ids in start order
	wg     sync.WaitGroup
}

// New returns an empty table whose processes run on b and live no longer
// than ctx. b must implement [backend.Starter]; otherwise New fails with an
// error wrapping [backend.ErrNoProcesses].
func New(ctx context.Context, b backend.Backend, opts *Options) (*Table, error) {
	s, ok := b.(backend.Starter)
	if !ok {
		return nil, fmt.Errorf("process: %T: %w", b, backend.ErrNoProcesses)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.MaxProcesses <= 0 {
		o.MaxProcesses = DefaultMaxProcesses
	}
	if o.Idle <= 0 {
		o.Idle = DefaultIdle
	}
	o.Lifetime = backend.EffectiveLifetime(o.Lifetime)
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	t := &Table{b: s, opts: o, log: log, procs: map[string]*Entry{}}
	t.ctx, t.cancel = context.WithCancel(ctx)
	return t, nil
}

// Entry is one process of a table.
type Entry struct {
	// ID names the process in its table.
	ID string
	// Command is what was started.
	Command string
	// Started is when.
	Started time.Time
	// TTY is true when the process runs on a terminal.
	TTY bool

	p backend.Process

	mu       sync.Mutex
	cursor   int64 // what ReadNew returned up to
	lastUse  time.Time
	killedBy string // "idle", "" otherwise
}

// Process is the running process.
func (e *Entry) Process() backend.Process { return e.p }

// Start starts req as a new process of the table and returns its entry.
func (t *Table) Start(ctx context.Context, req *backend.StartRequest) (*Entry, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, fmt.Errorf("process: %w", ErrClosed)
	}
	if n := t.running(); n >= t.opts.MaxProcesses {
		t.mu.Unlock()
		return nil, fmt.Errorf("process: %d of %d processes run: end one (KillShell) or wait for one to end: %w", n, t.opts.MaxProcesses, ErrTooMany)
	}
	t.seq++
	id := "p" + strconv.Itoa(t.seq)
	// Reserve the slot while starting, so concurrent starts cannot pass
	// the maximum together.
	e := &Entry{ID: id, Command: req.Command, Started: time.Now(), TTY: req.TTY != nil, lastUse: time.Now()}
	if req.Command == "" {
		e.Command = fmt.Sprintf("%q", req.Argv)
	}
	t.procs[id] = e
	t.mu.Unlock()

	r := *req
	if r.Lifetime <= 0 || r.Lifetime > t.opts.Lifetime {
		r.Lifetime = t.opts.Lifetime
	}
	if r.RingSize <= 0 || t.opts.RingSize > 0 && r.RingSize > t.opts.RingSize {
		r.RingSize = t.opts.RingSize
	}
	// The process lives as long as the table, not as the call that
	// started it; ctx only bounds the start.
	if err := ctx.Err(); err != nil {
		t.drop(id)
		return nil, err
	}
	p, err := t.b.Start(t.ctx, &r)
	if err != nil {
		t.drop(id)
		return nil, fmt.Errorf("process: %w", err)
	}
	t.mu.Lock()
	e.p = p
	t.order = append(t.order, id)
	t.pruneEnded()
	t.mu.Unlock()
	t.log.InfoContext(ctx, "process: started", "id", id, "tty", e.TTY)
	t.wg.Add(1)
	go t.watch(e)
	return e, nil
}

// watch kills e when it is idle too long, and logs its end.
func (t *Table) watch(e *Entry) {
	defer t.wg.Done()
	timer := time.NewTimer(t.opts.Idle)
	defer timer.Stop()
	for {
		select {
		case <-e.p.Done():
			t.log.Info("process: ended", "id", e.ID)
			return
		case <-timer.C:
			e.mu.Lock()
			left := t.opts.Idle - time.Since(e.lastUse)
			if left <= 0 {
				e.killedBy = "idle"
			}
			e.mu.Unlock()
			if left <= 0 {
				_ = e.p.Signal(os.Kill)
				left = t.opts.Idle
			}
			timer.Reset(left)
		}
	}
}

// running counts the processes that run (or are starting); t.mu is held.
func (t *Table) running() int {
	n := 0
	for _, e := range t.procs {
		if e.p == nil || !ended(e.p) {
			n++
		}
	}
	return n
}

// pruneEnded forgets the oldest ended processes beyond keptEnded; t.mu is
// held.
func (t *Table) pruneEnded() {
	var endedIDs []string
	for _, id := range t.order {
		if e := t.procs[id]; e.p != nil && ended(e.p) {
			endedIDs = append(endedIDs, id)
		}
	}
	for _, id := range endedIDs[:max(len(endedIDs)-keptEnded, 0)] {
		delete(t.procs, id)
		t.order = slices.DeleteFunc(t.order, func(s string) bool { return s == id })
	}
}

func (t *Table) drop(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.procs, id)
}

func ended(p backend.Process) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// Get returns the process id names, or an error wrapping [ErrNotFound].
func (t *Table) Get(id string) (*Entry, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.procs[id]
	if !ok || e.p == nil {
		return nil, fmt.Errorf("process: %q: %w: list the processes to see their ids", id, ErrNotFound)
	}
	return e, nil
}

// Info describes a process for a listing.
type Info struct {
	ID       string          `json:"id"`
	Command  string          `json:"command"`
	Started  time.Time       `json:"started"`
	TTY      bool            `json:"tty,omitempty"`
	Running  bool            `json:"running"`
	ExitCode *int            `json:"exit_code,omitempty"`
	Signal   int             `json:"signal,omitempty"`
	Ended    string          `json:"ended,omitempty"` // "lifetime", "idle" when the table ended it
	Output   int64           `json:"output_bytes"`
	Unread   int64           `json:"unread_bytes"`
	Result   *backend.Result `json:"-"`
}

// List describes the table's processes in start order.
func (t *Table) List() []Info {
	t.mu.Lock()
	ids := slices.Clone(t.order)
	t.mu.Unlock()
	var out []Info
	for _, id := range ids {
		e, err := t.Get(id)
		if err != nil {
			continue
		}
		out = append(out, e.Info())
	}
	return out
}

// Info describes e.
func (e *Entry) Info() Info {
	total := e.p.Output().Total()
	e.mu.Lock()
	in := Info{ID: e.ID, Command: e.Command, Started: e.Started, TTY: e.TTY, Output: total, Unread: total - e.cursor, Ended: e.killedBy}
	e.mu.Unlock()
	if !ended(e.p) {
		in.Running = true
		return in
	}
	res, _ := e.p.Wait(context.Background())
	if res != nil {
		in.ExitCode, in.Signal, in.Result = res.ExitCode, res.Signal, res
		if res.TimedOut {
			in.Ended = "lifetime"
		}
	}
	return in
}

// ReadNew returns the output written since the last ReadNew, waiting up to
// wait for some when there is none yet (and the process runs), at most max
// bytes (≤ 0: all that is kept). Reading counts as use of the process.
func (e *Entry) ReadNew(ctx context.Context, wait time.Duration, max int) (backend.Chunk, error) {
	e.mu.Lock()
	cursor := e.cursor
	e.lastUse = time.Now()
	e.mu.Unlock()
	var c backend.Chunk
	if wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		var err error
		c, err = e.p.Output().Wait(wctx, cursor, max)
		cancel()
		if err != nil && ctx.Err() != nil {
			return c, ctx.Err()
		}
	} else {
		c = e.p.Output().Read(cursor, max)
	}
	e.mu.Lock()
	if c.Next > e.cursor {
		e.cursor = c.Next
	}
	e.mu.Unlock()
	return c, nil
}

// Write writes p to the process's input. Writing counts as use.
func (e *Entry) Write(p []byte) (int, error) {
	e.mu.Lock()
	e.lastUse = time.Now()
	e.mu.Unlock()
	if ended(e.p) {
		return 0, fmt.Errorf("process %s: %w", e.ID, os.ErrProcessDone)
	}
	return e.p.Input().Write(p)
}

// Kill kills the process id names and everything it started, and waits
// until they are gone.
func (t *Table) Kill(ctx context.Context, id string) (*backend.Result, error) {
	e, err := t.Get(id)
	if err != nil {
		return nil, err
	}
	if err := e.p.Signal(os.Kill); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return nil, fmt.Errorf("process %s: %w", id, err)
	}
	return e.p.Wait(ctx)
}

// Close kills every process of the table and waits until they are gone.
// Start fails afterwards. Close may be called more than once.
func (t *Table) Close() error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	t.cancel()
	t.wg.Wait()
	return nil
}
