package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/paigasus/helikon/workspace"
)

// OpenRegular opens the regular file p for reading and returns it with its
// information. A directory, FIFO, socket or device is refused with an error
// wrapping [workspace.ErrNotRegular] that says which, without blocking: the file is opened non-blocking
// (opening a FIFO for reading would otherwise wait for a writer) and its type
// is checked on the open descriptor, so swapping it after a check does not
// help. Paths are resolved as by [Sandbox.RealPath], and the file opened is
// the one RealPath names: what a permission rule was matched against is what
// is read (a concurrent rename aside), even for a path os.Root alone would
// resolve differently.
func (s *Sandbox) OpenRegular(p string) (*os.File, fs.FileInfo, error) {
	f, fi, _, err := s.OpenFile(p)
	return f, fi, err
}

// OpenFile is [Sandbox.OpenRegular] that also returns the path it opened:
// p relative to the root with its links resolved, as [Sandbox.RealPath]
// returns it.
func (s *Sandbox) OpenFile(p string) (*os.File, fs.FileInfo, string, error) {
	const op = "open"
	real, _, err := s.resolve(op, p)
	if err != nil {
		return nil, nil, "", err
	}
	f, fi, err := s.openRegular(op, p, real)
	return f, fi, real, err
}

// openRegular is OpenRegular for rel, a path relative to the root, naming it
// p in errors.
func (s *Sandbox) openRegular(op, p, rel string) (*os.File, fs.FileInfo, error) {
	// A cheap check first, so that a device is not even opened in the
	// common case; the check on the descriptor below is the one that holds.
	if fi, err := s.root.Stat(rel); err == nil {
		if err := notRegular(op, p, fi); err != nil {
			return nil, nil, err
		}
	}
	f, err := s.root.OpenFile(rel, os.O_RDONLY|openReadFlags, 0)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) { // open(2) on a socket
			return nil, nil, pathError(op, p, fmt.Errorf("%w: a socket", workspace.ErrNotRegular))
		}
		return nil, nil, mapErr(op, p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, mapErr(op, p, err)
	}
	if err := notRegular(op, p, fi); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}
