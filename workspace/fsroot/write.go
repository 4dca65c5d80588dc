package fsroot

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/paigasus/helikon/workspace"
)

// WriteResult describes a completed write: the path written (relative to
// the root, symbolic links resolved), whether it was created, and the size
// of the new content. It is the workspace contract's type.
type WriteResult = workspace.WriteResult

// WriteFile atomically replaces the file p with data, creating it and its
// parent directories (inside the root) when they are missing. The new file
// keeps an existing file's permission bits and, when the process runs as
// root, its owner and group; its set-user-ID and set-group-ID bits only as
// long as it keeps the owner and group they refer to. A new file gets mode
// 0666 less the umask. A
// symbolic link at p is followed (inside the root) and its target is
// replaced; the link stays a link. See the package documentation for the
// guarantees.
func (s *FS) WriteFile(ctx context.Context, p string, data []byte) (WriteResult, error) {
	return s.writeFile(ctx, p, data, nil)
}

// WriteFileExpect is [FS.WriteFile] done only when p, its links
// resolved, is one of expect (paths relative to the root, clean and
// slash-separated, as [WriteResult.Path] reports them): it implements
// [workspace.ExpectWriter]. The path compared is the one the write's own
// walk resolved, and the write then goes through the directory descriptors
// that walk opened, so a directory swapped for a link after the
// permission check cannot lead the write to a file the check did not see.
// Otherwise nothing is written and no directory is created, and the error
// wraps a [*workspace.UnexpectedPathError] naming where p leads. An empty
// expect allows nothing.
func (s *FS) WriteFileExpect(ctx context.Context, p string, data []byte, expect []string) (WriteResult, error) {
	return s.writeFile(ctx, p, data, expectIn(expect))
}

// writeFile is WriteFile; when check is not nil, it is called with the
// resolved path before anything is created or written, and its error is
// returned.
func (s *FS) writeFile(ctx context.Context, p string, data []byte, check func(real string) error) (res WriteResult, err error) {
	const op = "write"
	_, err = s.walk(op, p, func(w *walker, rel string) error {
		unlock, err := s.lockChecked(op, p, rel, check)
		if err != nil {
			return err
		}
		defer unlock()
		if err := ctx.Err(); err != nil {
			return pathError(op, p, err)
		}
		parent, base, _, err := w.makeParent()
		if err != nil {
			return err
		}
		res, err = s.replace(ctx, op, p, rel, parent, base, [][]byte{data}, nil)
		return err
	})
	if err != nil {
		return WriteResult{}, writeErr(op, p, err)
	}
	return res, nil
}

// lockChecked refuses rel, the resolved path of p, when it may not be
// written or check refuses it (before anything is created, read or
// written), and otherwise takes the per-path lock that serialises writes,
// returning its release.
func (s *FS) lockChecked(op, p, rel string, check func(real string) error) (unlock func(), err error) {
	if err := writable(op, p, rel); err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(rel); err != nil {
			return nil, pathError(op, p, err)
		}
	}
	return s.locks.lock(rel), nil
}

// expectIn returns the check of a write that may land only on one of
// expect.
func expectIn(expect []string) func(real string) error {
	return func(real string) error {
		if !slices.Contains(expect, real) {
			return &workspace.UnexpectedPathError{Path: real}
		}
		return nil
	}
}

// UpdateFile replaces the content of the existing regular file p with what
// update(old) returns, atomically as [FS.WriteFile] does. It is the
// primitive for edits: concurrent UpdateFile and WriteFile calls on the same
// path of one FS are serialised, so every update sees the result of the
// previous one. A file larger than maxSize bytes (when maxSize > 0) is
// refused with an error wrapping [workspace.ErrTooLarge] before it is read;
// with maxSize <= 0 the file is read to its end, however large. An error
// from update is returned as is and nothing is written. When the file
// changed between the read and the rename (another process wrote, replaced
// or removed it), nothing is written and the error wraps
// [workspace.ErrChanged].
//
// update returns the new content as pieces written one after the other;
// they may be slices of old, so that an edit of a large file writes the
// unchanged parts straight from the buffer it was read into instead of
// copying them into a new one.
func (s *FS) UpdateFile(ctx context.Context, p string, maxSize int64, update func(old []byte) ([][]byte, error)) (WriteResult, error) {
	return s.updateFile(ctx, p, maxSize, nil, update)
}

