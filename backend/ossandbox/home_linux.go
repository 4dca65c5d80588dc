//go:build linux

package ossandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// The session home: a directory that the commands of one backend share as
// HOME, so that what tools keep there between runs (Go's build cache, its
// module cache, npm's, pip's…) warms up once per session, not once per
// command. It is a directory on disk, not a tmpfs: a tmpfs lives in a mount
// namespace, and a root caller's commands each get a namespace of their
// own, made from this program's; a directory works alike for root and
// unprivileged callers and for every launcher configuration.
//
// It lives in $TMPDIR/helikon-home-UID/PID-RANDOM (the parent created once,
// mode 0700, and refused unless it is a directory, not a link, owned by
// this user and writable by nobody else), outside the root and never the
// user's home; each command finds it mounted writable over itself in its
// mount namespace (launcher.WritablePaths, opened without following links)
// and granted by Landlock. The backend holds an exclusive flock on it while
// it exists, removes it on Close, and makes it again for a later command;
// a program that dies leaves it to ReapHomes (helikon workspaces reap),
// which removes only unlocked ones.

// homeDirName is the name of the per-user parent of session homes in
// os.TempDir(), followed by the effective uid.
const homeDirName = "helikon-home-"

// sessionHome is a backend's session home.
type sessionHome struct {
	path string
	cap  int64
	mu   sync.Mutex
	lock int // the flock'd descriptor while the directory exists, or -1
	usage
}

// usage is what the last measure of a directory found against its cap.
// Measures run in the background after each command (a walk of a warm
// cache costs tens of milliseconds on a loaded machine, which a command's
// caller should not wait for), one at a time: a command that ends while
// one runs has it run again when it is done. The next command sees the
// last finished measure.
type usage struct {
	umu       sync.Mutex
	used      int64
	over      bool // the last measure found more than the cap
	measuring bool
	again     bool
	stopped   bool // no new measure: the directory is being removed
	wg        sync.WaitGroup
}

// measure starts measuring dir against limit in the background (see
// usage).
func (u *usage) measure(dir string, limit int64) {
	u.umu.Lock()
	defer u.umu.Unlock()
	if u.stopped {
		return // a process that outlived its backend's Close
	}
	if u.measuring {
		u.again = true
		return
	}
	u.measuring = true
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		for {
			used, over := dirUsage(dir, limit)
			u.umu.Lock()
			u.used, u.over = used, over
			if !u.again {
				u.measuring = false
				u.umu.Unlock()
				return
			}
			u.again = false
			u.umu.Unlock()
		}
	}()
}

// last returns what the last finished measure found.
func (u *usage) last() (used int64, over bool) {
	u.umu.Lock()
	defer u.umu.Unlock()
	return u.used, u.over
}

// reset forgets the last measure (the directory was made again).
func (u *usage) reset() {
	u.umu.Lock()
	u.used, u.over, u.stopped = 0, false, false
	u.umu.Unlock()
}

// wait waits for the measures in flight (tests: for the next command to
// see a measure).
func (u *usage) wait() { u.wg.Wait() }

// stopAndWait starts no more measures and waits for those in flight. The
// flag is set under the mutex that measure adds to the WaitGroup under,
// so no Add can race with the Wait.
func (u *usage) stopAndWait() {
	u.umu.Lock()
	u.stopped = true
	u.umu.Unlock()
	u.wg.Wait()
}

// homeParent returns this user's parent directory of session homes,
// creating it, or an error saying why it cannot be used.
func homeParent() (string, error) {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return "", err
	}
	p := filepath.Join(tmp, homeDirName+strconv.Itoa(os.Geteuid()))
	if !usableMountPoint(p) {
		return "", fmt.Errorf("%s is not a directory of this user's that only it can write (a symbolic link, another owner, or group- or world-writable)", p)
	}
	return p, nil
}

// newSessionHome picks the backend's session home, capped at size bytes,
// and creates it. The caller checks that it neither holds nor lies in the
// root or a read path.
func newSessionHome(size int64) (*sessionHome, error) {
	parent, err := homeParent()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(parent, strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, err
	}
	h := &sessionHome{path: dir, cap: size, lock: -1}
	if err := h.ensure(); err != nil {
		_ = os.Remove(dir)
		return nil, err
	}
	return h, nil
}

// ensure makes the home again if Close removed it, and fails with
// ErrHomeFull while it is over its cap.
func (h *sessionHome) ensure() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lock < 0 {
		if err := unix.Mkdir(h.path, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("ossandbox: create the session home %s: %w", h.path, err)
		}
		fd, err := unix.Open(h.path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("ossandbox: open the session home %s: %w", h.path, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil || st.Uid != uint32(os.Geteuid()) || st.Mode&0o077 != 0 {
			unix.Close(fd)
			return fmt.Errorf("ossandbox: the session home %s is not this user's private directory", h.path)
		}
		if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
			unix.Close(fd)
			return fmt.Errorf("ossandbox: lock the session home %s: %w", h.path, err)
		}
		h.lock = fd
		h.reset()
	}
	if used, over := h.last(); over {
		return fmt.Errorf("%w: %s holds %d MiB, more than its cap of %d MiB; raise the cap (helikon exec/run --home-size, ossandbox.Options.HomeSize) or remove files from it", ErrHomeFull, h.path, used>>20, h.cap>>20)
	}
	return nil
}

