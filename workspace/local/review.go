package local

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/paigasus/helikon/workspace"
)

// Errors of a [Review], wrapped, for callers to match with [errors.Is].
var (
	// ErrNoReview: the project has no pending review.
	ErrNoReview = errors.New("no pending review")
	// ErrReviewConflict: a path the review changed was also changed in the
	// project since the review began; nothing was applied. Look at both,
	// then apply the other paths by name, or discard the review.
	ErrReviewConflict = errors.New("the project changed under the review")
	// ErrReviewLimit: the review's copy would exceed its bound on size;
	// nothing was written to the project. Raise the bound or discard.
	ErrReviewLimit = errors.New("the review is larger than its bound")
)

// DefaultMaxReviewBytes bounds the content of a review's copy of the
// project: 2 GiB.
const DefaultMaxReviewBytes = 2 << 30

// ReviewOptions configures a [Review]. The zero value means the defaults.
type ReviewOptions struct {
	// Dir is the directory that holds the project's reviews. It must be
	// outside the project. Default: $XDG_STATE_HOME/helikon/reviews, or
	// $HOME/.local/state/helikon/reviews.
	Dir string
	// MaxBytes bounds the size of the regular files of the review's copy
	// (0: [DefaultMaxReviewBytes]), when the copy is made and whenever the
	// review is diffed or applied: beyond it they fail with
	// [ErrReviewLimit].
	MaxBytes int64
}

// Review is a pending review of a project directory: the agent works in a
// copy of the project (its [Review.Tree]), the file tools and the commands
// alike, and nothing reaches the project until [Review.Apply] copies the
// changes the user chose back into it; [Review.Discard] throws them away.
// A review outlives its process: [FindReview] finds it again by the
// project's path, so that helikon diff|apply|discard work on it later.
//
// # How it works
//
// StartReview copies the project, with its modes, symbolic links (as
// links) and modification times, into a directory of the review store
// outside the project, through [os.Root] on both sides (a link in the
// project is never followed out). The content goes through
// copy_file_range, which shares the blocks on file systems with reflinks
// (Btrfs, XFS) and copies in the kernel elsewhere. It then records the
// copy as it began (a manifest like a checkpoint's, without stored
// content: the project holds it). Diff compares the copy as it is with
// that record, reusing the hashes of the files whose inode, size and
// times did not change, and reads the old side from the project. Apply
// compares each path to apply in the project with the record: when it is
// neither as the review began nor already as the review has it, someone
// changed it meanwhile, and the apply is refused naming the paths, before
// anything is written. Otherwise it writes a journal of the paths, then
// each file through a temporary file in its directory renamed over the
// old one (atomic per file), then forgets the journal. A crash midway
// leaves the journal: the next Apply (or Discard) of the review finishes
// (or cleans) it first, and since a path already applied counts as not
// changed underneath, the second run completes what the first began.
//
// # What is guaranteed
//
//   - Nothing the agent does reaches the project before Apply: its tools
//     and commands are given the copy as their root. Commands of the OS
//     sandbox can write only there (and read only what the sandbox
//     allows: the review store under the home directory is hidden).
//   - Apply never follows a link out of the project: it goes through
//     [os.Root], creates links as links, and creates its temporary files
//     exclusively.
//   - Apply never overwrites silently a path changed in the project since
//     the review began ([ErrReviewConflict]).
//
// # What is not guaranteed
//
//   - The copy costs a walk and a copy of the project (a reflink on
//     Btrfs and XFS, a full copy on ext4 and tmpfs): the cost follows the
//     size of the tree, not of the change, at the start of a review.
//   - The agent sees the copy's path, not the project's: absolute paths
//     naming the project are outside its root and refused.
//   - Owners, extended attributes, FIFOs, sockets and devices are not
//     copied; hard links are copied as separate files and applied as
//     such; times of directories are not kept.
//   - Two processes applying one review at once are not coordinated.
type Review struct {
	project string // the project directory, links evaluated
	dir     string // this review's directory
	maxB    int64
	base    *CheckpointStore // the record of the copy as it began (manifest "1")
	tree    *os.Root
}

// The files of a review's directory.
const (
	reviewTree    = "tree"
	reviewProject = "project"
	reviewBase    = "base"
	reviewJournal = "journal.json"
	reviewTmp     = ".helikon-apply-"
)

