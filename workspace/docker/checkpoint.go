package docker

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/moby/moby/client"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
)

// Checkpoints of a Docker workspace ([workspace.Checkpointer]).
//
// In the bind mode the files are on this machine: the workspace's
// checkpoints are package local's [local.CheckpointStore] on the bind
// mount's source, with its guarantees (every access through os.Root, the
// store outside the root, cost following the change).
//
// In the isolated mode the files are in the container. A checkpoint, a
// diff to now or a restore first brings the container's tree to this
// machine, as a tar stream of the archive API (links as links, modes,
// hard links, any byte in names), into a mirror directory (created with
// mode 0700 under the temporary directory, removed by Close), written
// through os.Root so that no name or link in the stream leads outside
// it; the same store then records it. A restore rewrites the mirror, then
// replaces the container's tree, or the chosen paths, with it through the
// archive API, owned by the container's user. The cost follows the size
// of the tree, not of the change: every operation reads the whole tree
// from the container. The store of an isolated workspace is removed with
// its container, by Close.
var _ workspace.Checkpointer = (*Workspace)(nil)

// checkpointer returns the workspace's checkpoint implementation, made on
// first use.
func (w *Workspace) checkpointer() (*ckpt, error) {
	w.ckOnce.Do(func() {
		opts := w.e.opts.Checkpoints
		if w.sb != nil {
			w.ck = &ckpt{store: local.NewCheckpointStore(w.sb.Root(), w.sb.Dir(), &opts)}
			return
		}
		c := &ckpt{w: w, max: opts.MaxBytes}
		if c.max <= 0 {
			c.max = local.DefaultMaxCheckpointBytes
		}
		c.mirror, w.ckErr = os.MkdirTemp("", "helikon-docker-mirror-")
		if w.ckErr != nil {
			w.ckErr = fmt.Errorf("docker: checkpoints: %w", w.ckErr)
			return
		}
		if c.root, w.ckErr = os.OpenRoot(c.mirror); w.ckErr != nil {
			os.RemoveAll(c.mirror)
			return
		}
		switch {
		case opts.Dir != "": // one store per container beneath it
			opts.Dir = filepath.Join(opts.Dir, "docker-"+w.id)
		default:
			state := os.Getenv("XDG_STATE_HOME")
			if state == "" {
				home, err := os.UserHomeDir()
				if err != nil {
					w.ckErr = fmt.Errorf("docker: checkpoints: no $XDG_STATE_HOME and no home directory: %w", err)
					return
				}
				state = filepath.Join(home, ".local", "state")
			}
			opts.Dir = filepath.Join(state, "helikon", "checkpoints", "docker-"+w.id)
		}
		c.dir = opts.Dir
		c.store = local.NewCheckpointStore(c.root, c.mirror, &opts)
		w.ck = c
	})
	return w.ck, w.ckErr
}

// closeCheckpoints removes the isolated mode's mirror and store (the
// container they describe is being removed).
func (w *Workspace) closeCheckpoints() {
	if c := w.ck; c != nil && c.w != nil {
		c.root.Close()
		os.RemoveAll(c.mirror)
		os.RemoveAll(c.dir)
	}
}

// ckpt is a workspace's checkpoint store and, in the isolated mode, the
// mirror of the container's tree it records.
type ckpt struct {
	store *local.CheckpointStore
	// The isolated mode's mirror (w nil in the bind mode).
	w      *Workspace
	mirror string
	dir    string // the store's directory
	root   *os.Root
	max    int64
	mu     sync.Mutex // one pull or push of the mirror at a time
}

// enter starts a checkpoint operation: it fails after Close, and Close
// waits for it.
func (w *Workspace) enterCheckpoint() (*ckpt, func(), error) {
	done, err := guardFS{w: w}.enter()
	if err != nil {
		return nil, nil, err
	}
	c, err := w.checkpointer()
	if err != nil {
		done()
		return nil, nil, err
	}
	if c.w != nil {
		c.mu.Lock()
		unlock := done
		done = func() { c.mu.Unlock(); unlock() }
	}
	return c, done, nil
}

