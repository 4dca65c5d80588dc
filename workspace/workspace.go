// Package workspace is the contract of a workspace: a sandbox held open for
// one agent session, in which the file tools (Read, Write, Edit) and the Bash
// tool act on the same files.
//
// A [Workspace] is a confined file tree ([FS]) and an execution backend
// ([backend.Backend]) whose commands start in that tree's root. It lives as
// long as its session: an [Engine] creates it on first use, finds it again by
// session id, and removes it when the session ends or when an operator reaps
// it. Engines live in the packages below this one: workspace/local (this
// machine: os.Root for the files, the OS sandbox or the host backend for
// commands), workspace/docker (one container per workspace, through the
// Docker Engine API that Podman also speaks) and workspace/forkd (one
// Firecracker microVM per workspace behind a forkd controller).
//
// # What every implementation guarantees
//
//   - Confinement of the file operations to the root, as package fsroot
//     defines it for this machine: a path is resolved against the root; "..",
//     an absolute path outside the root and a symbolic link that leaves it
//     (absolute links, and links created by a command inside the workspace
//     that point at the workspace's own "/") are refused with an error
//     matching [ErrOutside]. Each implementation says in its doc where its
//     check runs and what a concurrent writer inside the workspace can do
//     against it.
//   - Atomic writes: [FS.WriteFile] and [FS.UpdateFile] leave the old
//     content or the new, never a mix, and a failed write leaves no partial
//     file behind.
//   - Errors callers can branch on: a missing file matches
//     [fs.ErrNotExist], a path outside the root [ErrOutside], a file that is
//     not regular where one is needed [ErrNotRegular], a file larger than a
//     caller's cap [ErrTooLarge], an update that lost a race [ErrChanged], a
//     workspace that is gone [ErrGone]. The messages are for operators; the
//     tools turn them into advice for the model.
//   - Labels: every resource an engine creates on a remote system carries
//     [Labels], so that [Engine.List] and an operator can find what a crashed
//     process leaked.
//   - Commands run as [backend.Backend] says: never with weaker containment
//     than Guarantees reports, killed on cancellation, a non-zero exit a
//     result and not an error.
//
// # What it does not guarantee
//
//   - Two processes that open one session's workspace at once (two helikon
//     run --session ID) share it without coordination: writes of one path
//     are serialised only within one Workspace value.
//   - Removal when the process dies without running Close (SIGKILL, power
//     loss): the remote resource stays until [Engine.Remove] (helikon
//     workspaces reap) removes it.
package workspace

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"

	"github.com/paigasus/helikon/backend"
)

// Errors that file operations and engines return, wrapped, for callers to
// match with [errors.Is].
var (
	// ErrOutside: the path leaves the workspace root ("..", an absolute
	// path outside the root, a symbolic link that leads outside).
	ErrOutside = errors.New("path is outside the workspace root")
	// ErrNotRegular: the path names a directory, device, FIFO or socket
	// where a regular file is needed.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is larger than the caller's cap.
	ErrTooLarge = errors.New("file too large")
	// ErrChanged: [FS.UpdateFile] found the file changed by someone else
	// between its read and its write, and wrote nothing.
	ErrChanged = errors.New("file changed during the update")
	// ErrGone: the workspace no longer exists (closed, removed by someone
	// else, its container or microVM destroyed).
	ErrGone = errors.New("workspace is gone")
	// ErrNotFound: [Engine.Attach] found no workspace for the session.
	ErrNotFound = errors.New("no workspace for this session")
)

// FS is a file tree confined to one root directory. Names are slash- or
// OS-separated paths relative to the root, or absolute paths inside it (as
// the workspace's commands see it, see Dir). Implementations must be safe
// for concurrent use.
type FS interface {
	// Dir is the absolute path of the root as commands in the workspace
	// see it: their working directory, and the directory permission rules
	// and targets name.
	Dir() string
	// Stat returns the file information of name, symbolic links inside the
	// root followed.
	Stat(ctx context.Context, name string) (fs.FileInfo, error)
	// Open opens the regular file name for reading. Anything else
	// (directory, FIFO, device, socket) fails with [ErrNotRegular] without
	// blocking.
	Open(ctx context.Context, name string) (File, error)
	// ReadDir lists the directory name, sorted by file name.
	ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error)
	// WriteFile atomically replaces the file name with data, creating it
	// and its missing parent directories inside the root. An existing
	// file keeps its permission bits.
	WriteFile(ctx context.Context, name string, data []byte) (WriteResult, error)
	// UpdateFile reads the regular file name (at most maxSize bytes, else
	// [ErrTooLarge]), calls update with its content and atomically
	// replaces the file with the concatenation of what update returns.
	// An error from update is returned as it is and nothing is written. A
	// change by someone else between the read and the write fails with
	// [ErrChanged] (implementations document how narrow their window is).
	UpdateFile(ctx context.Context, name string, maxSize int64, update func(old []byte) ([][]byte, error)) (WriteResult, error)
	// Remove removes the file, symbolic link or empty directory name. A
	// link as the last component is removed itself, not followed (links
	// before it are followed, inside the root).
	Remove(ctx context.Context, name string) error
	// Rename renames oldname to newname, both inside the root, replacing
	// newname when it is a file. As with Remove, a link as the last
	// component of either name is the entry renamed or replaced.
	Rename(ctx context.Context, oldname, newname string) error
}

