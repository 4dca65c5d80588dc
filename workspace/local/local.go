// Package local is the workspace engine of this machine: the files of a
// workspace are a directory opened with package fsroot (os.Root), and its
// commands run through an execution backend of this machine in the same
// directory (backend/ossandbox, the default of the CLI, or backend/host).
//
// The directory is the user's project. A local workspace is a view of it,
// not a copy: the file tools and the commands change the project itself,
// and nothing is created or deleted when a workspace opens or closes.
// Locally the engine's verbs therefore mean:
//
//   - Create opens a workspace on the directory for a session, and fails
//     only while this Engine already holds one open for that session.
//   - Attach opens one on the directory for any valid session: the
//     directory is the workspace's state, and it always exists, so a
//     session's earlier files are there (Info.Attached is true).
//   - List reports the workspaces this Engine holds open. Nothing outlives
//     its process, so there is nothing to find that a crashed process left.
//   - Remove closes the open workspace with that ID and deletes nothing.
//   - Close releases the directory descriptor; the directory stays. It does
//     not stop a command that is running (its caller's context does).
//
// A [Review] holds an agent's changes back instead: its workspace is built
// on a copy of the project kept outside it, and the user applies the
// changes, all or some, or discards them (helikon run --review).
//
// # What is guaranteed
//
//   - The file operations have package fsroot's guarantees, which hold
//     against a concurrent writer inside the workspace (a command renaming
//     directories while a Read runs): every path is resolved component by
//     component from an open descriptor of the root, "..", absolute paths
//     outside the root and symbolic links that lead out (absolute links
//     included, even those pointing inside) are refused with
//     [workspace.ErrOutside], writes are atomic and keep the mode, and
//     updates of one path through one Workspace are serialised.
//   - [FS] implements [workspace.Resolver]: links are resolved without a
//     round trip, so the file tools report where a link leads before the
//     permission check, as they did on a bare sandbox.
//   - A link cannot sidestep a rule by being swapped in after the check:
//     [FS.Open] reports the path its own walk opened ([workspace.File.Path]),
//     which Read compares with what the rules saw, and [FS] implements
//     [workspace.ExpectWriter], so a Write or Edit compares the path its own
//     walk resolved with the checked targets before it creates a directory,
//     reads the file or writes a byte, and then goes through the
//     directories that walk opened. A directory swapped for a link inside
//     the root while a call runs (by a command of the workspace) leads the
//     call to a path the rules did not see, and the call is refused naming
//     it, as on the remote engines.
//   - Commands run with the backend's guarantees (see its package) and
//     start in the same directory, [FS.Dir], with links evaluated: New
//     refuses a backend whose directory is another.
//   - After Close, every method fails with [workspace.ErrGone]; Close
//     waits for file operations in flight.
//
// # What is not guaranteed
//
//   - Commands are confined only as the backend confines them: on the
//     host backend a command can read and write anything the user can,
//     outside the root too, and nothing the file tools refuse stops it.
//   - The limits of package fsroot: hard links to files outside are read
//     through, mount points inside the root are traversed, the update check
//     leaves a window of microseconds.
//   - Two workspaces on one directory (two sessions, two processes) share
//     its files without coordination: writes of one path are serialised
//     only within one Workspace value, and across them the last writer
//     wins, whole.
package local

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/fsroot"
)

// EngineName is the local engine's name, as [workspace.Info.Engine] and the
// CLI's --backend spell it.
const EngineName = "local"

// FS is the file system of a local workspace: a [fsroot.FS] behind
// the [workspace.FS] contract. It is safe for concurrent use.
type FS struct {
	sb *fsroot.FS
	mu sync.RWMutex // held for reading by every operation; Close takes it
	// closed is set by the Workspace that owns the FS; a bare FS (NewFS)
	// is never closed by this package.
	closed bool
}

var (
	_ workspace.FS           = (*FS)(nil)
	_ workspace.Resolver     = (*FS)(nil)
	_ workspace.ExpectWriter = (*FS)(nil)
)

// NewFS returns the file system over sb. The caller keeps sb and closes it.
func NewFS(sb *fsroot.FS) *FS { return &FS{sb: sb} }

