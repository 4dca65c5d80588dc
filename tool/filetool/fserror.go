package filetool

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/workspace"
)

// fsError words an error of the file system for the model: what happened
// to the path it gave (p) and what to do next. The file system's errors
// are matched with errors.Is (see package workspace), so every engine's
// errors read alike; the error returned still wraps the cause. Errors
// already worded for the model (an Edit's own) are returned as they are.
func fsError(ctx context.Context, fsys workspace.FS, p string, err error) error {
	var ia *helikon.InvalidArgsError
	var de *helikon.DeniedError
	var oe *helikon.OtherError
	if errors.As(err, &ia) || errors.As(err, &de) || errors.As(err, &oe) {
		return err
	}
	dir := fsys.Dir()
	switch {
	case errors.Is(err, fs.ErrInvalid):
		return invalidPath(p, dir, err)
	case errors.Is(err, workspace.ErrOutside):
		if _, lerr := workspace.Rel(dir, p); lerr != nil {
			return helikon.Denied("%s is outside the sandbox root %s; use a path inside the root (relative paths are resolved against it)", p, dir)
		}
		how := `through ".." or a symbolic link`
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) && pe.Err != workspace.ErrOutside {
			how = strings.TrimSuffix(pe.Err.Error(), ": "+workspace.ErrOutside.Error())
		}
		return helikon.Denied("%s leads outside the sandbox root %s (%s); the file tools follow only relative links that stay inside the root: use the file's path inside the root", p, dir, how)
	case errors.Is(err, workspace.ErrGone):
		return helikon.Other(fmt.Errorf("the workspace is gone (closed, or its container or machine was removed), so %s was not touched: %w", p, workspace.ErrGone))
	case errors.Is(err, fs.ErrNotExist):
		return helikon.Other(fmt.Errorf("no such file: %s (paths are relative to the sandbox root %s); check the name, or create the file with Write: %w", p, dir, fs.ErrNotExist))
	case errors.Is(err, workspace.ErrNotRegular):
		return notRegular(ctx, fsys, p)
	case errors.Is(err, workspace.ErrChanged):
		return helikon.Other(fmt.Errorf("%s was changed by someone else while it was being updated, and was left as they wrote it; read it again and redo the change: %w", p, workspace.ErrChanged))
	case errors.Is(err, syscall.ENOTDIR):
		return helikon.Other(fmt.Errorf("%s: a component of the path is not a directory: %w", p, syscall.ENOTDIR))
	case errors.Is(err, syscall.ELOOP):
		return helikon.Other(fmt.Errorf("%s: too many levels of symbolic links; point the links at the file directly: %w", p, syscall.ELOOP))
	case errors.Is(err, syscall.ENAMETOOLONG):
		return helikon.Other(fmt.Errorf("%s: the path is too long, or has too many components and \"..\" steps to resolve; give it without \"..\" or in fewer steps: %w", p, syscall.ENAMETOOLONG))
	case errors.Is(err, syscall.EAGAIN):
		return helikon.Other(fmt.Errorf("%s changed while it was being resolved or written (another process is renaming files in it); try again: %w", p, err))
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return helikon.Other(fmt.Errorf("%s: no space left (the disk or the quota is full); nothing was changed: free some space, or write less: %w", p, err))
	case errors.Is(err, syscall.EFBIG):
		return helikon.Other(fmt.Errorf("%s: file too large for this file system or process limit; nothing was changed: write a smaller file: %w", p, err))
	case errors.Is(err, fs.ErrPermission):
		return helikon.Other(fmt.Errorf("%s: the operating system refused access (permission denied): %w", p, err))
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return helikon.Other(err)
	}
	return helikon.Other(fmt.Errorf("%s: %w", p, err))
}

// invalidPath words a path no file can have.
func invalidPath(p, dir string, err error) error {
	switch {
	case p == "":
		return helikon.InvalidArgs("path: empty; give a file path relative to the sandbox root " + dir)
	case strings.IndexByte(p, 0) >= 0:
		return helikon.InvalidArgs(fmt.Sprintf("path: %q contains a NUL byte, which no file name can contain", p))
	case len(p) > workspace.MaxPathBytes:
		return helikon.InvalidArgs(fmt.Sprintf("path: %d bytes long, over the %d bytes a path may have; use a shorter path", len(p), workspace.MaxPathBytes))
	}
	return helikon.InvalidArgs(fmt.Sprintf("path: %s: %v", p, err))
}