// reviewDir returns the directory of the review of project.
func reviewDir(project string, opts *ReviewOptions) (string, error) {
	base := opts.Dir
	if base == "" {
		state := os.Getenv("XDG_STATE_HOME")
		if state == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("review: no $XDG_STATE_HOME and no home directory: %w", err)
			}
			state = filepath.Join(home, ".local", "state")
		}
		base = filepath.Join(state, "helikon", "reviews")
	}
	base, err := filepath.Abs(base)
	if err != nil {
		return "", fmt.Errorf("review: %w", err)
	}
	if inside(project, realPrefix(base)) {
		return "", fmt.Errorf("review: the review store %s is inside the project %s, where the agent could change it (set another directory): %w", base, project, workspace.ErrOutside)
	}
	sum := sha256.Sum256([]byte(project))
	return filepath.Join(base, filepath.Base(project)+"-"+hex.EncodeToString(sum[:8])), nil
}

func projectDir(project string) (string, error) {
	p, err := filepath.Abs(project)
	if err == nil {
		p, err = filepath.EvalSymlinks(p)
	}
	if err != nil {
		return "", fmt.Errorf("review: %w", err)
	}
	return p, nil
}

func reviewOpts(opts *ReviewOptions) *ReviewOptions {
	if opts == nil {
		opts = &ReviewOptions{}
	}
	o := *opts
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxReviewBytes
	}
	return &o
}

// FindReview returns the pending review of project, or an error matching
// [ErrNoReview]. opts may be nil.
func FindReview(project string, opts *ReviewOptions) (*Review, error) {
	opts = reviewOpts(opts)
	p, err := projectDir(project)
	if err != nil {
		return nil, err
	}
	dir, err := reviewDir(p, opts)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, reviewBase, "manifests", "1.jsonl")); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("review: %s: %w (helikon run --review starts one)", p, ErrNoReview)
	} else if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	return openReview(p, dir, opts)
}

func openReview(project, dir string, opts *ReviewOptions) (*Review, error) {
	tree, err := os.OpenRoot(filepath.Join(dir, reviewTree))
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	r := &Review{project: project, dir: dir, maxB: opts.MaxBytes, tree: tree}
	r.base = NewCheckpointStore(tree, r.Tree(), &CheckpointOptions{Dir: filepath.Join(dir, reviewBase)})
	return r, nil
}

// StartReview returns the pending review of project, or begins one: it
// copies the project into the review store (see [Review]). The copy is
// refused with [ErrReviewLimit] when the project's files exceed
// ReviewOptions.MaxBytes. opts may be nil.
func StartReview(ctx context.Context, project string, opts *ReviewOptions) (*Review, error) {
	opts = reviewOpts(opts)
	r, err := FindReview(project, opts)
	if err == nil || !errors.Is(err, ErrNoReview) {
		return r, err
	}
	p, err := projectDir(project)
	if err != nil {
		return nil, err
	}
	dir, err := reviewDir(p, opts)
	if err != nil {
		return nil, err
	}
	// A directory without a record is what a start that failed left.
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, reviewTree), 0o700); err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, reviewProject), []byte(p+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	src, err := os.OpenRoot(p)
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	defer src.Close()
	dst, err := os.OpenRoot(filepath.Join(dir, reviewTree))
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	cp := &treeCopier{ctx: ctx, max: opts.MaxBytes}
	err = cp.dir(src, dst, "")
	if err == nil { // the copy's root has the project's permission bits
		var fi fs.FileInfo
		if fi, err = src.Stat("."); err == nil {
			err = dst.Chmod(".", fi.Mode()&fs.ModePerm)
		}
	}
	dst.Close()
	if err != nil {
		return nil, err
	}
	if r, err = openReview(p, dir, opts); err != nil {
		return nil, err
	}
	m, err := r.scan(ctx, nil)
	if err == nil {
		err = r.writeBase(m)
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	ok = true
	return r, nil
}

// treeCopier copies a tree between two roots.
type treeCopier struct {
	ctx   context.Context
	max   int64
	bytes int64
}

func (c *treeCopier) dir(src, dst *os.Root, rel string) error {
	if err := c.ctx.Err(); err != nil {
		return fmt.Errorf("review: %w", err)
	}
	f, err := src.Open(".")
	if err != nil {
		return fmt.Errorf("review: copying %s: %w", rel, err)
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("review: copying %s: %w", rel, err)
	}
	for _, d := range ents {
		name := d.Name()
		p := path.Join(rel, name)
		fi, err := src.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("review: copying %s: %w", p, err)
		}
		perm := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		switch {
		case fi.IsDir():
			if err := dst.Mkdir(name, 0o700); err != nil {
				return fmt.Errorf("review: copying %s: %w", p, err)
			}
			s, err := src.OpenRoot(name)
			if err != nil {
				return fmt.Errorf("review: copying %s: %w", p, err)
			}
			d, err := dst.OpenRoot(name)
			if err == nil {
				err = c.dir(s, d, p)
				d.Close()
			}
			s.Close()
			if err != nil {
				return err
			}
			if err := dst.Chmod(name, perm); err != nil {
				return fmt.Errorf("review: copying %s: %w", p, err)
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := src.Readlink(name)
			if err == nil {
				err = dst.Symlink(t, name)
			}
			if err != nil {
				return fmt.Errorf("review: copying %s: %w", p, err)
			}
		case fi.Mode().IsRegular():
			if c.bytes += fi.Size(); c.bytes > c.max {
				return fmt.Errorf("review: the project's files exceed the review's bound of %d bytes: %w", c.max, ErrReviewLimit)
			}
			if err := copyFile(src, name, dst, name, perm, fi.ModTime()); err != nil {
				return fmt.Errorf("review: copying %s: %w", p, err)
			}
		}
	}
	return nil
}

// copyFile copies the regular file name of src to the new file of dst
// (created exclusively), with the mode perm and modification time mt.
// io.Copy between two files uses copy_file_range: in the kernel, sharing
// blocks where the file system has reflinks.
func copyFile(src *os.Root, name string, dst *os.Root, to string, perm fs.FileMode, mt time.Time) error {
	in, err := src.OpenFile(name, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("%s is no longer a regular file: %w", name, workspace.ErrTreeChanged)
	}
	out, err := dst.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL|openNoFollow, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(perm)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = dst.Chtimes(to, mt, mt)
	}
	return err
}