// FSRoot returns the sandbox the FS works on.
func (f *FS) FSRoot() *fsroot.FS { return f.sb }

// Dir returns the root directory, absolute, symbolic links evaluated.
func (f *FS) Dir() string { return f.sb.Dir() }

// enter starts an operation on name, holding f.mu for reading: it fails
// with ErrGone after Close, and with the context's error when ctx is done.
// On success the caller releases f.mu (f.mu.RUnlock) when the operation is
// over.
func (f *FS) enter(ctx context.Context, op, name string) error {
	f.mu.RLock()
	if f.closed {
		f.mu.RUnlock()
		return &fs.PathError{Op: op, Path: name, Err: workspace.ErrGone}
	}
	if err := ctx.Err(); err != nil {
		f.mu.RUnlock()
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return nil
}

// Stat returns the information of name, symbolic links inside the root
// followed.
func (f *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	if err := f.enter(ctx, "stat", name); err != nil {
		return nil, err
	}
	defer f.mu.RUnlock()
	return f.sb.Stat(name)
}

// Open opens the regular file name for reading (see
// [fsroot.FS.OpenRegular]).
func (f *FS) Open(ctx context.Context, name string) (workspace.File, error) {
	if err := f.enter(ctx, "open", name); err != nil {
		return nil, err
	}
	defer f.mu.RUnlock()
	of, fi, real, err := f.sb.OpenFile(name)
	if err != nil {
		return nil, err
	}
	return &file{File: of, info: fi, path: real}, nil
}

// ReadDir lists the directory name, sorted by file name.
func (f *FS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	if err := f.enter(ctx, "readdir", name); err != nil {
		return nil, err
	}
	defer f.mu.RUnlock()
	return f.sb.ReadDir(name)
}

// WriteFile atomically replaces name with data (see
// [fsroot.FS.WriteFile]).
func (f *FS) WriteFile(ctx context.Context, name string, data []byte) (workspace.WriteResult, error) {
	if err := f.enter(ctx, "write", name); err != nil {
		return workspace.WriteResult{}, err
	}
	defer f.mu.RUnlock()
	return f.sb.WriteFile(ctx, name, data)
}

// UpdateFile replaces the content of name with what update returns (see
// [fsroot.FS.UpdateFile]).
func (f *FS) UpdateFile(ctx context.Context, name string, maxSize int64, update func(old []byte) ([][]byte, error)) (workspace.WriteResult, error) {
	if err := f.enter(ctx, "update", name); err != nil {
		return workspace.WriteResult{}, err
	}
	defer f.mu.RUnlock()
	return f.sb.UpdateFile(ctx, name, maxSize, update)
}

// WriteFileExpect writes name only when it leads to one of expect (see
// [fsroot.FS.WriteFileExpect]): the path the write's own walk
// resolved is compared, and the write goes through the directories that
// walk opened. It implements [workspace.ExpectWriter].
func (f *FS) WriteFileExpect(ctx context.Context, name string, data []byte, expect []string) (workspace.WriteResult, error) {
	if err := f.enter(ctx, "write", name); err != nil {
		return workspace.WriteResult{}, err
	}
	defer f.mu.RUnlock()
	return f.sb.WriteFileExpect(ctx, name, data, expect)
}

// UpdateFileExpect updates name only when it leads to one of expect,
// checked before the file is opened (see [fsroot.FS.UpdateFileExpect]).
// It implements [workspace.ExpectWriter].
func (f *FS) UpdateFileExpect(ctx context.Context, name string, maxSize int64, expect []string, update func(old []byte) ([][]byte, error)) (workspace.WriteResult, error) {
	if err := f.enter(ctx, "update", name); err != nil {
		return workspace.WriteResult{}, err
	}
	defer f.mu.RUnlock()
	return f.sb.UpdateFileExpect(ctx, name, maxSize, expect, update)
}

// Remove removes the file, link or empty directory name.
func (f *FS) Remove(ctx context.Context, name string) error {
	if err := f.enter(ctx, "remove", name); err != nil {
		return err
	}
	defer f.mu.RUnlock()
	return f.sb.Remove(name)
}

// Rename renames oldname to newname.
func (f *FS) Rename(ctx context.Context, oldname, newname string) error {
	if err := f.enter(ctx, "rename", oldname); err != nil {
		return err
	}
	defer f.mu.RUnlock()
	return f.sb.Rename(oldname, newname)
}

// RealPath resolves name's links inside the root (see
// [fsroot.FS.RealPath]); it implements [workspace.Resolver].
func (f *FS) RealPath(name string) (string, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return "", &fs.PathError{Op: "realpath", Path: name, Err: workspace.ErrGone}
	}
	return f.sb.RealPath(name)
}

