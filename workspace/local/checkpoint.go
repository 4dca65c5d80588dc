package local

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paigasus/helikon/workspace"
)

// Defaults of [CheckpointOptions].
const (
	// DefaultMaxCheckpoints is how many checkpoints a store keeps: a
	// session's last 100 turns.
	DefaultMaxCheckpoints = 100
	// DefaultMaxCheckpointBytes bounds the content a store holds, shared
	// between checkpoints: 2 GiB.
	DefaultMaxCheckpointBytes = 2 << 30
	// racyMargin is how long before a checkpoint's scan a file must have
	// last changed for its recorded hash to be reused without reading it
	// again: a file written in the same clock tick as the scan (the
	// kernel's file times come from a clock that ticks every few
	// milliseconds) could change again without changing its times, as
	// git's "racily clean" entries can.
	racyMargin = 50 * time.Millisecond
)

// CheckpointOptions configures the checkpoint store of a local engine's
// workspaces. The zero value means the defaults.
type CheckpointOptions struct {
	// Dir is the store's directory. It must be outside the workspace's
	// root. Default: $XDG_STATE_HOME/helikon/checkpoints/ID, or
	// $HOME/.local/state/helikon/checkpoints/ID, where ID is derived from
	// the root's path; created on the first checkpoint.
	Dir string
	// MaxCheckpoints is how many checkpoints are kept (0:
	// [DefaultMaxCheckpoints]); taking one more drops the oldest.
	MaxCheckpoints int
	// MaxBytes bounds the size of the content the store holds (0:
	// [DefaultMaxCheckpointBytes]); a checkpoint that would exceed it
	// fails with [workspace.ErrCheckpointLimit] and stores nothing.
	MaxBytes int64
}

// defaultCheckpointDir returns the default store directory of the root dir.
func defaultCheckpointDir(dir string) (string, error) {
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("checkpoints: no $XDG_STATE_HOME and no home directory: %w", err)
		}
		base = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(dir))
	return filepath.Join(base, "helikon", "checkpoints", filepath.Base(dir)+"-"+hex.EncodeToString(sum[:8])), nil
}

// CheckpointStore records the tree of one root directory in a
// content-addressed store outside it, and brings it back: it implements
// [workspace.Checkpointer] for local workspaces ([Workspace] delegates to
// it). It is safe for concurrent use.
//
// # How it works
//
// A checkpoint is a manifest: one line per directory, regular file and
// symbolic link under the root, with its permission bits, its link target,
// or its size and SHA-256. A file's content is stored once per distinct
// content, in objects/ under the store, and shared by every checkpoint
// that has it. A checkpoint reads again only the files whose inode, size,
// modification or change time differ from the previous checkpoint's, so
// after the first it costs a walk of the tree (one lstat per entry) plus
// the size of what changed. Restore walks the tree the same way and
// rewrites only what differs, each file through a temporary file renamed
// over it (a process holding the old file open keeps reading the old
// content).
//
// # What is guaranteed
//
//   - Every access to the tree goes through [os.Root] on the root, one
//     directory at a time, entries listed with lstat: a symbolic link is
//     recorded as a link and never followed, and no link a command swaps
//     in while a checkpoint or a restore runs leads it outside the root.
//     A directory or file swapped between the listing and the opening is
//     detected (the opened file is not the one listed) and the checkpoint
//     fails with [workspace.ErrTreeChanged] rather than record it.
//   - The store is outside the root (a Dir inside it is refused), created
//     with mode 0700, its files 0600.
//   - Content, permission bits (setuid, setgid and sticky included),
//     symbolic link targets, empty directories, hard links between files
//     of the tree and names with any byte (newlines, invalid UTF-8) are
//     recorded and restored; so are modification times of files.
//   - A checkpoint either is recorded whole (its manifest written
//     atomically after its content) or not at all.
//
// # What is not guaranteed
//
//   - Owners, extended attributes, ACLs and directory times are not
//     recorded. FIFOs, sockets and devices are neither recorded nor
//     removed by a restore.
//   - A command running while a checkpoint is taken can change a file
//     between its listing and its reading: what is recorded is what was
//     read, and such a file may be recorded in a state it never had as a
//     whole (as with any copy of a live tree). Take checkpoints between
//     commands, as the agent runner does.
//   - Two processes using one store directory are not coordinated beyond
//     the atomic writes of manifests and content: dropping a checkpoint in
//     one can remove content the other is recording.
//   - The store is out of reach of the workspace's commands only as
//     their backend confines them: the OS sandbox neither lets them write
//     outside the root nor read the user's home directory, where the
//     default store is (a Dir under the temporary directory or a system
//     path is readable there); the host backend confines nothing.
type CheckpointStore struct {
	root *os.Root
	dir  string // the store's directory
	max  int
	maxB int64
	err  error // why the store cannot be used

	mu     sync.Mutex
	loaded bool           // refs and used computed
	refs   map[string]int // entries referring to each object
	used   int64          // bytes of the objects
	// recent holds the manifests read or written last, by id: a turn
	// reads the newest one three times (checkpoint, diff, undo), and
	// decoding it costs as much as walking the tree. Manifests never
	// change once written.
	recent map[string]*ckManifest
}