// Tree returns the directory the agent works in: the review's copy of the
// project. Build the workspace's backend and engine for it.
func (r *Review) Tree() string { return filepath.Join(r.dir, reviewTree) }

// Project returns the project directory, links evaluated.
func (r *Review) Project() string { return r.project }

// Dir returns the review's directory in the review store.
func (r *Review) Dir() string { return r.dir }

// Close releases the review's descriptors; the review stays pending.
func (r *Review) Close() error { return r.tree.Close() }

// scan walks the copy, reusing prev's hashes for unchanged files, and
// checks its size against the bound.
func (r *Review) scan(ctx context.Context, prev *ckManifest) (*ckManifest, error) {
	var m *ckManifest
	var err error
	for try := 0; ; try++ {
		m, err = r.base.scan(ctx, prev, false)
		if err == nil || !errors.Is(err, workspace.ErrTreeChanged) || try == 2 {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	if m.head.Bytes > r.maxB {
		return nil, fmt.Errorf("review: the copy holds %d bytes of files, more than its bound of %d: %w", m.head.Bytes, r.maxB, ErrReviewLimit)
	}
	return m, nil
}

func (r *Review) writeBase(m *ckManifest) error {
	if err := os.MkdirAll(filepath.Join(r.base.dir, "manifests"), 0o700); err != nil {
		return fmt.Errorf("review: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(r.base.dir, "tmp"), 0o700); err != nil {
		return fmt.Errorf("review: %w", err)
	}
	m.head.ID, m.head.Label = "1", "review of "+r.project
	if m.head.Created.IsZero() {
		m.head.Created = time.Now()
	}
	delete(r.base.recent, "1")
	return r.base.writeManifest(m)
}

// state returns the record of the copy as it began and the copy now.
func (r *Review) state(ctx context.Context) (base, cur *ckManifest, err error) {
	if base, err = r.base.load("1", false); err != nil {
		return nil, nil, fmt.Errorf("review: %w", err)
	}
	if cur, err = r.scan(ctx, base); err != nil {
		return nil, nil, err
	}
	return base, cur, nil
}

// Diff reports what the review changed, sorted by path: the copy as it is
// against the project as the review began. The old side of a text diff is
// read from the project; a file changed there meanwhile is told by its
// sizes (Apply would report it as a conflict).
func (r *Review) Diff(ctx context.Context) ([]workspace.Change, error) {
	base, cur, err := r.state(ctx)
	if err != nil {
		return nil, err
	}
	proj, err := os.OpenRoot(r.project)
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	defer proj.Close()
	old := func(e *ckEntry) []byte {
		data, err := readRegular(proj, string(e.Path), workspace.MaxTextDiff)
		if err != nil || hashOf(data) != e.Hash {
			return nil
		}
		return data
	}
	new := func(e *ckEntry) []byte {
		data, err := readRegular(r.tree, string(e.Path), workspace.MaxTextDiff)
		if err != nil {
			return nil
		}
		return data
	}
	return diffManifests(base, cur, old, new), nil
}

func hashOf(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// readRegular reads the regular file p of r, at most limit bytes (more is
// an error), not following a link as its last component.
func readRegular(r *os.Root, p string, limit int64) ([]byte, error) {
	f, err := r.OpenFile(p, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, workspace.ErrNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		err = workspace.ErrTooLarge
	}
	return data, err
}

// journal is what an apply under way records before it writes.
type journal struct {
	Paths []string `json:"paths"` // the paths chosen; empty: all
}

// Apply copies the review's changes into the project: all of them, or
// when paths are given those paths (relative to the root, slash-separated)
// and what is below them. It returns the changes applied. When a path to
// apply was changed in the project since the review began it fails with
// [ErrReviewConflict] naming the paths, and writes nothing. Once every
// change is applied, the review is removed; after a partial apply it stays
// pending with the changes left.
func (r *Review) Apply(ctx context.Context, paths ...string) ([]workspace.Change, error) {
	chosen, err := choose(paths)
	if err != nil {
		return nil, err
	}
	// An apply that a crash interrupted is finished first.
	if data, err := os.ReadFile(filepath.Join(r.dir, reviewJournal)); err == nil {
		var j journal
		if err := json.Unmarshal(data, &j); err != nil {
			return nil, fmt.Errorf("review: the journal of an interrupted apply is unreadable (%v): discard the review", err)
		}
		done, err := r.apply(ctx, j.Paths)
		if err != nil {
			return nil, fmt.Errorf("review: finishing the apply a crash interrupted: %w", err)
		}
		if _, err := os.Stat(r.dir); errors.Is(err, fs.ErrNotExist) {
			return done, nil // that was the whole review
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("review: %w", err)
	}
	return r.apply(ctx, chosen)
}

// choose cleans the paths of Apply; nil means all.
func choose(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		p = path.Clean(filepath.ToSlash(p))
		if p == "." || p == "" {
			return nil, nil
		}
		if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
			return nil, fmt.Errorf("review: apply %s: %w", p, workspace.ErrOutside)
		}
		out = append(out, p)
	}
	return out, nil
}

func under(p string, paths []string) bool {
	if len(paths) == 0 {
		return true
	}
	for _, q := range paths {
		if p == q || strings.HasPrefix(p, q+"/") {
			return true
		}
	}
	return false
}

// applyHook, when set (by tests), is called after each path applied.
var applyHook func(n int)

func (r *Review) apply(ctx context.Context, paths []string) ([]workspace.Change, error) {
	base, cur, err := r.state(ctx)
	if err != nil {
		return nil, err
	}
	proj, err := os.OpenRoot(r.project)
	if err != nil {
		return nil, fmt.Errorf("review: %w", err)
	}
	defer proj.Close()
	was, now := base.byPath(), cur.byPath()
	var todo []string // the paths that differ, sorted
	for p, e := range now {
		if under(p, paths) && !sameEntry(was[p], e) {
			todo = append(todo, p)
		}
	}
	for p := range was {
		if under(p, paths) && now[p] == nil {
			todo = append(todo, p)
		}
	}
	slices.Sort(todo)
	// Before anything is written: every path must be in the project as the
	// review began, or already as the review has it (a crash midway).
	var conflicts []string
	for _, p := range todo {
		have, err := projectEntry(proj, p)
		if err != nil {
			return nil, fmt.Errorf("review: %s: %w", p, err)
		}
		if !sameEntry(have, was[p]) && !sameEntry(have, now[p]) {
			conflicts = append(conflicts, p)
			continue
		}
		// A directory the review removes must hold nothing the review
		// did not know of, and the directories above a path must still
		// be directories (not links that lead elsewhere in the project).
		if h := was[p]; h != nil && h.Mode.IsDir() && (now[p] == nil || !now[p].Mode.IsDir()) {
			if extra, err := unknownChild(proj, p, was); err != nil {
				return nil, fmt.Errorf("review: %s: %w", p, err)
			} else if extra != "" {
				conflicts = append(conflicts, extra)
			}
		}
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			fi, err := proj.Lstat(d)
			if err == nil && !fi.IsDir() && (now[d] == nil || now[d].Mode.IsDir()) {
				conflicts = append(conflicts, d)
				break
			}
		}
	}
	slices.Sort(conflicts)
	conflicts = slices.Compact(conflicts)
	if len(conflicts) > 0 {
		for i, p := range conflicts {
			conflicts[i] = fmt.Sprintf("%q", p)
		}
		return nil, fmt.Errorf("review: changed in the project since the review began, so not applied (nothing was): %s: %w", strings.Join(conflicts, ", "), ErrReviewConflict)
	}
	changes := diffManifests(filtered(base, paths), filtered(cur, paths), func(*ckEntry) []byte { return nil }, func(*ckEntry) []byte { return nil })
	if len(todo) == 0 {
		return changes, r.finish(base, cur, paths)
	}
	if err := r.writeJournal(paths); err != nil {
		return nil, err
	}
	// Removals first, children before parents, then what is new or
	// changed, parents before children.
	n := 0
	for i := len(todo) - 1; i >= 0; i-- {
		p := todo[i]
		w, h := now[p], was[p]
		if h == nil || (w != nil && w.Mode.Type() == h.Mode.Type()) {
			continue
		}
		// A directory is empty by now: its children came first, and
		// were all known to the review (checked above).
		if err := proj.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("review: apply: removing %s: %w", p, err)
		}
		n++
		if applyHook != nil {
			applyHook(n)
		}
	}
	var dirs []string // modes set last: a read-only directory gets its files first
	for _, p := range todo {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("review: apply (the next apply finishes it): %w", err)
		}
		w := now[p]
		if w == nil {
			continue
		}
		if err := r.applyEntry(proj, p, w); err != nil {
			return nil, fmt.Errorf("review: apply %s (the next apply finishes what this one began): %w", p, err)
		}
		if w.Mode.IsDir() {
			dirs = append(dirs, p)
		}
		n++
		if applyHook != nil {
			applyHook(n)
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := proj.Chmod(dirs[i], now[dirs[i]].Mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
			return nil, fmt.Errorf("review: apply %s: %w", dirs[i], err)
		}
	}
	return changes, r.finish(base, cur, paths)
}

// finish records the applied paths as the review's new starting point and
// forgets the journal; with nothing left, the review is removed.
func (r *Review) finish(base, cur *ckManifest, paths []string) error {
	var entries []*ckEntry
	for _, e := range base.entries {
		if !under(string(e.Path), paths) {
			entries = append(entries, e)
		}
	}
	for _, e := range cur.entries {
		if under(string(e.Path), paths) {
			entries = append(entries, e)
		}
	}
	slices.SortFunc(entries, func(a, b *ckEntry) int { return bytes.Compare(a.Path, b.Path) })
	left := false
	nb := (&ckManifest{entries: entries}).byPath()
	for _, e := range cur.entries {
		if !sameEntry(nb[string(e.Path)], e) {
			left = true
		}
	}
	if len(nb) != len(cur.entries) {
		left = true
	}
	if !left {
		// The journal first: the apply is complete, and Discard has no
		// temporary file of it to look for.
		if err := os.Remove(filepath.Join(r.dir, reviewJournal)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("review: %w", err)
		}
		return r.Discard(context.Background())
	}
	m := &ckManifest{head: base.head, entries: entries}
	m.head.Entries = len(entries)
	if err := r.writeBase(m); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(r.dir, reviewJournal)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("review: %w", err)
	}
	return nil
}

