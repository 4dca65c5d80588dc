// Package sandbox confines file access to one directory tree.
//
// A [FS] is a directory opened as a confinement root with Go's
// [os.Root]: every path is resolved component by component with openat and
// O_NOFOLLOW, symbolic links are followed by the resolver itself and only
// while they stay inside the root, and ".." is resolved after links are
// substituted. The file tools (package filetool) and the Bash execution
// backends use the same FS value as their root and working directory, so
// they can never disagree about where the root is.
//
// # What is guaranteed
//
//   - Paths are resolved against the root. A relative path is taken as is; an
//     absolute path is accepted only when it lies inside the root (compared
//     component by component, so /root-evil is not inside /root) and is then
//     treated as relative. Anything that would leave the root — ".." beyond
//     it, an absolute path outside it, a symbolic link (absolute, or relative
//     and climbing out), a trailing-slash form of such a link, a
//     /proc/self/... path — is refused with an error matching
//     [workspace.ErrOutside]. Errors are *fs.PathError values naming the
//     operation and the path as given, matchable with errors.Is: a missing
//     file [fs.ErrNotExist], a file that is not regular where one is needed
//     [workspace.ErrNotRegular], a path no file can have [fs.ErrInvalid],
//     and otherwise the system's errno. Their messages are for operators;
//     package filetool turns them into advice for a model.
//   - The guarantee holds against concurrent renames: a directory swapped for
//     a symbolic link while a call runs cannot redirect it outside, because
//     each step opens the next component relative to an already open
//     directory descriptor.
//   - The file methods open what [FS.RealPath] resolved, the path the
//     permission rules are matched against, so a path cannot be checked as
//     one file and opened as another (a concurrent rename aside, which still
//     cannot leave the root). A path that goes on after a file ("f/x", "f/",
//     "f/..") is refused with ENOTDIR as the kernel refuses it.
//   - Resolution costs time linear in the path's length: a path is at most
//     4096 bytes (PATH_MAX; longer ones are invalid arguments), follows at
//     most 8 links, and a path with more than 255 steps and more than 8
//     restarts for ".." is refused, the budget os.Root itself applies.
//   - [FS.WriteFile] and [FS.UpdateFile] replace a file atomically:
//     the new content goes to a temporary file in the same directory, is
//     synced, and is renamed over the target, keeping the old file's mode
//     (and, when running as root, its owner). The set-user-ID and
//     set-group-ID bits are kept only while the owner and group are: a
//     rewrite never makes a file set-ID to an identity it was not set-ID to
//     (as the kernel drops them when an unprivileged process writes such a
//     file). The temporary file of a rewrite is created 0600, never wider
//     than the file it replaces. A reader, or a process killed mid-write,
//     sees the old content or the new, never a mix. A hard link
//     inside the root to an inode outside it is never written through: the
//     rename replaces the directory entry and leaves the other inode alone.
//     Temporary files left by a killed writer are removed by the next
//     successful write in the same directory (a live writer holds an
//     advisory lock on its temporary file, so only dead writers' files are
//     removed). Only regular files are opened for that: a FIFO, device or
//     link that merely bears a temporary file's name is left alone. A write
//     that fails (disk full, EFBIG) leaves the old content and no temporary
//     file.
//   - Writes to one path from one FS are serialised, so concurrent
//     read-modify-write updates of the same file all apply; across processes
//     (or through different names for one file) the last writer wins, whole.
//     [FS.UpdateFile] does not overwrite a change another writer made
//     after its read: it checks the file's inode, size and modification
//     time just before its rename and fails with [workspace.ErrChanged] instead.
//
// # What is not guaranteed
//
//   - Reads follow hard links: a hard link inside the root to a file outside
//     it (which only someone with access outside could have made) is read
//     like any other file. Nothing can tell where the other names of an inode
//     are.
//   - Like [os.Root], an FS does not stop traversal of mount points or
//     bind mounts inside the root, does not protect /proc-like special files
//     mounted inside it, and does not refuse device files by itself (the
//     file tools do: [FS.OpenRegular] opens only regular files).
//   - Absolute symbolic links are refused even when they point inside the
//     root, as [os.Root] does.
//   - [FS.Dir] is the path the directory had when it was opened. If the
//     directory is moved, file operations follow it (they use the open
//     descriptor) but Dir, and anything that runs a process there, does not.
//   - Programs started by a shell in the sandbox directory are not confined
//     by it: that is the job of an execution backend (package backend).
//   - The check of [FS.UpdateFile] leaves a window of microseconds
//     between itself and the rename, and cannot see a change that keeps the
//     size within one tick of the kernel's file clock (a few milliseconds)
//     of the read.
//   - On platforms without flock (those that are not Unix), stale
//     temporary files of killed writers are not cleaned up.
//   - Access control lists and extended attributes (file capabilities
//     included) are not carried over to the new file; only the mode and,
//     as root, the owner are. New files belong to the writing user (root,
//     when the tools run as root), whoever owns the directory.
//   - The open of [FS.OpenRegular] checks the file's type before and
//     after opening it; a process able to make device nodes that swaps one
//     in between the two gets it opened (and then refused). A FIFO swapped
//     in is opened without blocking, and a FIFO swapped in for a directory
//     is refused as not a directory, also without blocking.
package fsroot

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/paigasus/helikon/workspace"
)