// maxRecent is how many manifests the store keeps decoded.
const maxRecent = 4

func (s *CheckpointStore) remember(m *ckManifest) {
	if s.recent == nil {
		s.recent = map[string]*ckManifest{}
	}
	for id := range s.recent {
		if len(s.recent) < maxRecent {
			break
		}
		delete(s.recent, id)
	}
	s.recent[m.head.ID] = m
}

// ckHeader is the first line of a manifest.
type ckHeader struct {
	workspace.CheckpointInfo
	// Scanned is when the walk began (Unix nanoseconds): hashes of files
	// changed before it, by racyMargin, are reused by the next walk.
	Scanned int64 `json:"scanned"`
}

// ckEntry is one line of a manifest. Path and Target are bytes so that
// JSON keeps names that are not UTF-8.
type ckEntry struct {
	Path   []byte      `json:"p"`
	Mode   fs.FileMode `json:"m"`
	Size   int64       `json:"s,omitempty"`
	Hash   string      `json:"h,omitempty"`
	Target []byte      `json:"t,omitempty"`
	Group  int         `json:"g,omitempty"` // hard-link group, > 0
	MTime  int64       `json:"mt,omitempty"`
	Ino    uint64      `json:"i,omitempty"`
	Dev    uint64      `json:"d,omitempty"`
	CTime  int64       `json:"ct,omitempty"`
}

// ckManifest is a checkpoint, or the tree as it is now.
type ckManifest struct {
	head    ckHeader
	entries []*ckEntry // sorted by path
}

func (m *ckManifest) byPath() map[string]*ckEntry {
	out := make(map[string]*ckEntry, len(m.entries))
	for _, e := range m.entries {
		out[string(e.Path)] = e
	}
	return out
}

// NewCheckpointStore returns the checkpoint store of the tree under root,
// the directory dir (links evaluated). opts may be nil. The store's
// directory is created on the first checkpoint. A store directory that
// cannot be used (inside the root, or no default for lack of a home
// directory) is reported by every method, so that a workspace opens
// without checkpoints where it cannot have them.
func NewCheckpointStore(root *os.Root, dir string, opts *CheckpointOptions) *CheckpointStore {
	if opts == nil {
		opts = &CheckpointOptions{}
	}
	s := &CheckpointStore{root: root, dir: opts.Dir, max: opts.MaxCheckpoints, maxB: opts.MaxBytes}
	if s.max <= 0 {
		s.max = DefaultMaxCheckpoints
	}
	if s.maxB <= 0 {
		s.maxB = DefaultMaxCheckpointBytes
	}
	if s.dir == "" {
		s.dir, s.err = defaultCheckpointDir(dir)
	}
	if s.err == nil {
		s.dir, s.err = filepath.Abs(s.dir)
	}
	if s.err == nil && inside(dir, realPrefix(s.dir)) {
		s.err = fmt.Errorf("checkpoints: the store %s is inside the workspace root %s, where commands could change it (set another directory): %w", s.dir, dir, workspace.ErrOutside)
	}
	return s
}