// close marks the FS closed, once the operations in flight are done, and
// reports whether it was open.
func (f *FS) close() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	was := !f.closed
	f.closed = true
	return was
}

// file is an open regular file of an FS.
type file struct {
	*os.File
	info fs.FileInfo
	path string
}

// Stat returns the information of the file as of its opening.
func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }

// Path returns the file's path relative to the root, links resolved.
func (f *file) Path() string { return f.path }

// Workspace is a local workspace: an [FS] on the project directory and a
// backend of this machine running commands there. It is safe for
// concurrent use.
type Workspace struct {
	*FS
	b      backend.Backend
	tl     backend.TimeLimited
	info   workspace.Info
	onDone func() // tells the engine the workspace is closed
	ckpt   *CheckpointStore
}

var (
	_ workspace.Workspace = (*Workspace)(nil)
	_ backend.TimeLimited = (*Workspace)(nil)
	_ backend.Starter     = (*Workspace)(nil)
)

// Run runs req through the backend, in [FS.Dir]. It fails with
// [workspace.ErrGone] after Close.
func (w *Workspace) Run(ctx context.Context, req *backend.Request) (*backend.Result, error) {
	w.mu.RLock()
	closed := w.closed
	w.mu.RUnlock()
	if closed {
		return nil, fmt.Errorf("run: %w", workspace.ErrGone)
	}
	return w.b.Run(ctx, req)
}

// Start starts req through the backend, in [FS.Dir], as a process that
// keeps running (see [backend.Starter]); it fails with an error wrapping
// [backend.ErrNoProcesses] when the backend cannot, and with
// [workspace.ErrGone] after Close. The process lives as long as ctx: the
// workspace does not track it (a process table does, see package process).
func (w *Workspace) Start(ctx context.Context, req *backend.StartRequest) (backend.Process, error) {
	w.mu.RLock()
	closed := w.closed
	w.mu.RUnlock()
	if closed {
		return nil, fmt.Errorf("start: %w", workspace.ErrGone)
	}
	return backend.Start(ctx, w.b, req)
}

// Guarantees reports the backend's guarantees.
func (w *Workspace) Guarantees() backend.Guarantees { return w.b.Guarantees() }

// Timeout is the backend's: the longest a command may run.
func (w *Workspace) Timeout() time.Duration { return w.tl.Timeout() }

// Backend returns the backend commands run through.
func (w *Workspace) Backend() backend.Backend { return w.b }

// Info describes the workspace.
func (w *Workspace) Info() workspace.Info { return w.info }

// Close releases the directory; the files stay. It is idempotent.
func (w *Workspace) Close(context.Context) error {
	if !w.close() {
		return nil
	}
	if w.onDone != nil {
		w.onDone()
	}
	return w.sb.Close()
}

// Engine opens local workspaces on one directory. It is safe for
// concurrent use.
type Engine struct {
	dir string
	b   backend.Backend
	tl  backend.TimeLimited
	ck  CheckpointOptions

	mu   sync.Mutex
	open map[string]*Workspace // by session
}

var _ workspace.Engine = (*Engine)(nil)

// Options configures an [Engine]. The zero value means the defaults.
type Options struct {
	// Checkpoints configures the store of the workspaces' checkpoints
	// ([Workspace.Checkpoint]).
	Checkpoints CheckpointOptions
}

// New is [NewWithOptions] with the default options.
func New(dir string, b backend.Backend) (*Engine, error) { return NewWithOptions(dir, b, nil) }