// FS is a directory opened as a confinement root. It is safe for
// concurrent use; copying the pointer (or the struct) shares the same root.
type FS struct {
	root  *os.Root
	dir   string   // absolute, symbolic links evaluated
	alias []string // other absolute spellings of dir (as given, made absolute)
	locks *lockTable
}

// Open opens dir as a sandbox root. dir may be relative (to the working
// directory) and may be reached through symbolic links; [FS.Dir]
// reports the resolved absolute path. Open fails when dir does not exist or
// is not a directory.
func Open(dir string) (*FS, error) {
	if dir == "" {
		return nil, errors.New("sandbox: empty directory name: name the directory to confine tools to")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %s: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("sandbox: no such directory: %s: %w", dir, err)
		}
		return nil, fmt.Errorf("sandbox: %s: %w", dir, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("sandbox: %s is not a directory: a sandbox root must be a directory", dir)
	}
	// "/.": see openDir.
	root, err := os.OpenRoot(real + string(filepath.Separator) + ".")
	if err != nil {
		return nil, fmt.Errorf("sandbox: open %s: %w", dir, err)
	}
	// The directory could have been swapped between EvalSymlinks and
	// OpenRoot; make sure the root is the directory we resolved.
	rfi, err := root.Stat(".")
	if err != nil || !os.SameFile(rfi, fi) {
		root.Close()
		return nil, fmt.Errorf("sandbox: %s changed while it was being opened; try again", dir)
	}
	learnEscapeError(root)
	s := &FS{root: root, dir: real, locks: newLockTable()}
	if abs != real {
		s.alias = []string{abs}
	}
	return s, nil
}

// Dir returns the absolute path of the root directory, with symbolic links
// evaluated. Execution backends use it as the working directory and write
// root.
func (s *FS) Dir() string { return s.dir }

// Root returns the underlying [os.Root]. Operations through it are confined
// to the sandbox, but they do not map errors to tool errors and do not write
// atomically; prefer the FS methods. The caller must not close it.
func (s *FS) Root() *os.Root { return s.root }

// Close releases the root's directory descriptor. Tools that share the
// sandbox stop working; close it when the last user is done.
func (s *FS) Close() error { return s.root.Close() }

// Abs returns the absolute path of rel, a path relative to the root as
// returned by [FS.Rel] or [FS.RealPath], lexically cleaned. It does
// not resolve symbolic links.
func (s *FS) Abs(rel string) string {
	return filepath.Join(s.dir, filepath.FromSlash(rel))
}

// Rel converts a path a caller (typically a model) gave into a path relative
// to the root, ready for the methods of [FS.Root], as [workspace.Rel]
// does for [FS.Dir] and for the directory as it was given to [Open]. A
// relative path is returned as given (the root resolves it, following links
// that stay inside); an absolute path must lie inside the root and is
// returned relative to it, lexically cleaned. A path that leaves the root
// lexically fails with [workspace.ErrOutside]; one that leaves it through a
// symbolic link fails so when it is used. An empty path, one containing a
// NUL byte or one longer than [workspace.MaxPathBytes] fails with
// [fs.ErrInvalid].
func (s *FS) Rel(p string) (string, error) { return s.rel("rel", p) }

func (s *FS) rel(op, p string) (string, error) {
	rel, err := workspace.Rel(s.dir, p)
	for _, d := range s.alias {
		if !errors.Is(err, workspace.ErrOutside) || !filepath.IsAbs(p) {
			break
		}
		rel, err = workspace.Rel(d, p)
	}
	if err != nil {
		return "", pathError(op, p, err)
	}
	return rel, nil
}

