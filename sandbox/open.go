package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/paigasus/helikon"
)

// OpenRegular opens the regular file p for reading and returns it with its
// information. A directory, FIFO, socket or device is refused with an other
// error that says so, without blocking: the file is opened non-blocking
// (opening a FIFO for reading would otherwise wait for a writer) and its type
// is checked on the open descriptor, so swapping it after a check does not
// help. Paths are resolved as by [Sandbox.RealPath], and the file opened is
// the one RealPath names: what a permission rule was matched against is what
// is read (a concurrent rename aside), even for a path os.Root alone would
// resolve differently.
func (s *Sandbox) OpenRegular(p string) (*os.File, fs.FileInfo, error) {
	real, err := s.RealPath(p)
	if err != nil {
		return nil, nil, err
	}
	return s.openRegular(p, real)
}

// openRegular is OpenRegular for rel, a path relative to the root, naming it
// p in errors.
func (s *Sandbox) openRegular(p, rel string) (*os.File, fs.FileInfo, error) {
	// A cheap check first, so that a device is not even opened in the
	// common case; the check on the descriptor below is the one that holds.
	if fi, err := s.root.Stat(rel); err == nil {
		if err := notRegular(p, fi); err != nil {
			return nil, nil, err
		}
	}
	f, err := s.root.OpenFile(rel, os.O_RDONLY|openReadFlags, 0)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) { // open(2) on a socket
			return nil, nil, helikon.Other(fmt.Errorf("%s is a socket, not a regular file; only regular files can be read", p))
		}
		return nil, nil, s.mapErr(p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, s.mapErr(p, err)
	}
	if err := notRegular(p, fi); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// notRegular returns the error for a file that is not a regular file, or nil.
func notRegular(p string, fi fs.FileInfo) error {
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		return helikon.Other(fmt.Errorf("%s is a directory, not a file; list it with a shell command such as ls, or name a file inside it", p))
	case m&fs.ModeNamedPipe != 0:
		return helikon.Other(fmt.Errorf("%s is a named pipe (FIFO), not a regular file; it is refused because reading it could block forever", p))
	case m&fs.ModeSocket != 0:
		return helikon.Other(fmt.Errorf("%s is a socket, not a regular file; only regular files can be read or written", p))
	case m&fs.ModeDevice != 0:
		return helikon.Other(fmt.Errorf("%s is a device file, not a regular file; only regular files can be read or written", p))
	}
	return helikon.Other(fmt.Errorf("%s is not a regular file (mode %s); only regular files can be read or written", p, m))
}