// Checkpoint records the workspace's tree.
func (w *Workspace) Checkpoint(ctx context.Context, label string) (workspace.CheckpointInfo, error) {
	c, done, err := w.enterCheckpoint()
	if err != nil {
		return workspace.CheckpointInfo{}, err
	}
	defer done()
	if err := c.pull(ctx); err != nil {
		return workspace.CheckpointInfo{}, err
	}
	return c.store.Checkpoint(ctx, label)
}

// Checkpoints lists the checkpoints kept, oldest first.
func (w *Workspace) Checkpoints(ctx context.Context) ([]workspace.CheckpointInfo, error) {
	c, done, err := w.enterCheckpoint()
	if err != nil {
		return nil, err
	}
	defer done()
	return c.store.Checkpoints(ctx)
}

// Diff reports what changed between two checkpoints, or from one to now.
func (w *Workspace) Diff(ctx context.Context, from, to string) ([]workspace.Change, error) {
	c, done, err := w.enterCheckpoint()
	if err != nil {
		return nil, err
	}
	defer done()
	if to == "" {
		if err := c.pull(ctx); err != nil {
			return nil, err
		}
	}
	return c.store.Diff(ctx, from, to)
}

// Restore brings the tree, or the paths given, back to checkpoint id.
func (w *Workspace) Restore(ctx context.Context, id string, paths ...string) error {
	c, done, err := w.enterCheckpoint()
	if err != nil {
		return err
	}
	defer done()
	if err := c.pull(ctx); err != nil {
		return err
	}
	if err := c.store.Restore(ctx, id, paths...); err != nil {
		return err
	}
	return c.push(ctx, paths)
}

// DropCheckpoint removes checkpoint id.
func (w *Workspace) DropCheckpoint(ctx context.Context, id string) error {
	c, done, err := w.enterCheckpoint()
	if err != nil {
		return err
	}
	defer done()
	return c.store.DropCheckpoint(ctx, id)
}

// pull makes the mirror the container's tree as it is now (nothing to do
// in the bind mode).
func (c *ckpt) pull(ctx context.Context) error {
	if c.w == nil {
		return nil
	}
	ents, err := os.ReadDir(c.mirror)
	if err != nil {
		return fmt.Errorf("docker: checkpoints: %w", err)
	}
	for _, e := range ents {
		if err := c.root.RemoveAll(e.Name()); err != nil {
			return fmt.Errorf("docker: checkpoints: %w", err)
		}
	}
	w := c.w
	r, err := w.e.cli.CopyFromContainer(ctx, w.id, client.CopyFromContainerOptions{SourcePath: w.dir + "/."})
	if err != nil {
		return fmt.Errorf("docker: checkpoints: reading the tree of the container: %w", gone(err))
	}
	defer r.Content.Close()
	return c.extract(ctx, tar.NewReader(r.Content))
}