// maxSymlinks bounds the links followed while resolving one path. It is
// os.Root's limit for a whole operation (rootMaxSymlinks, POSIX's
// _POSIX_SYMLOOP_MAX): every file operation resolves through os.Root, so a
// path with more links could not be opened anyway.
const maxSymlinks = 8

// The walk budget of [FS.RealPath], os.Root's own: resolving ".."
// restarts from the root, so a path that has more than maxWalkSteps
// components and more than maxWalkRestarts restarts is refused (os.Root
// refuses it too). Together with [workspace.MaxPathBytes] and maxSymlinks this bounds
// the work one resolution does.
const (
	maxWalkSteps    = 255
	maxWalkRestarts = 8
)

// RealPath resolves p like [FS.Rel] and then follows every symbolic
// link in it, the last component included, without leaving the root, and
// returns the clean path relative to the root of the file p names ("." for
// the root itself). Components that do not exist are kept as written.
// A link that leads outside, or an absolute link, fails with
// [workspace.ErrOutside]; a path that goes on after a file that is not a
// directory ("file/x", "file/", "file/..") fails with ENOTDIR, as the
// kernel has it; more than 8 links with ELOOP.
//
// The permission pipeline matches rules against this path, so that a link
// cannot be used to get around a rule such as Read(.env), and the file
// methods open the path it returns. The result is a snapshot: a concurrent
// rename can change what p names afterwards, but not make the file methods
// leave the root.
func (s *FS) RealPath(p string) (string, error) {
	real, _, err := s.resolve("realpath", p)
	return real, err
}

// resolve is RealPath; it also returns the number of path components the
// os.Root calls it made walked, which is linear in the length of p (the
// tests hold it to that).
func (s *FS) resolve(op, p string) (string, int, error) {
	var real string
	cost, err := s.walk(op, p, func(_ *walker, r string) error {
		real = r
		return nil
	})
	return real, cost, err
}

// maxWalkTries is how many times [FS.walk] resolves a path whose
// names another process keeps swapping (a directory or file replaced
// between its look-up and its open). One retry absorbs an ordinary
// concurrent replacement, such as an editor's or this package's own
// atomic write of the file being read; a name that changes under three
// walks in a row is being swapped in a loop, and the call fails with
// EAGAIN rather than spin.
const maxWalkTries = 3

// walk resolves p as [FS.RealPath] does and calls use with the walk,
// its directory descriptors still open, and the resolved path. use opens
// what it needs through the walk ([walker.parent], [walker.makeParent],
// [walker.openRegular], [walker.descend]), from the descriptors the walk
// itself opened: the file it reaches is the one real names, and no second
// resolution by string can land elsewhere. When the walk or use finds a
// name swapped between its look-up and its open, walk starts over, up to
// maxWalkTries times. It returns the cost of the last walk (see resolve).
func (s *FS) walk(op, p string, use func(w *walker, real string) error) (int, error) {
	rel, err := s.rel(op, p)
	if err != nil {
		return 0, err
	}
	return s.walkRel(op, p, rel, use)
}

// walkRel is walk of rel, a path relative to the root, naming p in errors.
func (s *FS) walkRel(op, p, rel string, use func(w *walker, real string) error) (int, error) {
	for try := 1; ; try++ {
		w := walker{s: s, op: op, p: p, cur: s.root, exists: true}
		real, err := w.walk(rel)
		if err == nil {
			err = use(&w, real)
		}
		w.close()
		if try == maxWalkTries || !errors.As(err, new(*swappedError)) {
			return w.cost, err
		}
	}
}

// swappedError is the error of a walk that found a name swapped between
// its look-up and its open: another process renamed a file or directory,
// or put a link in its place. It wraps EAGAIN, which callers match; the
// walk is retried first (see maxWalkTries).
type swappedError struct{ name string }

func (e *swappedError) Error() string {
	return e.name + " changed while it was being resolved (another process is renaming files)"
}

func (e *swappedError) Unwrap() error { return syscall.EAGAIN }