// File is an open regular file of an [FS].
type File interface {
	io.ReadCloser
	// Stat returns the file's information as of its opening.
	Stat() (fs.FileInfo, error)
	// Path is the file's path relative to the root with symbolic links
	// resolved: the file that was opened, which permission rules are
	// matched against.
	Path() string
}

// WriteResult describes a completed write.
type WriteResult struct {
	// Path is the file written, relative to the root, symbolic links
	// resolved.
	Path string
	// Created is true when the file did not exist before.
	Created bool
	// BytesWritten is the size of the new content (the name the file
	// tools and package fsroot use).
	BytesWritten int64
}

// Resolver is implemented by file systems that resolve symbolic links
// without a round trip to another machine (package workspace/local, over
// os.Root). The file tools use it to report, before a call runs, the path a
// link leads to, so that permission rules see it. What it returns is a
// snapshot: on every FS, the tools also compare the path the FS reports
// having opened ([File.Path]) with what the rules saw, and make writes
// conditional on it ([ExpectWriter]), so that a link swapped in after the
// check is refused.
type Resolver interface {
	// RealPath returns name relative to the root with every symbolic link
	// resolved, the last component included ("." for the root itself);
	// components that do not exist are kept as written. A path that
	// leaves the root fails with an error matching [ErrOutside].
	RealPath(name string) (string, error)
}

// ExpectWriter is implemented by file systems that can make a write
// conditional on the file its path leads to, checked in the write itself
// (package workspace/execfs: its script resolves the path, compares and
// writes in one exec; package workspace/local: the write's own walk
// resolves the path, and the write goes through the directories it
// opened). The file tools use it, through [WriteFileExpect] and
// [UpdateFileExpect], for every call that came through the permission
// check: on a file system without a [Resolver] the check saw the path as
// written, and on one with it the path a link led to when the rules were
// matched; either way the write must not land on another file through a
// symbolic link, one swapped in since the check included.
//
// expect holds the paths the caller allows, relative to the root, clean
// and slash-separated, as [WriteResult.Path] reports them. When name, its
// symbolic links inside the root resolved (the last component included,
// missing components kept as written), is none of them, nothing is
// written, no missing parent directory is created, update is not called
// and the error wraps an [*UnexpectedPathError] naming where name leads.
// An empty expect allows nothing. Otherwise the methods are
// [FS.WriteFile] and [FS.UpdateFile], with their guarantees and errors.
type ExpectWriter interface {
	// WriteFileExpect is [FS.WriteFile] when name leads to one of
	// expect.
	WriteFileExpect(ctx context.Context, name string, data []byte, expect []string) (WriteResult, error)
	// UpdateFileExpect is [FS.UpdateFile] when name leads to one of
	// expect, checked before the file's content is read.
	UpdateFileExpect(ctx context.Context, name string, maxSize int64, expect []string, update func(old []byte) ([][]byte, error)) (WriteResult, error)
}

// UnexpectedPathError is the error of a write with expected paths
// ([ExpectWriter]) whose path led elsewhere: nothing was written.
type UnexpectedPathError struct {
	// Path is where the path leads, relative to the root, symbolic links
	// resolved, as [WriteResult.Path] would have reported it.
	Path string
}

// Error says where the path led.
func (e *UnexpectedPathError) Error() string {
	return "leads through a symbolic link to " + e.Path + ", which the caller did not expect"
}

// Workspace is a confined file tree and the execution backend whose
// commands run in it, held open for one session. Its [FS.Dir] is the
// commands' working directory ([backend.WorkingDir]).
type Workspace interface {
	FS
	backend.Backend
	// Info describes the workspace.
	Info() Info
	// Close ends the workspace: an engine that created a remote resource
	// removes it (a workspace the engine keeps, such as a local directory,
	// stays). Close is idempotent; operations after it fail with
	// [ErrGone].
	Close(ctx context.Context) error
}

// Info describes a workspace, as [Engine.List] reports it.
type Info struct {
	// ID is the engine's name for the workspace (a container id, a forkd
	// workspace name, a directory).
	ID string `json:"id"`
	// Engine is the engine's name: "local", "docker", "forkd", ...
	Engine string `json:"engine"`
	// Session is the session the workspace belongs to.
	Session string `json:"session"`
	// Labels are the labels it carries (see [Labels]).
	Labels map[string]string `json:"labels,omitempty"`
	// Created is when it was created; zero when the engine does not say.
	Created time.Time `json:"created,omitzero"`
	// State is the engine's word for its state ("running", "exited", ...).
	State string `json:"state,omitempty"`
	// Attached is true when the workspace existed before this process
	// opened it ([Engine.Attach]).
	Attached bool `json:"attached,omitempty"`
}

// Engine creates, finds and removes the workspaces of one kind. Engines
// must be safe for concurrent use.
type Engine interface {
	// Name is the engine's name, as --workspace and Info.Engine spell it.
	Name() string
	// Create creates the workspace of session. A session that already has
	// one fails (use Attach).
	Create(ctx context.Context, session string) (Workspace, error)
	// Attach opens the existing workspace of session, or fails with an
	// error wrapping [ErrNotFound].
	Attach(ctx context.Context, session string) (Workspace, error)
	// List reports the workspaces of this engine that carry helikon's
	// labels, whichever process or user created them.
	List(ctx context.Context) ([]Info, error)
	// Remove removes the workspace with this ID (from List) and
	// everything it holds. A workspace already gone is not an error.
	Remove(ctx context.Context, id string) error
}