// measureHome counts, in the background, the bytes the home holds after a
// command, stopping as soon as it is over the cap (see dirUsage).
func (h *sessionHome) measureHome() { h.measure(h.path, h.cap) }

// maxHomeEntries bounds the entries a measure walks.
const maxHomeEntries = 1 << 20

// dirUsage returns the bytes allocated to the files beneath dir, and
// whether that is more than limit (or the entries more than
// maxHomeEntries), stopping as soon as it is. The walk never follows a
// link (WalkDir uses Lstat), and counts at most maxHomeEntries entries:
// more is over the cap too, whatever their size, so that it is bounded.
func dirUsage(dir string, limit int64) (int64, bool) {
	var used, n int64
	over := false
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // vanished meanwhile, or unreadable: not ours to count
		}
		n++
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*unix.Stat_t); ok {
				used += st.Blocks * 512
			} else {
				used += info.Size()
			}
		}
		if used > limit || n > maxHomeEntries {
			over = true
			return filepath.SkipAll
		}
		return nil
	})
	return used, over
}

// remove removes the home and lets go of its lock; a later ensure makes it
// again.
func (h *sessionHome) remove() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.lock < 0 {
		return nil
	}
	h.stopAndWait() // a measure finished later would speak of the old contents
	err := removeTree(h.path)
	unix.Close(h.lock)
	h.lock = -1
	return err
}

// removeTree removes dir and everything beneath it, first giving its owner
// write permission on every directory (a command may have left one
// read-only: Go's module cache does, on purpose) so that nothing is left.
// It never follows a link: WalkDir does not, and chmod is done on
// directories only.
func removeTree(dir string) error {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			if info, err := d.Info(); err == nil && info.Mode().Perm()&0o700 != 0o700 {
				_ = unix.Fchmodat(unix.AT_FDCWD, p, uint32(info.Mode().Perm()|0o700), unix.AT_SYMLINK_NOFOLLOW)
			}
		}
		return nil
	})
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("ossandbox: remove the session home: %w", err)
	}
	return nil
}

// ReapHomes removes the session homes of this user that no live backend
// holds (left by a program that died without Close) and returns their
// paths; with dryRun it removes nothing. A home in use is locked by its
// backend and left alone, whatever its age.
func ReapHomes(dryRun bool) ([]string, error) {
	parent, err := homeParent()
	if err != nil {
		return nil, fmt.Errorf("ossandbox: reap session homes: %w", err)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		return nil, fmt.Errorf("ossandbox: reap session homes: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(parent, e.Name())
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue
		}
		if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
			unix.Close(fd) // a live backend's
			continue
		}
		if dryRun {
			unix.Close(fd)
			removed = append(removed, p)
			continue
		}
		err = removeTree(p)
		unix.Close(fd)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, p)
	}
	return removed, errors.Join(errs...)
}

// setUpHome gives the backend its session home unless [Options].HomeSize
// is negative. Where none can be made (an unusable parent, a read-only
// file system, a home that would lie in the root or a read path), commands
// fall back to the home of the past, their private temporary directory,
// with a warning and the reason in Guarantees: never a home elsewhere.
func (b *Backend) setUpHome() {
	if b.opts.HomeSize < 0 {
		return
	}
	size := b.opts.HomeSize
	if size == 0 {
		size = DefaultHomeSize
	}
	h, err := newSessionHome(size)
	if err == nil {
		for _, q := range append([]string{b.root}, b.readPaths...) {
			if within(h.path, q) || within(q, h.path) {
				err = fmt.Errorf("it would lie in or hold %s", q)
			}
		}
		if err == nil && !mountWritable(h.path) {
			err = errors.New("its file system is mounted read-only")
		}
		if err != nil {
			_ = h.remove()
		}
	}
	if err != nil {
		b.homeWhy = err.Error()
		b.log.Warn("ossandbox: no session home; each command gets a fresh HOME", "why", b.homeWhy)
		return
	}
	b.home = h
	runtime.AddCleanup(b, func(h *sessionHome) { _ = h.remove() }, h)
}

// writable returns the directories outside the root that commands may
// write: the session home and the named caches.
func (b *Backend) writable() []string {
	var w []string
	if b.home != nil {
		w = append(w, b.home.path)
	}
	if b.caches != nil {
		w = append(w, b.caches.dirs...)
	}
	return w
}

// homeFeature describes the session home for Guarantees.
func (b *Backend) homeFeature() string {
	switch {
	case b.home != nil:
		return fmt.Sprintf("session home (HOME): a directory of the backend's own in %s, shared by its commands, at most %d MiB (measured after each command; once over it, commands are refused), removed by Close", filepath.Dir(b.home.path), b.home.cap>>20)
	case b.homeWhy != "":
		return "session home: none (" + b.homeWhy + "); HOME is each command's temporary directory"
	default:
		return "session home: none (Options.HomeSize < 0); HOME is each command's temporary directory"
	}
}