func filtered(m *ckManifest, paths []string) *ckManifest {
	out := &ckManifest{head: m.head}
	for _, e := range m.entries {
		if under(string(e.Path), paths) {
			out.entries = append(out.entries, e)
		}
	}
	return out
}

func (r *Review) writeJournal(paths []string) error {
	data, err := json.Marshal(journal{Paths: paths})
	if err != nil {
		return fmt.Errorf("review: %w", err)
	}
	f, err := os.CreateTemp(r.dir, "journal-")
	if err != nil {
		return fmt.Errorf("review: %w", err)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(r.dir, reviewJournal))
	}
	if err != nil {
		return fmt.Errorf("review: writing the journal: %w", err)
	}
	return nil
}

// sameEntry reports whether two entries are the same path state: type,
// permission bits, and content or link target (nil: absent).
func sameEntry(a, b *ckEntry) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Mode == b.Mode && a.Hash == b.Hash && string(a.Target) == string(b.Target)
}

// projectEntry describes the path p of the project as a manifest entry
// (nil when it does not exist), hashing a regular file.
func projectEntry(proj *os.Root, p string) (*ckEntry, error) {
	fi, err := proj.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	e := &ckEntry{Path: []byte(p), Mode: fi.Mode() & (fs.ModeType | fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := proj.Readlink(p)
		if err != nil {
			return nil, err
		}
		e.Target = []byte(t)
	case fi.Mode().IsRegular():
		f, err := proj.OpenFile(p, os.O_RDONLY|openNoFollow, 0)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return nil, err
		}
		e.Hash = hex.EncodeToString(h.Sum(nil))
	}
	return e, nil
}