// realPrefix evaluates the links of the longest existing prefix of p.
func realPrefix(p string) string {
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// inside reports whether p is dir or below it.
func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Dir returns the store's directory.
func (s *CheckpointStore) Dir() string { return s.dir }

func (s *CheckpointStore) manifestPath(id string) string {
	return filepath.Join(s.dir, "manifests", id+".jsonl")
}

func (s *CheckpointStore) objectPath(hash string) string {
	return filepath.Join(s.dir, "objects", hash[:2], hash)
}

// ids returns the ids of the stored checkpoints, oldest first.
func (s *CheckpointStore) ids() ([]int, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, "manifests"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	var ids []int
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".jsonl"); ok {
			if id, err := strconv.Atoi(n); err == nil && id > 0 {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// load reads checkpoint id; headOnly stops after its first line.
func (s *CheckpointStore) load(id string, headOnly bool) (*ckManifest, error) {
	if n, err := strconv.Atoi(id); err != nil || n <= 0 || strconv.Itoa(n) != id {
		return nil, fmt.Errorf("checkpoints: %q: %w", id, workspace.ErrNoCheckpoint)
	}
	if m := s.recent[id]; m != nil {
		return m, nil
	}
	f, err := os.Open(s.manifestPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoints: %s: %w", id, workspace.ErrNoCheckpoint)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoints: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	m := &ckManifest{}
	if !sc.Scan() {
		return nil, fmt.Errorf("checkpoints: %s: empty manifest", id)
	}
	if err := json.Unmarshal(sc.Bytes(), &m.head); err != nil {
		return nil, fmt.Errorf("checkpoints: %s: %w", id, err)
	}
	if headOnly {
		return m, nil
	}
	m.entries = make([]*ckEntry, 0, m.head.Entries)
	for sc.Scan() {
		e := &ckEntry{}
		if err := json.Unmarshal(sc.Bytes(), e); err != nil {
			return nil, fmt.Errorf("checkpoints: %s: %w", id, err)
		}
		m.entries = append(m.entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("checkpoints: %s: %w", id, err)
	}
	s.remember(m)
	return m, nil
}

// latest returns the newest checkpoint, or nil when there is none.
func (s *CheckpointStore) latest() (*ckManifest, error) {
	ids, err := s.ids()
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	return s.load(strconv.Itoa(ids[len(ids)-1]), false)
}

// account computes, once, how many entries refer to each object and the
// size of the objects.
func (s *CheckpointStore) account() error {
	if s.loaded {
		return nil
	}
	ids, err := s.ids()
	if err != nil {
		return err
	}
	refs := map[string]int{}
	for _, id := range ids {
		m, err := s.load(strconv.Itoa(id), false)
		if err != nil {
			return err
		}
		for _, e := range m.entries {
			if e.Hash != "" {
				refs[e.Hash]++
			}
		}
	}
	var used int64
	err = filepath.WalkDir(filepath.Join(s.dir, "objects"), func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() {
			return err
		}
		if refs[d.Name()] == 0 { // left by a crash before its manifest was written
			return os.Remove(p)
		}
		fi, err := d.Info()
		if err == nil {
			used += fi.Size()
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	s.refs, s.used, s.loaded = refs, used, true
	return nil
}

// Checkpoint records the tree as it is now. A walk that meets a tree
// changing under it is tried again twice before it fails with
// [workspace.ErrTreeChanged].
func (s *CheckpointStore) Checkpoint(ctx context.Context, label string) (workspace.CheckpointInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return workspace.CheckpointInfo{}, s.err
	}
	if err := s.account(); err != nil {
		return workspace.CheckpointInfo{}, err
	}
	prev, err := s.latest()
	if err != nil {
		return workspace.CheckpointInfo{}, err
	}
	ids, _ := s.ids()
	next := 1
	if len(ids) > 0 {
		next = ids[len(ids)-1] + 1
	}
	for _, d := range []string{"manifests", "objects", "tmp"} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o700); err != nil {
			return workspace.CheckpointInfo{}, fmt.Errorf("checkpoints: %w", err)
		}
	}
	var m *ckManifest
	for try := 0; ; try++ {
		m, err = s.scan(ctx, prev, true)
		if err == nil || !errors.Is(err, workspace.ErrTreeChanged) || try == 2 {
			break
		}
	}
	if err != nil {
		return workspace.CheckpointInfo{}, err
	}
	m.head.ID, m.head.Label, m.head.Created = strconv.Itoa(next), label, time.Now()
	if err := s.writeManifest(m); err != nil {
		s.release(m.entries)
		return workspace.CheckpointInfo{}, err
	}
	s.remember(m)
	for len(ids)+1 > s.max {
		if err := s.drop(strconv.Itoa(ids[0])); err != nil {
			return m.head.CheckpointInfo, err
		}
		ids = ids[1:]
	}
	return m.head.CheckpointInfo, nil
}

func (s *CheckpointStore) writeManifest(m *ckManifest) error {
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "manifest-")
	if err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	err = enc.Encode(m.head)
	for _, e := range m.entries {
		if err != nil {
			break
		}
		err = enc.Encode(e)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.manifestPath(m.head.ID))
	}
	if err != nil {
		return fmt.Errorf("checkpoints: writing the manifest: %w", err)
	}
	return nil
}

// release drops the references of entries, removing objects no longer
// referred to.
func (s *CheckpointStore) release(entries []*ckEntry) {
	for _, e := range entries {
		if e.Hash == "" {
			continue
		}
		if s.refs[e.Hash]--; s.refs[e.Hash] <= 0 {
			delete(s.refs, e.Hash)
			p := s.objectPath(e.Hash)
			if fi, err := os.Stat(p); err == nil {
				s.used -= fi.Size()
			}
			os.Remove(p)
		}
	}
}

// Checkpoints lists the checkpoints kept, oldest first.
func (s *CheckpointStore) Checkpoints(ctx context.Context) ([]workspace.CheckpointInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	out := make([]workspace.CheckpointInfo, 0, len(ids))
	for _, id := range ids {
		m, err := s.load(strconv.Itoa(id), true)
		if err != nil {
			return nil, err
		}
		out = append(out, m.head.CheckpointInfo)
	}
	return out, nil
}

// DropCheckpoint removes checkpoint id and the content only it used.
func (s *CheckpointStore) DropCheckpoint(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	if err := s.account(); err != nil {
		return err
	}
	return s.drop(id)
}

func (s *CheckpointStore) drop(id string) error {
	m, err := s.load(id, false)
	if err != nil {
		return err
	}
	if err := os.Remove(s.manifestPath(id)); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	delete(s.recent, id)
	s.release(m.entries)
	return nil
}

// scanner walks the tree for one manifest.
type scanner struct {
	s      *CheckpointStore
	ctx    context.Context
	cache  map[string]*ckEntry    // the previous checkpoint's entries
	before int64                  // files changed before this keep their cached hash
	store  bool                   // store new content in the object store
	added  []*ckEntry             // entries whose references were taken
	groups map[[2]uint64]*ckEntry // first file seen of each inode with links
	ngroup int
	out    []*ckEntry
	bytes  int64
}

// scan walks the tree. With store, the content of every file is in the
// object store when it returns and the entries hold references to it
// (released again on error).
func (s *CheckpointStore) scan(ctx context.Context, prev *ckManifest, store bool) (*ckManifest, error) {
	sc := &scanner{s: s, ctx: ctx, store: store, groups: map[[2]uint64]*ckEntry{}}
	if prev != nil {
		sc.cache = prev.byPath()
		sc.before = prev.head.Scanned - int64(racyMargin)
	}
	start := time.Now().UnixNano()
	r, err := s.root.OpenRoot(".")
	if err == nil {
		err = sc.dir(r, "")
		r.Close()
	}
	if err != nil {
		if store {
			s.release(sc.added)
		}
		return nil, err
	}
	// Entries are listed depth first in name order, which is not the
	// order of their paths ("a-b" < "a/b").
	// bytes.Compare, not strings.Compare of conversions: those allocate
	// two strings per comparison, which cost as much as the walk.
	slices.SortFunc(sc.out, func(a, b *ckEntry) int { return bytes.Compare(a.Path, b.Path) })
	m := &ckManifest{entries: sc.out}
	m.head.Scanned, m.head.Entries, m.head.Bytes = start, len(sc.out), sc.bytes
	return m, nil
}

func (sc *scanner) dir(r *os.Root, rel string) error {
	if err := sc.ctx.Err(); err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	f, err := r.Open(".")
	if err != nil {
		return fmt.Errorf("checkpoints: %s: %w", rel, err)
	}
	ents, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return fmt.Errorf("checkpoints: %s: %w", rel, err)
	}
	for _, d := range ents {
		name := d.Name()
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		// A directory opened in an os.Root lists its entries with lstat
		// (os.ReadDir loads each entry's information there, as of the
		// listing): the information is that, not a second lstat.
		fi, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since the listing: as if listed after
		}
		if err != nil {
			return fmt.Errorf("checkpoints: %s: %w", p, err)
		}
		e := &ckEntry{Path: []byte(p), Mode: fi.Mode() & (fs.ModeType | fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}
		switch {
		case fi.IsDir():
			sub, err := r.OpenRoot(name)
			if err != nil {
				return changedErr(r, name, p, fi, err)
			}
			if st, err := sub.Stat("."); err != nil || !os.SameFile(fi, st) {
				sub.Close()
				return fmt.Errorf("checkpoints: %s was replaced while listed: %w", p, workspace.ErrTreeChanged)
			}
			sc.out = append(sc.out, e)
			err = sc.dir(sub, p)
			sub.Close()
			if err != nil {
				return err
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			t, err := r.Readlink(name)
			if err != nil {
				return changedErr(r, name, p, fi, err)
			}
			e.Target = []byte(t)
			sc.out = append(sc.out, e)
		case fi.Mode().IsRegular():
			if err := sc.file(r, name, e, fi); err != nil {
				return err
			}
			sc.out = append(sc.out, e)
		}
	}
	return nil
}

func (sc *scanner) file(r *os.Root, name string, e *ckEntry, fi fs.FileInfo) error {
	p := string(e.Path)
	ino, dev, ctime, nlink := statKey(fi)
	e.Size, e.MTime, e.Ino, e.Dev, e.CTime = fi.Size(), fi.ModTime().UnixNano(), ino, dev, ctime
	sc.bytes += e.Size
	if nlink > 1 && ino != 0 {
		key := [2]uint64{dev, ino}
		if first, ok := sc.groups[key]; ok {
			if first.Group == 0 {
				sc.ngroup++
				first.Group = sc.ngroup
			}
			e.Group, e.Hash, e.Size = first.Group, first.Hash, first.Size
			sc.take(e)
			return nil
		}
		sc.groups[key] = e
	}
	if c := sc.cache[p]; c != nil && c.Hash != "" && ino != 0 && c.Ino == ino && c.Dev == dev &&
		c.CTime == ctime && c.MTime == e.MTime && c.Size == e.Size && ctime < sc.before && e.MTime < sc.before {
		e.Hash = c.Hash
		sc.take(e)
		return nil
	}
	f, err := r.OpenFile(name, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return changedErr(r, name, p, fi, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !os.SameFile(fi, st) {
		return fmt.Errorf("checkpoints: %s was replaced while listed: %w", p, workspace.ErrTreeChanged)
	}
	h := sha256.New()
	if !sc.store {
		n, err := io.Copy(h, f)
		if err != nil {
			return fmt.Errorf("checkpoints: %s: %w", p, err)
		}
		e.Size, e.Hash = n, hex.EncodeToString(h.Sum(nil))
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Join(sc.s.dir, "tmp"), "object-")
	if err != nil {
		return fmt.Errorf("checkpoints: %w", err)
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(io.MultiWriter(h, tmp), f)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("checkpoints: %s: %w", p, err)
	}
	e.Size, e.Hash = n, hex.EncodeToString(h.Sum(nil))
	if sc.s.refs[e.Hash] == 0 {
		if sc.s.used+n > sc.s.maxB {
			return fmt.Errorf("checkpoints: %s: %d bytes more would exceed the store's bound of %d bytes: %w", p, n, sc.s.maxB, workspace.ErrCheckpointLimit)
		}
		obj := sc.s.objectPath(e.Hash)
		if err := os.MkdirAll(filepath.Dir(obj), 0o700); err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
		if err := os.Rename(tmp.Name(), obj); err != nil {
			return fmt.Errorf("checkpoints: %w", err)
		}
		sc.s.used += n
	}
	sc.take(e)
	return nil
}

// changedErr is the error of an operation on the entry name of r, listed
// as fi, that failed with err: [workspace.ErrTreeChanged] when the entry
// is no longer the one listed (a command swapped it), else err.
func changedErr(r *os.Root, name, p string, fi fs.FileInfo, err error) error {
	// These are what the operations for the type listed fail with when the
	// entry is now of another type (a link where a directory or file was
	// listed: ELOOP, or os.Root's "path escapes" for a link out; a file
	// where a link was: EINVAL). The entry may have been swapped back
	// since, which the lstat below would not see.
	if errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTDIR) ||
		errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "escapes") {
		return fmt.Errorf("checkpoints: %s was replaced while listed (%w): %w", p, err, workspace.ErrTreeChanged)
	}
	if now, lerr := r.Lstat(name); lerr != nil || !os.SameFile(fi, now) || now.Mode().Type() != fi.Mode().Type() {
		return fmt.Errorf("checkpoints: %s was replaced while listed (%w): %w", p, err, workspace.ErrTreeChanged)
	}
	return fmt.Errorf("checkpoints: %s: %w", p, err)
}

// take counts a reference of e to its object, when storing.
func (sc *scanner) take(e *ckEntry) {
	if sc.store {
		sc.s.refs[e.Hash]++
		sc.added = append(sc.added, e)
	}
}

// Diff reports what changed from checkpoint from to checkpoint to, or to
// the tree as it is now when to is empty.
func (s *CheckpointStore) Diff(ctx context.Context, from, to string) ([]workspace.Change, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	a, err := s.load(from, false)
	if err != nil {
		return nil, err
	}
	var b *ckManifest
	if to != "" {
		b, err = s.load(to, false)
	} else {
		b, err = s.scanNow(ctx)
	}
	if err != nil {
		return nil, err
	}
	content := func(e *ckEntry, live bool) []byte {
		if e.Size > workspace.MaxTextDiff {
			return nil
		}
		var data []byte
		if live {
			data, err = s.readLive(string(e.Path))
		} else {
			data, err = os.ReadFile(s.objectPath(e.Hash))
		}
		if err != nil {
			return nil
		}
		return data
	}
	return diffManifests(a, b, func(e *ckEntry) []byte { return content(e, false) },
		func(e *ckEntry) []byte { return content(e, to == "") }), nil
}

// diffManifests reports what changed from a to b, sorted by path; old and
// new read the content of a regular file of a and of b (nil when it cannot
// be read or is beyond [workspace.MaxTextDiff]).
func diffManifests(a, b *ckManifest, old, new func(*ckEntry) []byte) []workspace.Change {
	var out []workspace.Change
	bb := b.byPath()
	for _, x := range a.entries {
		p := string(x.Path)
		y := bb[p]
		if y == nil {
			c := workspace.Change{Path: p, Kind: workspace.ChangeDeleted, OldMode: x.Mode, OldSize: x.Size, OldTarget: string(x.Target)}
			if x.Mode.IsRegular() {
				c.Diff, c.Binary = diffText(p, old(x), []byte{}, x.Size, 0)
			}
			out = append(out, c)
			continue
		}
		delete(bb, p)
		c := workspace.Change{Path: p, OldMode: x.Mode, NewMode: y.Mode, OldSize: x.Size, NewSize: y.Size, OldTarget: string(x.Target), NewTarget: string(y.Target)}
		switch {
		case x.Mode.Type() != y.Mode.Type(), x.Hash != y.Hash, string(x.Target) != string(y.Target):
			c.Kind = workspace.ChangeModified
			if x.Mode.IsRegular() && y.Mode.IsRegular() {
				c.Diff, c.Binary = diffText(p, old(x), new(y), x.Size, y.Size)
			}
		case x.Mode != y.Mode:
			c.Kind = workspace.ChangeMode
		default:
			continue
		}
		out = append(out, c)
	}
	for p, y := range bb {
		c := workspace.Change{Path: p, Kind: workspace.ChangeAdded, NewMode: y.Mode, NewSize: y.Size, NewTarget: string(y.Target)}
		if y.Mode.IsRegular() {
			c.Diff, c.Binary = diffText(p, []byte{}, new(y), 0, y.Size)
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b workspace.Change) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// diffText is [workspace.UnifiedDiff] of two contents, nil when one could
// not be read or is beyond the cap.
func diffText(p string, old, new []byte, oldSize, newSize int64) (string, bool) {
	if (old == nil && oldSize > 0) || (new == nil && newSize > 0) {
		return "", true
	}
	d, text := workspace.UnifiedDiff(p, old, new)
	return d, !text
}

// readLive reads the regular file p of the tree, not following a link as
// its last component.
func (s *CheckpointStore) readLive(p string) ([]byte, error) {
	f, err := s.root.OpenFile(p, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, workspace.MaxTextDiff+1))
}

// scanNow walks the tree as it is now without storing its content, the
// newest checkpoint's hashes reused for the files that did not change.
func (s *CheckpointStore) scanNow(ctx context.Context) (*ckManifest, error) {
	prev, err := s.latest()
	if err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		m, err := s.scan(ctx, prev, false)
		if err == nil || !errors.Is(err, workspace.ErrTreeChanged) || try == 2 {
			return m, err
		}
	}
}

// Restore brings the tree, or the given paths and what is below them, back
// to checkpoint id, rewriting only what differs.
func (s *CheckpointStore) Restore(ctx context.Context, id string, paths ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	target, err := s.load(id, false)
	if err != nil {
		return err
	}
	for i, p := range paths {
		p = path.Clean(filepath.ToSlash(p))
		if p == "." || p == "" {
			paths = nil // the whole tree
			break
		}
		if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
			return fmt.Errorf("checkpoints: restore %s: %w", p, workspace.ErrOutside)
		}
		paths[i] = p
	}
	cur, err := s.scanNow(ctx)
	if err != nil {
		return err
	}
	chosen := func(p string) bool {
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
	want := slices.DeleteFunc(slices.Clone(target.entries), func(e *ckEntry) bool { return !chosen(string(e.Path)) })
	have := map[string]*ckEntry{}
	for _, e := range cur.entries {
		if chosen(string(e.Path)) {
			have[string(e.Path)] = e
		}
	}
	wantBy := map[string]*ckEntry{}
	for _, e := range want {
		wantBy[string(e.Path)] = e
	}
	r := s.root
	// Remove what the checkpoint did not have, or had as another type,
	// children before parents.
	for i := len(cur.entries) - 1; i >= 0; i-- {
		h := cur.entries[i]
		p := string(h.Path)
		if !chosen(p) {
			continue
		}
		if w := wantBy[p]; w != nil && w.Mode.Type() == h.Mode.Type() {
			continue
		}
		if h.Mode.IsDir() {
			err = r.RemoveAll(p)
		} else {
			err = r.Remove(p)
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("checkpoints: restore: removing %s: %w", p, err)
		}
		delete(have, p)
	}
	// The parents of the chosen paths, which a partial restore needs.
	for _, q := range paths {
		if dir := path.Dir(q); dir != "." && wantBy[q] != nil {
			if err := r.MkdirAll(dir, 0o700); err != nil {
				return fmt.Errorf("checkpoints: restore: %w", err)
			}
		}
	}
	var dirs []*ckEntry
	written := map[int]bool{}    // hard-link groups whose first file was rewritten
	firsts := map[int]*ckEntry{} // first file of each group
	for _, w := range want {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("checkpoints: restore: %w", err)
		}
		p := string(w.Path)
		h := have[p]
		switch {
		case w.Mode.IsDir():
			if h == nil {
				if err := r.Mkdir(p, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("checkpoints: restore: %w", err)
				}
			}
			dirs = append(dirs, w)
		case w.Mode&fs.ModeSymlink != 0:
			if h != nil && string(h.Target) == string(w.Target) {
				continue
			}
			if h != nil {
				r.Remove(p)
			}
			if err := r.Symlink(string(w.Target), p); err != nil {
				return fmt.Errorf("checkpoints: restore: %w", err)
			}
		default:
			if w.Group > 0 {
				if first := firsts[w.Group]; first != nil {
					hf := have[string(first.Path)]
					if !written[w.Group] && h != nil && hf != nil && h.Ino == hf.Ino && h.Dev == hf.Dev {
						continue
					}
					r.Remove(p)
					if err := r.Link(string(first.Path), p); err != nil {
						return fmt.Errorf("checkpoints: restore: %w", err)
					}
					continue
				}
				firsts[w.Group] = w
			}
			if h != nil && h.Hash == w.Hash && (h.Group == 0) == (w.Group == 0) {
				if h.Mode != w.Mode {
					if err := r.Chmod(p, w.Mode); err != nil {
						return fmt.Errorf("checkpoints: restore: %w", err)
					}
				}
				continue
			}
			if err := s.writeFile(p, w); err != nil {
				return err
			}
			written[w.Group] = true
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		d := dirs[i]
		if h := have[string(d.Path)]; h != nil && h.Mode == d.Mode {
			continue
		}
		if err := r.Chmod(string(d.Path), d.Mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
			return fmt.Errorf("checkpoints: restore: %w", err)
		}
	}
	return nil
}

// writeFile replaces the file p with the content and mode of w, through a
// temporary file in the same directory renamed over it.
func (s *CheckpointStore) writeFile(p string, w *ckEntry) error {
	src, err := os.Open(s.objectPath(w.Hash))
	if err != nil {
		return fmt.Errorf("checkpoints: restore %s: %w", p, err)
	}
	defer src.Close()
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := path.Join(path.Dir(p), ".helikon-restore-"+hex.EncodeToString(rnd[:]))
	f, err := s.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoints: restore %s: %w", p, err)
	}
	_, err = io.Copy(f, src)
	if err == nil {
		err = f.Chmod(w.Mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		mt := time.Unix(0, w.MTime)
		if err = s.root.Chtimes(tmp, mt, mt); err == nil {
			err = s.root.Rename(tmp, p)
		}
	}
	if err != nil {
		s.root.Remove(tmp)
		return fmt.Errorf("checkpoints: restore %s: %w", p, err)
	}
	return nil
}

// Workspace's checkpoints are its engine's [CheckpointStore] on its
// directory.
var _ workspace.Checkpointer = (*Workspace)(nil)

// checkpoints starts a checkpoint operation: it fails with
// [workspace.ErrGone] after Close. The caller runs done when it is over.
func (w *Workspace) checkpoints(ctx context.Context, op string) (s *CheckpointStore, done func(), err error) {
	if err := w.enter(ctx, op, "."); err != nil {
		return nil, nil, err
	}
	return w.ckpt, w.mu.RUnlock, nil
}

// Checkpoint records the directory's tree; see [CheckpointStore].
func (w *Workspace) Checkpoint(ctx context.Context, label string) (workspace.CheckpointInfo, error) {
	s, done, err := w.checkpoints(ctx, "checkpoint")
	if err != nil {
		return workspace.CheckpointInfo{}, err
	}
	defer done()
	return s.Checkpoint(ctx, label)
}

// Checkpoints lists the checkpoints of the directory, oldest first.
func (w *Workspace) Checkpoints(ctx context.Context) ([]workspace.CheckpointInfo, error) {
	s, done, err := w.checkpoints(ctx, "checkpoints")
	if err != nil {
		return nil, err
	}
	defer done()
	return s.Checkpoints(ctx)
}

// Diff reports what changed between two checkpoints, or since one when to
// is empty.
func (w *Workspace) Diff(ctx context.Context, from, to string) ([]workspace.Change, error) {
	s, done, err := w.checkpoints(ctx, "diff")
	if err != nil {
		return nil, err
	}
	defer done()
	return s.Diff(ctx, from, to)
}

// Restore brings the directory, or paths in it, back to checkpoint id.
func (w *Workspace) Restore(ctx context.Context, id string, paths ...string) error {
	s, done, err := w.checkpoints(ctx, "restore")
	if err != nil {
		return err
	}
	defer done()
	return s.Restore(ctx, id, paths...)
}

// DropCheckpoint removes checkpoint id.
func (w *Workspace) DropCheckpoint(ctx context.Context, id string) error {
	s, done, err := w.checkpoints(ctx, "drop checkpoint")
	if err != nil {
		return err
	}
	defer done()
	return s.DropCheckpoint(ctx, id)
}