// NewWithOptions returns the engine of the directory dir, whose workspaces run their
// commands through b. b must run commands in dir ([backend.WorkingDir]:
// the host backend and the OS sandbox built for dir do) and report its
// time limit ([backend.TimeLimited]); the engine does not close it.
func NewWithOptions(dir string, b backend.Backend, opts *Options) (*Engine, error) {
	if opts == nil {
		opts = &Options{}
	}
	if b == nil {
		return nil, errors.New("local: nil backend")
	}
	wd, ok := b.(backend.WorkingDir)
	if !ok {
		return nil, errors.New("local: the backend does not say where its commands run (backend.WorkingDir); use the host backend or the OS sandbox built for the directory")
	}
	tl, ok := b.(backend.TimeLimited)
	if !ok {
		return nil, errors.New("local: the backend reports no time limit (backend.TimeLimited); use the host backend or the OS sandbox")
	}
	real, err := sameDir(dir, wd.Dir())
	if err != nil {
		return nil, err
	}
	return &Engine{dir: real, b: b, tl: tl, ck: opts.Checkpoints, open: map[string]*Workspace{}}, nil
}

// sameDir returns dir with its links evaluated, or an error when the
// backend's directory bdir is another one.
func sameDir(dir, bdir string) (string, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("local: %w", err)
	}
	if real, err = filepath.Abs(real); err != nil {
		return "", fmt.Errorf("local: %w", err)
	}
	breal, err := filepath.EvalSymlinks(bdir)
	if err != nil || breal != real {
		return "", fmt.Errorf("local: the backend runs commands in %s, not in the workspace directory %s: build it for the same directory", bdir, real)
	}
	return real, nil
}

// Name returns "local".
func (e *Engine) Name() string { return EngineName }

// Dir returns the directory the engine's workspaces open, links evaluated.
func (e *Engine) Dir() string { return e.dir }

// Create opens a workspace on the directory for session. It fails while
// this engine holds one open for the session (use Attach).
func (e *Engine) Create(ctx context.Context, session string) (workspace.Workspace, error) {
	return e.openWorkspace(ctx, session, false)
}

// Attach opens a workspace on the directory for session. The directory
// always exists, so Attach never fails with [workspace.ErrNotFound]; the
// session's earlier files are in it.
func (e *Engine) Attach(ctx context.Context, session string) (workspace.Workspace, error) {
	return e.openWorkspace(ctx, session, true)
}

func (e *Engine) openWorkspace(ctx context.Context, session string, attach bool) (*Workspace, error) {
	if err := workspace.ValidSession(session); err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if old, ok := e.open[session]; ok {
		if !attach {
			return nil, fmt.Errorf("local: session %s already has a workspace open in this process (%s): attach to it", session, old.info.ID)
		}
	}
	sb, err := fsroot.Open(e.dir)
	if err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	if sb.Dir() != e.dir {
		sb.Close()
		return nil, fmt.Errorf("local: %s now resolves to %s; the directory was moved", e.dir, sb.Dir())
	}
	ckpt := NewCheckpointStore(sb.Root(), e.dir, &e.ck)
	w := &Workspace{
		FS:   NewFS(sb),
		b:    e.b,
		tl:   e.tl,
		ckpt: ckpt,
		info: workspace.Info{
			ID:       e.dir + "#" + session,
			Engine:   EngineName,
			Session:  session,
			Created:  time.Now(),
			State:    "open",
			Attached: attach,
		},
	}
	w.onDone = func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.open[session] == w {
			delete(e.open, session)
		}
	}
	e.open[session] = w
	return w, nil
}

// List reports the workspaces this engine holds open, by ID.
func (e *Engine) List(ctx context.Context) ([]workspace.Info, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []workspace.Info
	for _, s := range slices.Sorted(maps.Keys(e.open)) {
		out = append(out, e.open[s].info)
	}
	return out, nil
}

// Remove closes the open workspace with this ID. It deletes no file: the
// directory is the user's. An ID that is not open is not an error.
func (e *Engine) Remove(ctx context.Context, id string) error {
	e.mu.Lock()
	var found *Workspace
	for _, w := range e.open {
		if w.info.ID == id {
			found = w
		}
	}
	e.mu.Unlock()
	if found == nil {
		return nil
	}
	return found.Close(ctx)
}