// extract writes the tar stream's entries into the mirror, through
// os.Root: a name that leaves it, or a path through a link, fails.
func (c *ckpt) extract(ctx context.Context, tr *tar.Reader) error {
	type dirMode struct {
		name string
		mode fs.FileMode
	}
	var dirs []dirMode
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("docker: checkpoints: %w", err)
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("docker: checkpoints: reading the tree of the container: %w", err)
		}
		// Names are "ROOT/..." (the directory's base name), or "./...".
		_, rel, _ := strings.Cut(strings.TrimPrefix(h.Name, "./"), "/")
		if strings.HasPrefix(h.Name, "./") {
			rel = strings.TrimPrefix(h.Name, "./")
		}
		rel = strings.TrimSuffix(rel, "/")
		mode := h.FileInfo().Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		if rel == "" || rel == "." {
			if h.Typeflag == tar.TypeDir {
				dirs = append(dirs, dirMode{".", mode})
			}
			continue
		}
		if !localName(rel) {
			return fmt.Errorf("docker: checkpoints: the container's archive names %q, outside the tree", h.Name)
		}
		if dir := path.Dir(rel); dir != "." {
			if err := c.root.MkdirAll(dir, 0o700); err != nil {
				return fmt.Errorf("docker: checkpoints: %s: %w", rel, err)
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := c.root.Mkdir(rel, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("docker: checkpoints: %s: %w", rel, err)
			}
			dirs = append(dirs, dirMode{rel, mode})
		case tar.TypeSymlink:
			if err := c.root.Symlink(h.Linkname, rel); err != nil {
				return fmt.Errorf("docker: checkpoints: %s: %w", rel, err)
			}
		case tar.TypeLink:
			_, target, _ := strings.Cut(strings.TrimPrefix(h.Linkname, "./"), "/")
			if strings.HasPrefix(h.Linkname, "./") {
				target = strings.TrimPrefix(h.Linkname, "./")
			}
			if !localName(target) {
				return fmt.Errorf("docker: checkpoints: the container's archive links %q to %q, outside the tree", h.Name, h.Linkname)
			}
			if err := c.root.Link(target, rel); err != nil {
				return fmt.Errorf("docker: checkpoints: %s: %w", rel, err)
			}
		case tar.TypeReg:
			if total += h.Size; total > c.max {
				return fmt.Errorf("docker: checkpoints: the container's tree holds more than %d bytes: %w", c.max, workspace.ErrCheckpointLimit)
			}
			f, err := c.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return fmt.Errorf("docker: checkpoints: %s: %w", rel, err)
			}
			_, err = io.Copy(f, tr)
			if err == nil {
				err = f.Chmod(mode)
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err == nil {
				err = c.root.Chtimes(rel, h.ModTime, h.ModTime)
			}
			if err != nil {
				return fmt.Errorf("docker: checkpoints: %s: %w", rel, err)
			}
		default: // FIFOs, devices: not recorded
		}
	}
	// Modes last, deepest first: a read-only directory gets its entries
	// first.
	for _, d := range slices.Backward(dirs) {
		if err := c.root.Chmod(d.name, d.mode); err != nil {
			return fmt.Errorf("docker: checkpoints: %s: %w", d.name, err)
		}
	}
	return nil
}

// push replaces the container's tree, or the paths given, with the
// mirror's (nothing to do in the bind mode).
func (c *ckpt) push(ctx context.Context, paths []string) error {
	if c.w == nil {
		return nil
	}
	w := c.w
	ci, err := w.e.inspectWorkspace(ctx, w.id)
	if err != nil {
		return err
	}
	uid, gid, err := w.e.owner(ctx, w.id, ci.Config.User)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	for _, p := range paths {
		p = path.Clean(filepath.ToSlash(p))
		// Remove what is there (a directory's content, for the root),
		// names with any byte included, then copy the mirror's in.
		script := `cd "$1" && if [ "$2" = . ]; then for f in * .[!.]* ..?*; do if [ -e "$f" ] || [ -L "$f" ]; then rm -rf -- "$f"; fi; done; else rm -rf -- "$2"; fi`
		_, stderr, code, err := runner{w}.Exec(ctx, []string{"/bin/sh", "-c", script, "sh", w.dir, p}, nil, 1<<16)
		if err != nil {
			return fmt.Errorf("docker: checkpoints: restore: %w", gone(err))
		}
		if code != 0 {
			return fmt.Errorf("docker: checkpoints: restore: clearing %s in the container: exit %d: %s", p, code, stderr)
		}
		if _, err := c.root.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			continue // the checkpoint did not have it
		}
		src := filepath.Join(c.mirror, filepath.FromSlash(p))
		dst := strings.TrimPrefix(path.Join(w.dir, p), "/")
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(writeTree(pw, src, dst, uid, gid)) }()
		_, err = w.e.cli.CopyToContainer(ctx, w.id, client.CopyToContainerOptions{DestinationPath: "/", Content: pr})
		pr.CloseWithError(errors.New("docker: copy ended"))
		if err != nil {
			return fmt.Errorf("docker: checkpoints: restore %s into the container: %w", p, gone(err))
		}
	}
	return nil
}

// localName reports whether name is a clean relative path that stays in
// the tree ("a/b", not "/a", "../a", "a/../b" or "a//b"). Unlike
// fs.ValidPath it takes any byte but "/" and NUL in a component: names
// need not be UTF-8. (os.Root refuses an escape anyway; this says why.)
func localName(name string) bool {
	return name != "" && !strings.Contains(name, "\x00") && path.Clean(name) == name && !path.IsAbs(name) &&
		name != ".." && !strings.HasPrefix(name, "../")
}
