package launcher

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNotWritablePath is wrapped by [WritablePaths] when a path is not an
// absolute, clean directory reached from / without a symbolic link.
var ErrNotWritablePath = errors.New("not an absolute directory reached without symbolic links")

// WritablePaths mounts each of paths (absolute directories outside the
// root: the session home and the named caches of the backend) over itself
// writable, nosuid and nodev, recursively, in the calling thread's mount
// namespace, after [ReadOnlyView] made every mount read-only. The backend
// only passes directories whose host mount is writable: the view never
// grants what the host does not. Each path is opened component by
// component from / without following a symbolic link ([OpenProtected]),
// and the mount is made on that descriptor, so a link planted on the way
// (by anyone, at any time) cannot redirect it: the call fails instead.
func WritablePaths(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	rfd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /: %w", err)
	}
	defer unix.Close(rfd)
	for _, p := range paths {
		if err := writablePath(rfd, p); err != nil {
			return fmt.Errorf("writable path %s: %w", p, err)
		}
	}
	return nil
}

func writablePath(rfd int, p string) error {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p || p == "/" {
		return ErrNotWritablePath
	}
	fd, _, err := OpenProtected(rfd, strings.TrimPrefix(p, "/"), false)
	if errors.Is(err, ErrNotProtectable) {
		return ErrNotWritablePath
	}
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("clone mount: %w", err)
	}
	defer unix.Close(tree)
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY, Attr_set: unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}); err != nil {
		return fmt.Errorf("make the mount writable: %w", err)
	}
	if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	return nil
}