// UpdateFileExpect is [FS.UpdateFile] done only when p, its links
// resolved, is one of expect, checked as [FS.WriteFileExpect] checks
// it, before the file is opened: a file the permission check did not see
// is neither read nor written. It implements [workspace.ExpectWriter].
func (s *FS) UpdateFileExpect(ctx context.Context, p string, maxSize int64, expect []string, update func(old []byte) ([][]byte, error)) (WriteResult, error) {
	return s.updateFile(ctx, p, maxSize, expectIn(expect), update)
}

// updateFile is UpdateFile; check is as for writeFile, called before the
// file is opened.
func (s *FS) updateFile(ctx context.Context, p string, maxSize int64, check func(real string) error, update func(old []byte) ([][]byte, error)) (res WriteResult, err error) {
	const op = "update"
	var updateErr error // update's own, returned as is
	_, err = s.walk(op, p, func(w *walker, rel string) error {
		unlock, err := s.lockChecked(op, p, rel, check)
		if err != nil {
			return err
		}
		defer unlock()
		// A writer this one waited for may have replaced the file since
		// the walk looked at it.
		if err := w.lookAgain(); err != nil {
			return err
		}
		f, fi, err := w.openRegular(rel)
		if err != nil {
			return err
		}
		defer f.Close()
		if maxSize > 0 && fi.Size() > maxSize {
			return pathError(op, p, fmt.Errorf("%d bytes, over the limit of %d: %w", fi.Size(), maxSize, workspace.ErrTooLarge))
		}
		// Read to the end, not to the size the stat gave: a file can grow, and
		// files of /proc-like file systems report a size of 0. Cutting the read
		// there would write the file back without its tail.
		var r io.Reader = f
		if maxSize > 0 {
			r = io.LimitReader(f, maxSize+1)
		}
		old := make([]byte, 0, fi.Size()+1)
		old, err = readAllInto(old, r)
		if err != nil {
			return mapErr(op, p, err)
		}
		if maxSize > 0 && int64(len(old)) > maxSize { // it grew after the stat
			return pathError(op, p, fmt.Errorf("over the limit of %d bytes: %w", maxSize, workspace.ErrTooLarge))
		}
		f.Close()
		if err := ctx.Err(); err != nil {
			return pathError(op, p, err)
		}
		data, err := update(old)
		if err != nil {
			updateErr = err
			return err
		}
		// openRegular left the walk in the file's directory.
		parent, base, _, err := w.parent()
		if err != nil {
			return err
		}
		res, err = s.replace(ctx, op, p, rel, parent, base, data, fi)
		return err
	})
	switch {
	case updateErr != nil:
		return WriteResult{}, updateErr
	case err != nil:
		return WriteResult{}, writeErr(op, p, err)
	}
	return res, nil
}

// unchanged reports whether cur is still the file that was read as was:
// the same inode, size and modification time. Timestamps have the
// granularity of the kernel's clock tick, so a change of the same size
// within one tick of the read goes unseen.
func unchanged(cur, was fs.FileInfo) bool {
	return os.SameFile(cur, was) && cur.Size() == was.Size() && cur.ModTime().Equal(was.ModTime())
}

