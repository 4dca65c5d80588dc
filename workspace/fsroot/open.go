package fsroot

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
// help. Paths are resolved as by [FS.RealPath], and the file opened is
// the one RealPath names: what a permission rule was matched against is what
// is read (a concurrent rename aside), even for a path os.Root alone would
// resolve differently.
func (s *FS) OpenRegular(p string) (*os.File, fs.FileInfo, error) {
	f, fi, _, err := s.OpenFile(p)
	return f, fi, err
}

// OpenFile is [FS.OpenRegular] that also returns the path it opened:
// p relative to the root with its links resolved, as [FS.RealPath]
// returns it. The path is the one the open's own walk took, through the
// directory descriptors it opened and checked, not p resolved again: a
// directory swapped for a link while the call runs leads the walk to the
// link's target, and the path returned is the target's.
func (s *FS) OpenFile(p string) (*os.File, fs.FileInfo, string, error) {
	const op = "open"
	var (
		f    *os.File
		fi   fs.FileInfo
		real string
	)
	_, err := s.walk(op, p, func(w *walker, r string) (err error) {
		f, fi, err = w.openRegular(r)
		real = r
		return err
	})
	if err != nil {
		return nil, nil, "", err
	}
	return f, fi, real, nil
}

// openRegular opens the regular file the walk ended on, real, for reading,
// from the descriptor of its directory. The file is checked on its open
// descriptor: it must be regular, and the file the look-up found (a file
// swapped in since, or a link os.Root followed, starts the walk over).
func (w *walker) openRegular(real string) (*os.File, fs.FileInfo, error) {
	op, p := w.op, w.p
	if real == "." {
		return nil, nil, pathError(op, p, fmt.Errorf("%w: the sandbox root directory", workspace.ErrNotRegular))
	}
	dir, base, want, err := w.parent()
	if err != nil {
		return nil, nil, err
	}
	if want == nil {
		return nil, nil, pathError(op, p, fs.ErrNotExist)
	}
	// The look-up's information first, so that a device is never opened
	// through this name.
	if err := notRegular(op, p, want); err != nil {
		return nil, nil, err
	}
	w.cost++
	f, err := dir.OpenFile(base, os.O_RDONLY|openReadFlags, 0)
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
	// The look-up found a regular file: the descriptor is of that file,
	// and so regular too, or the name was swapped.
	if !os.SameFile(fi, want) {
		f.Close()
		return nil, nil, pathError(op, p, &swappedError{name: real})
	}
	return f, fi, nil
}
