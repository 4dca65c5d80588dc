package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"syscall"
)

// Stat returns the information of the file p names, its symbolic links
// (the last component's included) resolved inside the root as by
// [FS.RealPath]: what the walk's look-up of the file found.
func (s *FS) Stat(p string) (fs.FileInfo, error) {
	const op = "stat"
	var fi fs.FileInfo
	_, err := s.walk(op, p, func(w *walker, real string) error {
		if real == "." {
			var err error
			fi, err = s.root.Stat(".")
			return mapErr(op, p, err)
		}
		fi = w.infos[len(w.infos)-1]
		if fi == nil { // the walk found it, or a directory before it, missing
			return pathError(op, p, fs.ErrNotExist)
		}
		return nil
	})
	return fi, err
}

// ReadDir lists the directory p names (links resolved as by
// [FS.RealPath]), sorted by file name: the directory its walk opened.
// A FIFO in its place is refused as not a directory, without blocking.
func (s *FS) ReadDir(p string) ([]fs.DirEntry, error) {
	const op = "readdir"
	var ents []fs.DirEntry
	_, err := s.walk(op, p, func(w *walker, real string) error {
		if w.notDir {
			return pathError(op, p, syscall.ENOTDIR)
		}
		d, err := w.dir()
		if err != nil {
			return err
		}
		f, err := d.Open(".")
		if err != nil {
			return mapErr(op, p, err)
		}
		defer f.Close()
		ents, err = f.ReadDir(-1)
		return mapErr(op, p, err)
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(ents, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, nil
}

// Remove removes the file, symbolic link or empty directory p. The links
// on the way to its last component are resolved inside the root; a link as
// the last component is removed itself, never followed (as unlink(2) does).
// The entry is removed from the directory descriptor the walk opened, so a
// directory swapped for a link meanwhile cannot redirect the removal. The
// root itself cannot be removed ([fs.ErrInvalid]).
func (s *FS) Remove(p string) error {
	const op = "remove"
	rel, err := s.rel(op, p)
	if err != nil {
		return err
	}
	dir, last := splitEntry(rel)
	whole := last == "" || last == "." || last == ".."
	if whole {
		dir = rel
	}
	_, err = s.walkRel(op, p, dir, func(w *walker, real string) error {
		var d *os.Root
		var err error
		name := last
		switch {
		case whole && real == ".":
			return pathError(op, p, fmt.Errorf("the sandbox root itself: %w", fs.ErrInvalid))
		case whole:
			d, name, _, err = w.parent()
		case w.notDir:
			return pathError(op, p, fmt.Errorf("%s is not a directory: %w", real, syscall.ENOTDIR))
		default:
			d, err = w.dir()
		}
		if err != nil {
			return err
		}
		return mapErr(op, p, d.Remove(name))
	})
	return err
}

// splitEntry splits rel into the directory its last component is in and
// that component ("." for a name at the root).
func splitEntry(rel string) (dir, last string) {
	dir, last = ".", rel
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		dir, last = rel[:i], rel[i+1:]
		if dir == "" {
			dir = "."
		}
	}
	return dir, last
}

// Rename renames oldp to newp, both resolved as by [FS.Remove]: a link
// as the last component of either is the entry renamed or replaced. An
// existing file at newp is replaced atomically; a directory is replaced
// only when it is empty and oldp is a directory too, as rename(2) has it.
func (s *FS) Rename(oldp, newp string) error {
	const op = "rename"
	from, err := s.entry(op, oldp)
	if err != nil {
		return err
	}
	to, err := s.entry(op, newp)
	if err != nil {
		return err
	}
	if err := s.root.Rename(from, to); err != nil {
		var pe *fs.PathError
		errors.As(mapErr(op, oldp, err), &pe)
		return &os.LinkError{Op: op, Old: oldp, New: newp, Err: pe.Err}
	}
	return nil
}

// entry resolves p to a directory entry: the directory it is in has its
// links resolved, its last component is kept as it is. A path ending in a
// slash, ".", or ".." names a directory through whatever links it has, and
// is resolved whole.
func (s *FS) entry(op, p string) (string, error) {
	rel, err := s.rel(op, p)
	if err != nil {
		return "", err
	}
	var real string
	dir, last := splitEntry(rel)
	switch last {
	case "", ".", "..":
		real, _, err = s.resolve(op, rel)
	default:
		real, _, err = s.resolve(op, dir)
		real = path.Join(real, last)
	}
	if err != nil {
		return "", err
	}
	if real == "." {
		return "", pathError(op, p, fmt.Errorf("the sandbox root itself: %w", fs.ErrInvalid))
	}
	return real, nil
}
