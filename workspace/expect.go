package workspace

import (
	"context"
	"errors"
	"io/fs"
	"slices"
)

// WriteFileExpect writes data to name when name leads to one of expect, as
// [ExpectWriter] defines it. It calls fsys's own WriteFileExpect when fsys
// is an ExpectWriter (one operation). Otherwise it opens name first to
// learn the file an existing path leads to ([File.Path]) and refuses when
// that is not expected, then writes, and removes again a new file whose
// path ([WriteResult.Path]) is not expected: such a file existed for an
// instant, and a concurrent writer can swap a link between the open and
// the write.
func WriteFileExpect(ctx context.Context, fsys FS, name string, data []byte, expect []string) (WriteResult, error) {
	if w, ok := fsys.(ExpectWriter); ok {
		return w.WriteFileExpect(ctx, name, data, expect)
	}
	// A failed open (a missing file, a directory) is left to the write,
	// which creates the file or refuses the path.
	if err := openExpect(ctx, fsys, "write", name, expect); err != nil && errors.As(err, new(*UnexpectedPathError)) {
		return WriteResult{}, err
	}
	res, err := fsys.WriteFile(ctx, name, data)
	if err != nil {
		return res, err
	}
	if !slices.Contains(expect, res.Path) {
		// A new file through a linked directory: take it back.
		if res.Created {
			fsys.Remove(ctx, res.Path)
		}
		return WriteResult{}, &fs.PathError{Op: "write", Path: name, Err: &UnexpectedPathError{Path: res.Path}}
	}
	return res, nil
}

// UpdateFileExpect updates name when it leads to one of expect, as
// [ExpectWriter] defines it. It calls fsys's own UpdateFileExpect when fsys
// is an ExpectWriter. Otherwise it opens name first to learn the file it
// leads to ([File.Path]), refuses when that is not expected, and updates:
// a concurrent writer can swap a link between the open and the update.
func UpdateFileExpect(ctx context.Context, fsys FS, name string, maxSize int64, expect []string, update func(old []byte) ([][]byte, error)) (WriteResult, error) {
	if w, ok := fsys.(ExpectWriter); ok {
		return w.UpdateFileExpect(ctx, name, maxSize, expect, update)
	}
	// A path that is not a regular file is left to the update, which
	// refuses it with its own error.
	if err := openExpect(ctx, fsys, "update", name, expect); err != nil && !errors.Is(err, ErrNotRegular) {
		return WriteResult{}, err
	}
	return fsys.UpdateFile(ctx, name, maxSize, update)
}

// openExpect opens name and fails with an *UnexpectedPathError when the
// file it opened is not one of expect.
func openExpect(ctx context.Context, fsys FS, op, name string, expect []string) error {
	f, err := fsys.Open(ctx, name)
	if err != nil {
		return err
	}
	real := f.Path()
	f.Close()
	if !slices.Contains(expect, real) {
		return &fs.PathError{Op: op, Path: name, Err: &UnexpectedPathError{Path: real}}
	}
	return nil
}