// notRegular words the refusal of a path that is not a regular file,
// saying what it is: from the path itself when it names a directory, else
// from the file's information (one more look, on this error path only).
func notRegular(ctx context.Context, fsys workspace.FS, p string) error {
	cause := workspace.ErrNotRegular
	if rel, err := workspace.Rel(fsys.Dir(), p); err == nil && path.Clean(rel) == "." {
		return helikon.Other(fmt.Errorf("%s is a directory, the sandbox root, not a file; name a file inside it: %w", p, cause))
	}
	if strings.HasSuffix(p, "/") {
		return helikon.Other(fmt.Errorf("%s ends in a slash, which names a directory; name the file without the trailing slash: %w", p, cause))
	}
	if last := path.Base(filepath.ToSlash(p)); last == "." || last == ".." {
		return helikon.Other(fmt.Errorf("%s ends in %q, which names a directory; name the file itself: %w", p, last, cause))
	}
	var m fs.FileMode
	if fi, err := fsys.Stat(ctx, p); err == nil {
		m = fi.Mode()
	}
	switch {
	case m.IsDir():
		return helikon.Other(fmt.Errorf("%s is a directory, not a file; list it with a shell command such as ls, or name a file inside it: %w", p, cause))
	case m&fs.ModeNamedPipe != 0:
		return helikon.Other(fmt.Errorf("%s is a named pipe (FIFO), not a regular file; it is refused because reading it could block forever: %w", p, cause))
	case m&fs.ModeSocket != 0:
		return helikon.Other(fmt.Errorf("%s is a socket, not a regular file; only regular files can be read or written: %w", p, cause))
	case m&fs.ModeDevice != 0:
		return helikon.Other(fmt.Errorf("%s is a device file, not a regular file; only regular files can be read or written: %w", p, cause))
	}
	return helikon.Other(fmt.Errorf("%s is not a regular file; only regular files can be read or written: %w", p, cause))
}

// unseen is the refusal of a call whose path led, through a symbolic link
// the permission check could not see, to real (relative to the root).
func unseen(tool, p, dir, real string) error {
	return helikon.Denied("%s leads through a symbolic link to %s, which the permission check did not see; call %s again with the path %s so that the rules are checked against it", p, real, tool, absPath(dir, real))
}

// seen reports whether the permission check saw the file real (relative to
// the root) among its targets. A call that did not come through the check
// (no targets) was checked against nothing, and passes.
func seen(t *helikon.Targets, dir, real string) bool {
	if t == nil {
		return true
	}
	want := absPath(dir, real)
	for _, pt := range t.Paths {
		if pt.Path == want {
			return true
		}
	}
	return false
}

// absPath is rel, relative to the root dir, as an absolute path.
func absPath(dir, rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }

// needsCheck reports whether a write must itself check the path it leads
// to against the targets: whenever the call came through the permission
// check. A resolver's targets include where links led when the rules were
// matched, but a command of the workspace can swap a directory for a link
// between that check and the write; the write compares what it resolves
// itself (in one operation on an [workspace.ExpectWriter], the local FS
// and the remote ones alike).
func needsCheck(t *helikon.Targets) bool { return t != nil }

// expected is what a write may touch: the targets the permission check saw, relative to the root (see
// [workspace.ExpectWriter]). A target outside the root is dropped: the
// file system refuses such a path itself.
func expected(t *helikon.Targets, dir string) []string {
	var out []string
	for _, pt := range t.Paths {
		if !filepath.IsAbs(pt.Path) {
			continue
		}
		rel, err := workspace.Rel(dir, pt.Path)
		if err != nil {
			continue
		}
		if rel = path.Clean(rel); !slices.Contains(out, rel) {
			out = append(out, rel)
		}
	}
	return out
}

// writeError is fsError for Write and Edit: a write that a link led to a
// file the permission check did not see is refused, naming that file.
func writeError(ctx context.Context, fsys workspace.FS, tool, p string, err error) error {
	if ue := (*workspace.UnexpectedPathError)(nil); errors.As(err, &ue) {
		return unseen(tool, p, fsys.Dir(), ue.Path)
	}
	return fsError(ctx, fsys, p, err)
}