// unknownChild returns the first entry of the project's directory p that
// the review's record does not have, or "".
func unknownChild(proj *os.Root, p string, was map[string]*ckEntry) (string, error) {
	f, err := proj.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return "", err
	}
	for _, n := range names {
		if was[p+"/"+n] == nil {
			return p + "/" + n, nil
		}
	}
	return "", nil
}

// applyEntry makes the path p of the project what w describes, from the
// copy: a directory is created (or its mode set), a link or a file is
// written beside it and renamed over it.
func (r *Review) applyEntry(proj *os.Root, p string, w *ckEntry) error {
	perm := w.Mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	if dir := path.Dir(p); dir != "." {
		if err := proj.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	sum := sha256.Sum256([]byte(p))
	tmp := path.Join(path.Dir(p), reviewTmp+hex.EncodeToString(sum[:8]))
	switch {
	case w.Mode.IsDir():
		if err := proj.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return nil // its mode is set once its files are written
	case w.Mode&fs.ModeSymlink != 0:
		if err := proj.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if err := proj.Symlink(string(w.Target), tmp); err != nil {
			return err
		}
		return proj.Rename(tmp, p)
	default:
		err := copyFile(r.tree, p, proj, tmp, perm, time.Unix(0, w.MTime))
		if errors.Is(err, fs.ErrExist) {
			// A temporary file a crash left: removed, never written
			// through (it is created exclusively).
			if err = proj.Remove(tmp); err == nil {
				err = copyFile(r.tree, p, proj, tmp, perm, time.Unix(0, w.MTime))
			}
		}
		if err != nil {
			proj.Remove(tmp)
			return err
		}
		f, err := proj.OpenFile(tmp, os.O_RDONLY|openNoFollow, 0)
		if err == nil {
			err = f.Sync()
			f.Close()
		}
		if err == nil {
			err = proj.Rename(tmp, p)
		}
		if err != nil {
			proj.Remove(tmp)
		}
		return err
	}
}

// Discard throws the review's changes away: its directory is removed,
// with the temporary files an interrupted apply left in the project. The
// project keeps what an apply already wrote.
func (r *Review) Discard(ctx context.Context) error {
	if data, err := os.ReadFile(filepath.Join(r.dir, reviewJournal)); err == nil {
		var j journal
		if json.Unmarshal(data, &j) == nil {
			r.cleanTemps()
		}
	}
	r.tree.Close()
	if err := os.RemoveAll(r.dir); err != nil {
		return fmt.Errorf("review: discarding %s: %w", r.dir, err)
	}
	return nil
}

// cleanTemps removes the temporary files of an interrupted apply: one per
// path, beside it in the project. The paths are those the review began
// with plus those of the copy now.
func (r *Review) cleanTemps() {
	proj, err := os.OpenRoot(r.project)
	if err != nil {
		return
	}
	defer proj.Close()
	base, err := r.base.load("1", false)
	if err != nil {
		return
	}
	entries := base.entries
	if cur, err := r.base.scan(context.Background(), base, false); err == nil {
		entries = append(slices.Clone(entries), cur.entries...)
	}
	for _, e := range entries {
		p := string(e.Path)
		sum := sha256.Sum256([]byte(p))
		proj.Remove(path.Join(path.Dir(p), reviewTmp+hex.EncodeToString(sum[:8])))
	}
}