// readAllInto is io.ReadAll appending to buf, which already has the
// capacity the file needs, so that a large file is read without regrowing.
func readAllInto(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// writable refuses to write p, resolved to rel: the root itself and paths
// ending in a slash are refused with [workspace.ErrNotRegular].
func writable(op, p, rel string) error {
	if strings.HasSuffix(p, "/") {
		return pathError(op, p, fmt.Errorf("%w: the path ends in a slash (a trailing slash names a directory)", workspace.ErrNotRegular))
	}
	if rel == "." {
		return pathError(op, p, fmt.Errorf("%w: the sandbox root directory", workspace.ErrNotRegular))
	}
	// "new/." and "a/b/.." name directories: writing them must not create
	// a file called "new" or "a".
	if last := path.Base(filepath.ToSlash(p)); last == "." || last == ".." {
		return pathError(op, p, fmt.Errorf("%w: the path ends in %q, which names a directory", workspace.ErrNotRegular, last))
	}
	return nil
}

// writeErr is the error of a write of p whose walk failed with err: a path
// ending in a slash is refused as naming a directory unless the walk
// found it outside the root or invalid (the caller must learn that first).
func writeErr(op, p string, err error) error {
	if strings.HasSuffix(p, "/") && !errors.Is(err, workspace.ErrOutside) && !errors.Is(err, fs.ErrInvalid) && !errors.Is(err, workspace.ErrNotRegular) {
		return pathError(op, p, fmt.Errorf("%w: the path ends in a slash (a trailing slash names a directory)", workspace.ErrNotRegular))
	}
	return err
}

// replace writes the pieces of data to a temporary file in parent, the
// open directory of rel, and renames it over base, rel's last component.
// The caller holds rel's lock. When read is not nil, it
// is the file the data was computed from, and replace fails with ErrChanged
// rather than overwrite a change another process made since.
func (s *FS) replace(ctx context.Context, op, p, rel string, parent *os.Root, base string, data [][]byte, read fs.FileInfo) (res WriteResult, err error) {
	if err := ctx.Err(); err != nil {
		return res, pathError(op, p, err)
	}
	// Every step works relative to parent, the descriptor the walk opened
	// for rel's directory, so renaming or swapping a directory on the path
	// cannot redirect us.
	old, err := parent.Lstat(base)
	created := errors.Is(err, fs.ErrNotExist)
	switch {
	case created:
		old = nil
	case err != nil:
		return res, mapErr(op, p, err)
	case old.Mode()&fs.ModeSymlink != 0:
		return res, pathError(op, p, fmt.Errorf("replaced by a symbolic link while it was being written: %w", syscall.EAGAIN))
	default:
		if err := notRegular(op, p, old); err != nil {
			return res, err
		}
	}

	removeStaleTemps(parent)

	perm := fs.FileMode(0o666) // less the umask, as os.Create does
	if old != nil {
		perm = 0o600 // widened to the old mode by chmod below
	}
	tmp, tmpName, err := createTemp(parent, base, perm)
	if err != nil {
		return res, mapErr(op, p, err)
	}
	// The lock on tmp is released by Close; keep it open until after the
	// rename so that no other writer takes the file for a stale one.
	defer func() {
		if err != nil {
			parent.Remove(tmpName)
		}
		tmp.Close()
	}()
	// Small pieces (many replacements) are gathered into large writes;
	// large ones go straight to the file.
	bw := bufio.NewWriterSize(tmp, 1<<20)
	var size int64
	for _, d := range data {
		if _, err = bw.Write(d); err != nil {
			return res, mapErr(op, p, err)
		}
		size += int64(len(d))
	}
	if err = bw.Flush(); err != nil {
		return res, mapErr(op, p, err)
	}
	if old != nil {
		keepOwner(tmp, old) // before chmod: chown clears set-user-ID bits
		if err = tmp.Chmod(keptMode(tmp, old)); err != nil {
			return res, mapErr(op, p, err)
		}
	}
	if err = tmp.Sync(); err != nil {
		return res, mapErr(op, p, err)
	}
	if err = ctx.Err(); err != nil {
		return res, pathError(op, p, err)
	}
	if read != nil {
		// As late as possible: what is left is the window between this
		// check and the rename, microseconds instead of the whole edit.
		if cur, lerr := parent.Lstat(base); lerr != nil || !unchanged(cur, read) {
			return res, pathError(op, p, workspace.ErrChanged)
		}
	}
	if err = parent.Rename(tmpName, base); err != nil {
		return res, mapErr(op, p, err)
	}
	syncDir(parent)
	return WriteResult{Path: rel, Created: created, BytesWritten: size}, nil
}

// keptMode is the mode the new file tmp takes over from the file it
// replaces: the permission and sticky bits, and the set-user-ID and
// set-group-ID bits only while tmp has the old file's owner and group.
// Otherwise keeping them would hand the file's privileges to a new identity
// with new content: a set-user-ID file of another user rewritten by an
// unprivileged writer would become set-user-ID to the writer, and one whose
// owner could not be kept (an owner unmapped in a user namespace, a file
// system that refuses chown) set-user-ID to root. The kernel drops both bits
// when an unprivileged process writes to such a file, for the same reason.
func keptMode(tmp *os.File, old fs.FileInfo) fs.FileMode {
	mode := old.Mode() & (fs.ModePerm | fs.ModeSticky)
	if old.Mode()&(fs.ModeSetuid|fs.ModeSetgid) == 0 {
		return mode
	}
	cur, err := tmp.Stat()
	if err != nil {
		return mode
	}
	uid, gid := sameOwner(cur, old)
	if uid {
		mode |= old.Mode() & fs.ModeSetuid
	}
	if gid {
		mode |= old.Mode() & fs.ModeSetgid
	}
	return mode
}

// syncDir flushes the directory entry of a rename; a failure only weakens
// durability after a power loss, not atomicity, so it is not reported.
func syncDir(r *os.Root) {
	if d, err := r.Open("."); err == nil {
		d.Sync()
		d.Close()
	}
}

// tempMarker and tempSuffix frame the names of temporary files:
// ".<base>.helikon-<16 hex>.tmp". Base names are cut to keep within
// NAME_MAX (255 bytes).
const (
	tempMarker  = ".helikon-"
	tempSuffix  = ".tmp"
	tempBaseMax = 200
)

func tempName(base string) string {
	if len(base) > tempBaseMax {
		base = base[:tempBaseMax]
	}
	var b [8]byte
	rand.Read(b[:])
	return "." + base + tempMarker + hex.EncodeToString(b[:]) + tempSuffix
}

func isTempName(name string) bool {
	rest, ok := strings.CutSuffix(name, tempSuffix)
	if !ok || !strings.HasPrefix(name, ".") {
		return false
	}
	i := strings.LastIndex(rest, tempMarker)
	if i < 0 {
		return false
	}
	h := rest[i+len(tempMarker):]
	if len(h) != 16 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// createTemp creates and locks a new temporary file for base in dir.
//
// The lock protocol (hand-written: no listed library offers it): a writer
// creates its file with O_EXCL and then takes an exclusive flock on it; a
// cleaner removes a temporary file only while holding its lock, which it can
// only get when no live writer holds it. A cleaner may win the race between
// a writer's create and its lock, so after locking, the writer checks that
// the name still refers to its file and starts over if not.
func createTemp(dir *os.Root, base string, perm fs.FileMode) (*os.File, string, error) {
	var lastErr error
	for range 16 {
		name := tempName(base)
		f, err := dir.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) {
			lastErr = err
			continue
		}
		if err != nil {
			return nil, "", err
		}
		if err := lockFile(f, true); err != nil {
			f.Close()
			dir.Remove(name)
			return nil, "", err
		}
		fi, err1 := f.Stat()
		cur, err2 := dir.Lstat(name)
		if err1 == nil && err2 == nil && os.SameFile(fi, cur) {
			return f, name, nil
		}
		f.Close() // a cleaner took it for a dead writer's file
		lastErr = fmt.Errorf("temporary file %s vanished", name)
	}
	return nil, "", fmt.Errorf("could not create a temporary file: %w", lastErr)
}

// removeStaleTemps removes the temporary files of dead writers in dir: those
// whose lock nobody holds. Failures are ignored; the next write tries again.
// The directory is read in batches, so that a huge one costs time but not
// memory.
func removeStaleTemps(dir *os.Root) {
	if !canLock {
		return
	}
	d, err := dir.Open(".")
	if err != nil {
		return
	}
	defer d.Close()
	for {
		names, err := d.Readdirnames(256)
		for _, name := range names {
			if isTempName(name) {
				removeIfStale(dir, name)
			}
		}
		if err != nil || len(names) == 0 {
			return
		}
	}
}

// removeIfStale removes the temporary file name from dir when no live writer
// holds its lock. Only regular files are opened to take the lock: an entry
// that merely has a temporary file's name may be a symbolic link, a FIFO or a
// device put there by another process, and opening a device can have effects
// (arm a watchdog, rewind a tape).
func removeIfStale(dir *os.Root, name string) {
	fi, err := dir.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	f, err := dir.OpenFile(name, os.O_RDONLY|openReadFlags, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if got, err := f.Stat(); err != nil || !os.SameFile(got, fi) {
		return // swapped since the Lstat
	}
	if lockFile(f, false) != nil {
		return // a live writer's
	}
	if cur, err := dir.Lstat(name); err == nil && os.SameFile(fi, cur) {
		dir.Remove(name)
	}
}

// lockTable serialises writers of one path within an FS. It stripes
// paths over a fixed set of mutexes so that it never grows; two paths that
// share a stripe merely wait for each other.
type lockTable struct {
	seed maphash.Seed
	mu   [64]sync.Mutex
}

func newLockTable() *lockTable { return &lockTable{seed: maphash.MakeSeed()} }

func (t *lockTable) lock(rel string) (unlock func()) {
	m := &t.mu[maphash.String(t.seed, rel)%uint64(len(t.mu))]
	m.Lock()
	return m.Unlock
}
