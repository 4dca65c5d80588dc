// Package readonlypaths resolves and prepares the directories beneath a
// root that a backend with a kernel boundary keeps read-only for its
// commands (ossandbox's and workspace/docker's ReadOnlyPaths): helikon's
// CLI passes the policy files' directories.
package readonlypaths

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrBad is wrapped by [Resolve] for a path that is not a directory
// beneath the root.
var ErrBad = errors.New("bad read-only path")

// ErrNotDirectory is wrapped by [Ensure] for a path that is a symbolic link
// or not a directory: a link could be replaced by a command, or lead where
// a mount would not cover what a reader of the path finds.
var ErrNotDirectory = errors.New("not a directory of the root reached without symbolic links")

// Resolve returns paths beneath root (absolute, without symbolic links)
// relative to it, with slashes and without duplicates: a relative path is
// taken relative to root; an absolute one has its symbolic links resolved
// (as far as it exists) and is dropped when it lies outside root, since
// commands cannot write there anyway. The root itself, and relative paths
// that leave it, are errors.
func Resolve(root string, paths []string) ([]string, error) {
	var rel []string
	for _, p := range paths {
		r := filepath.Clean(p)
		if filepath.IsAbs(p) {
			real, err := evalExisting(r)
			if err != nil {
				return nil, fmt.Errorf("%w: %s: %w", ErrBad, p, err)
			}
			if r, err = filepath.Rel(root, real); err != nil || !filepath.IsLocal(r) {
				continue // outside the root
			}
		}
		if !filepath.IsLocal(r) || r == "." {
			return nil, fmt.Errorf("%w: %s is not a directory beneath the root", ErrBad, p)
		}
		r = filepath.ToSlash(r)
		if !slices.Contains(rel, r) {
			rel = append(rel, r)
		}
	}
	return rel, nil
}

// evalExisting resolves the symbolic links of the longest existing
// ancestor of the absolute, clean path p and appends the rest.
func evalExisting(p string) (string, error) {
	var rest []string
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(append([]string{real}, rest...)...), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || filepath.Dir(p) == p {
			return "", err
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = filepath.Dir(p)
	}
}

// Ensure creates each of rel (as [Resolve] returns them) beneath root that
// is missing, component by component (mode 0755, owned by the caller), and
// refuses ([ErrNotDirectory]) one whose components are not all
// directories: a command then finds a directory it cannot write where it
// could otherwise have created a policy file that a later run obeys. The
// directories are left in place afterwards (see the backends' docs).
func Ensure(root string, rel []string) error {
	if len(rel) == 0 {
		return nil
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, p := range rel {
		cur := ""
		for comp := range strings.SplitSeq(p, "/") {
			cur = filepath.Join(cur, comp)
			fi, err := r.Lstat(cur)
			if errors.Is(err, fs.ErrNotExist) {
				if err = r.Mkdir(cur, 0o755); errors.Is(err, fs.ErrExist) {
					err = nil
				}
				if err == nil {
					fi, err = r.Lstat(cur)
				}
			}
			if err != nil {
				return fmt.Errorf("read-only path %s: %w", p, err)
			}
			if !fi.IsDir() {
				return fmt.Errorf("read-only path %s: %w", p, ErrNotDirectory)
			}
		}
	}
	return nil
}