// walker resolves a path one component at a time, looking each up in an
// open descriptor of its parent directory, so that a path of n components
// costs O(n) lookups rather than the O(n²) of looking up every prefix from
// the root.
//
// Every descriptor it opens is checked to be the file its look-up found
// (os.Root follows a link it meets, so a directory swapped for a link
// between the look-up and the open would otherwise be followed silently):
// the path the walk reports is the path of what it opened, and what is
// opened from its descriptors is what the permission rules were matched
// against.
type walker struct {
	s        *FS
	op       string        // the operation, for errors
	p        string        // the path as given, for errors
	done     []string      // resolved components, each an existing directory but the last (and those after a missing one)
	infos    []fs.FileInfo // what the look-up of each of done found; nil for a component not looked up or missing
	cur      *os.Root      // the directory done[:depth] names; s.root when depth is 0
	depth    int
	exists   bool // every component in done exists
	notDir   bool // done's last component exists and is not a directory
	links    int
	steps    int
	restarts int
	cost     int // components walked by os.Root calls
}

func (w *walker) close() {
	if w.cur != w.s.root {
		w.cur.Close()
	}
}

func (w *walker) push(c string, fi fs.FileInfo) {
	w.done = append(w.done, c)
	w.infos = append(w.infos, fi)
}

func (w *walker) walk(rel string) (string, error) {
	todo := splitSlash(rel)
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		w.steps++
		if w.steps > maxWalkSteps && w.restarts > maxWalkRestarts {
			return "", w.tooLong()
		}
		if w.notDir {
			// "file/x", "file/", "file/." and "file/.." all name a
			// directory that is not there.
			return "", pathError(w.op, w.p, fmt.Errorf("%s is not a directory: %w", path.Join(w.done...), syscall.ENOTDIR))
		}
		switch c {
		case "", ".":
			continue
		case "..":
			if len(w.done) == 0 {
				return "", outside(w.op, w.p)
			}
			w.done = w.done[:len(w.done)-1]
			w.infos = w.infos[:len(w.infos)-1]
			w.exists = true // what follows may exist again: look at it
			continue
		}
		if !w.exists {
			w.push(c, nil)
			continue
		}
		dir, err := w.dir()
		if errors.Is(err, fs.ErrNotExist) { // a parent named before ".." is missing
			w.exists = false
			w.push(c, nil)
			continue
		}
		if err != nil {
			return "", err
		}
		w.cost++
		fi, err := dir.Lstat(c)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			w.exists = false
			w.push(c, nil)
			continue
		case err != nil:
			return "", mapErr(w.op, w.p, err)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			w.push(c, fi)
			w.notDir = !fi.IsDir()
			continue
		}
		w.links++
		if w.links > maxSymlinks {
			return "", pathError(w.op, w.p, fmt.Errorf("more than %d symbolic links: %w", maxSymlinks, syscall.ELOOP))
		}
		w.cost++
		target, err := dir.Readlink(c)
		if errors.Is(err, syscall.EINVAL) { // no longer a link
			return "", pathError(w.op, w.p, &swappedError{name: path.Join(append(w.done, c)...)})
		}
		if err != nil {
			return "", mapErr(w.op, w.p, err)
		}
		if target == "" || filepath.IsAbs(target) {
			// The target is quoted: it is text anyone who can make a
			// link chose.
			return "", pathError(w.op, w.p, fmt.Errorf("through the absolute symbolic link %s -> %q: %w", path.Join(append(w.done, c)...), target, workspace.ErrOutside))
		}
		todo = append(splitSlash(filepath.ToSlash(target)), todo...)
	}
	if len(w.done) == 0 {
		return ".", nil
	}
	return path.Join(w.done...), nil
}

// dir returns an open descriptor of the directory done names. Errors are
// mapped, and wrap fs.ErrNotExist when a component is missing.
func (w *walker) dir() (*os.Root, error) { return w.descend(len(w.done)) }

// descend returns an open descriptor of the directory done[:k] names,
// opening the components below the current one one at a time, each checked
// to be the directory its look-up found. Above k (after ".."), it starts
// again from the root, as os.Root does: a directory's ".." may have moved
// since it was opened. A component that was missing when it was looked up
// fails with fs.ErrNotExist.
func (w *walker) descend(k int) (*os.Root, error) {
	if err := w.rewind(k); err != nil {
		return nil, err
	}
	for w.depth < k {
		c, want := w.done[w.depth], w.infos[w.depth]
		if want == nil {
			return nil, pathError(w.op, w.p, fmt.Errorf("%s: %w", path.Join(w.done[:w.depth+1]...), fs.ErrNotExist))
		}
		if err := w.open(c, want); err != nil {
			return nil, err
		}
	}
	return w.cur, nil
}

