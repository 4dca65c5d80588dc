package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/paigasus/helikon/workspace"
)

// The errors of this package are *fs.PathError values naming the operation
// and the path as the caller gave it, whose Err is what callers branch on
// with errors.Is: [workspace.ErrOutside] for a path that leaves the root,
// [fs.ErrNotExist], [workspace.ErrNotRegular], [workspace.ErrTooLarge],
// [workspace.ErrChanged], [fs.ErrInvalid] for a path no file can have, or
// the system's errno (syscall.ENOTDIR, ELOOP, ENOSPC, EFBIG, EACCES, ...).
// The messages are for operators and logs; package filetool words them for
// a model. The sentinels are package workspace's, so that an FS over a
// FS and a remote one fail alike; workspace imports nothing of this
// package, which keeps the contract light.

// pathError is the error of operation op on p, the path as the caller gave
// it.
func pathError(op, p string, err error) error {
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// outside is the error for a path that leaves the root.
func outside(op, p string) error { return pathError(op, p, workspace.ErrOutside) }

// escapeErr is os.Root's unexported "path escapes from parent" error, learned
// from the first root opened (see learnEscapeError). Matching the value is
// sturdier than matching its text.
var (
	escapeOnce sync.Once
	escapeErr  error
)

func learnEscapeError(r *os.Root) {
	escapeOnce.Do(func() {
		_, err := r.Lstat("..")
		var pe *fs.PathError
		if errors.As(err, &pe) {
			escapeErr = pe.Err
		}
	})
}

// isEscape reports whether err is os.Root refusing a path that leaves it.
func isEscape(err error) bool {
	if escapeErr != nil && errors.Is(err, escapeErr) {
		return true
	}
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}

// mapErr turns an error of an os.Root or file operation for op on p into
// the package's form: os.Root's escape becomes [workspace.ErrOutside], and
// the operating system's wrapping (which names the path relative to the
// root) is replaced by one naming p.
func mapErr(op, p string, err error) error {
	if err == nil {
		return nil
	}
	if isEscape(err) {
		return outside(op, p)
	}
	var pe *fs.PathError
	var le *os.LinkError
	var se *os.SyscallError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	case errors.As(err, &se):
		err = se.Err
	}
	return pathError(op, p, err)
}

// notRegular returns the error of op for p, whose information is fi, when
// it is not a regular file, or nil.
func notRegular(op, p string, fi fs.FileInfo) error {
	m := fi.Mode()
	var what string
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		what = "a directory"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		what = "a socket"
	case m&fs.ModeDevice != 0:
		what = "a device file"
	default:
		what = "mode " + m.String()
	}
	return pathError(op, p, fmt.Errorf("%w: %s", workspace.ErrNotRegular, what))
}
