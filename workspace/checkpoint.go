package workspace

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"time"
	"unicode/utf8"

	// The unified diff of Go's own tools (gopls' internal/diff), exported:
	// Myers' algorithm with the context lines people expect, which is
	// neither short nor worth writing again.
	udiff "github.com/aymanbagabas/go-udiff"
)

// Errors of [Checkpointer], wrapped, for callers to match with [errors.Is].
var (
	// ErrNoCheckpoint: the checkpoint named does not exist (never taken,
	// or dropped).
	ErrNoCheckpoint = errors.New("no such checkpoint")
	// ErrCheckpointLimit: taking the checkpoint would exceed the store's
	// bound on its size; nothing was stored. Drop old checkpoints or raise
	// the bound.
	ErrCheckpointLimit = errors.New("checkpoint store is full")
	// ErrTreeChanged: the tree changed while a checkpoint or a restore
	// walked it (a command of the workspace still running); nothing
	// half-done is recorded. Try again once the command ends.
	ErrTreeChanged = errors.New("the tree changed during the checkpoint")
)

// Checkpointer is implemented by workspaces whose whole tree can be
// recorded and brought back: every change a file tool or a command makes
// inside the root (files written or deleted, modes, symbolic links,
// directories). Callers discover it by type assertion on a [Workspace] or
// an [FS]:
//
//	if cp, ok := ws.(workspace.Checkpointer); ok { id, err := cp.Checkpoint(ctx, "turn 3") ... }
//
// What every implementation guarantees, held by the conformance suite
// workspacetest.RunCheckpointer:
//
//   - Restore brings back, for every path of the tree, its type, content,
//     permission bits and link target as the checkpoint recorded them, and
//     removes what was not there; a symbolic link is recorded and restored
//     as a link, never followed.
//   - The checkpoint data lives outside the root, where the file tools
//     cannot name it.
//   - A checkpoint, a diff or a restore never reads or writes outside the
//     root, whatever links a concurrent command swaps in.
//
// Implementations document what they do not record (owners, extended
// attributes, times).
type Checkpointer interface {
	// Checkpoint records the tree as it is now and returns the
	// checkpoint's description; label is free text for people ("turn 3").
	// A store at its bound fails with [ErrCheckpointLimit].
	Checkpoint(ctx context.Context, label string) (CheckpointInfo, error)
	// Checkpoints lists the checkpoints kept, oldest first.
	Checkpoints(ctx context.Context) ([]CheckpointInfo, error)
	// Diff reports what changed from checkpoint from to checkpoint to, or
	// to the tree as it is now when to is empty, sorted by path.
	Diff(ctx context.Context, from, to string) ([]Change, error)
	// Restore brings the tree back to checkpoint id: the whole tree, or
	// when paths are given only those paths (relative to the root, slash-
	// separated) and everything below them.
	Restore(ctx context.Context, id string, paths ...string) error
	// DropCheckpoint removes checkpoint id and the data only it used.
	DropCheckpoint(ctx context.Context, id string) error
}

// CheckpointInfo describes a checkpoint.
type CheckpointInfo struct {
	// ID names the checkpoint for Diff, Restore and DropCheckpoint.
	ID string `json:"id"`
	// Label is the caller's text.
	Label string `json:"label,omitempty"`
	// Created is when it was taken.
	Created time.Time `json:"created"`
	// Entries is the number of files, directories and links recorded.
	Entries int `json:"entries"`
	// Bytes is the size of the regular files recorded (before sharing
	// between checkpoints).
	Bytes int64 `json:"bytes"`
}

// ChangeKind says how a path changed between two states of a tree.
type ChangeKind string

// The kinds of change, as [Change.Kind] and JSON spell them.
const (
	// ChangeAdded: the path did not exist before.
	ChangeAdded ChangeKind = "added"
	// ChangeDeleted: the path no longer exists.
	ChangeDeleted ChangeKind = "deleted"
	// ChangeModified: the content or the link target changed, or the
	// path became another type (a file replaced by a link).
	ChangeModified ChangeKind = "modified"
	// ChangeMode: only the permission bits changed.
	ChangeMode ChangeKind = "mode"
)

// Change is one path's difference between two states of a tree.
type Change struct {
	// Path is relative to the root, slash-separated; it may hold any byte
	// a file name can, newlines and invalid UTF-8 included.
	Path string `json:"path"`
	// Kind is how it changed.
	Kind ChangeKind `json:"kind"`
	// OldMode and NewMode are the type and permission bits before and
	// after (zero when the path did not exist).
	OldMode fs.FileMode `json:"old_mode,omitempty"`
	NewMode fs.FileMode `json:"new_mode,omitempty"`
	// OldSize and NewSize are the sizes of regular files.
	OldSize int64 `json:"old_size,omitempty"`
	NewSize int64 `json:"new_size,omitempty"`
	// OldTarget and NewTarget are the targets of symbolic links.
	OldTarget string `json:"old_target,omitempty"`
	NewTarget string `json:"new_target,omitempty"`
	// Binary is true when either side is a regular file that is not text
	// (a NUL byte, invalid UTF-8, or larger than the diff cap): its change
	// is described by the sizes alone.
	Binary bool `json:"binary,omitempty"`
	// Diff is the unified diff of a text file's content; empty for
	// binaries, directories, links and mode changes.
	Diff string `json:"diff,omitempty"`
}

// MaxTextDiff is the largest file, in bytes, whose change [UnifiedDiff]
// shows line by line: beyond it a diff is too long to read, and computing
// it costs more than the checkpoint did.
const MaxTextDiff = 1 << 20

// UnifiedDiff returns the unified diff of a text file from old to new,
// labelled with name, for [Change.Diff]; text reports whether both sides
// are text (valid UTF-8, no NUL byte, at most [MaxTextDiff] bytes). When
// it is false the diff is empty and the change is told by its sizes.
func UnifiedDiff(name string, old, new []byte) (diff string, text bool) {
	if !isText(old) || !isText(new) {
		return "", false
	}
	return udiff.Unified("a/"+name, "b/"+name, string(old), string(new)), true
}

func isText(b []byte) bool {
	return len(b) <= MaxTextDiff && bytes.IndexByte(b, 0) < 0 && utf8.Valid(b)
}