// rewind goes back to the root when the current directory is below
// done[:k] (after ".."), counting the restart against the walk's budget.
func (w *walker) rewind(k int) error {
	if w.depth <= k {
		return nil
	}
	w.restarts++
	w.steps += k
	if w.steps > maxWalkSteps && w.restarts > maxWalkRestarts {
		return w.tooLong()
	}
	w.setCur(w.s.root, 0)
	return nil
}

// open opens the directory c in the current one and makes it the current
// one, after checking that it is want, the directory c's look-up found.
// Otherwise c was swapped since (os.Root followed a link put in its place,
// or another directory was renamed there), and the walk starts over.
func (w *walker) open(c string, want fs.FileInfo) error {
	w.cost++
	next, err := openDir(w.cur, c)
	if err != nil {
		return mapErr(w.op, w.p, err)
	}
	// An fstat of the new descriptor: it walks no component.
	got, err := next.Stat(".")
	if err != nil || !os.SameFile(got, want) {
		next.Close()
		if err != nil {
			return mapErr(w.op, w.p, err)
		}
		return pathError(w.op, w.p, &swappedError{name: path.Join(w.done[:w.depth+1]...)})
	}
	w.setCur(next, w.depth+1)
	return nil
}

// parent returns an open descriptor of the directory the walk's last
// component is in, the component, and what its look-up found (nil when it
// was missing). The path must not be the root itself.
func (w *walker) parent() (*os.Root, string, fs.FileInfo, error) {
	k := len(w.done)
	dir, err := w.descend(k - 1)
	if err != nil {
		return nil, "", nil, err
	}
	return dir, w.done[k-1], w.infos[k-1], nil
}

// lookAgain looks the walk's last component up again, in the descriptor
// of its directory, replacing what the walk found. A link found there now
// starts the walk over. The path must not be the root itself.
func (w *walker) lookAgain() error {
	dir, base, _, err := w.parent()
	if err != nil {
		return err
	}
	w.cost++
	fi, err := dir.Lstat(base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		fi = nil
	case err != nil:
		return mapErr(w.op, w.p, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return pathError(w.op, w.p, &swappedError{name: path.Join(w.done...)})
	}
	w.infos[len(w.infos)-1] = fi
	return nil
}

// makeParent is parent for a write: the missing directories before the
// last component are created one at a time, each in the descriptor of the
// one before it, and opened as the others are. A name that has become
// a link since the walk starts the walk over.
func (w *walker) makeParent() (*os.Root, string, fs.FileInfo, error) {
	k := len(w.done)
	if err := w.rewind(k - 1); err != nil {
		return nil, "", nil, err
	}
	for w.depth < k-1 {
		c := w.done[w.depth]
		if w.infos[w.depth] == nil {
			w.cost++
			if err := w.cur.Mkdir(c, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
				return nil, "", nil, mapErr(w.op, w.p, err)
			}
			fi, err := w.cur.Lstat(c)
			switch {
			case err != nil:
				return nil, "", nil, mapErr(w.op, w.p, err)
			case fi.Mode()&fs.ModeSymlink != 0:
				return nil, "", nil, pathError(w.op, w.p, &swappedError{name: path.Join(w.done[:w.depth+1]...)})
			case !fi.IsDir():
				return nil, "", nil, pathError(w.op, w.p, fmt.Errorf("%s is not a directory: %w", path.Join(w.done[:w.depth+1]...), syscall.ENOTDIR))
			}
			w.infos[w.depth] = fi
		}
		if err := w.open(c, w.infos[w.depth]); err != nil {
			return nil, "", nil, err
		}
	}
	return w.cur, w.done[k-1], w.infos[k-1], nil
}

// openDir opens the directory name in r. os.Root.OpenRoot opens the last
// component of its path without O_DIRECTORY and checks the type only once
// the open has returned, so a FIFO that another process swapped in for a
// directory after it was looked at would block the open, and the tool call,
// until a writer came: forever. With "/." appended, name is opened as an
// intermediate component, with O_DIRECTORY, and a FIFO is ENOTDIR at once.
func openDir(r *os.Root, name string) (*os.Root, error) {
	return r.OpenRoot(name + "/.")
}

func (w *walker) setCur(r *os.Root, depth int) {
	w.close()
	w.cur, w.depth = r, depth
}

func (w *walker) tooLong() error {
	return pathError(w.op, w.p, fmt.Errorf("too many components and \"..\" steps to resolve: %w", syscall.ENAMETOOLONG))
}

func splitSlash(p string) []string { return strings.Split(p, "/") }
