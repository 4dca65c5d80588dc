package launcher

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrNotProtectable is wrapped by [OpenProtected] and [ProtectPaths] when a
// path to be made read-only is not a directory of the root reached without
// a symbolic link: a link could be replaced by the command, or point where
// the mount would not cover what a reader of the path finds.
var ErrNotProtectable = errors.New("not a directory of the root reached without symbolic links")

// OpenProtected opens rel, a clean relative path of directories beneath the
// directory rootFD, as an O_PATH descriptor (close-on-exec), refusing any
// symbolic link on the way ([ErrNotProtectable]). With create, a missing
// component is created (mode 0755, owned by the caller) first, so that
// the command finds a directory it cannot write rather than a name it can
// take; ok is false, with no error, where a missing component cannot be
// created because the root's file system is read-only, where no command
// can create it either.
func OpenProtected(rootFD int, rel string, create bool) (fd int, ok bool, err error) {
	cur := rootFD
	defer func() {
		if cur != rootFD && cur != fd {
			unix.Close(cur)
		}
	}()
	for comp := range strings.SplitSeq(rel, "/") {
		next, err := openComponent(cur, comp)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(cur, comp, 0o755); err == unix.EROFS {
				return -1, false, nil
			}
			if err == nil || err == unix.EEXIST {
				next, err = openComponent(cur, comp)
			}
		}
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
			return -1, false, fmt.Errorf("%s: %w", rel, ErrNotProtectable)
		}
		if err != nil {
			return -1, false, fmt.Errorf("open %s: %w", rel, err)
		}
		if cur != rootFD {
			unix.Close(cur)
		}
		cur = next
	}
	return cur, true, nil
}

// openComponent opens one directory entry of dir, a directory and never a
// link to one. name is a single component (rel is clean and relative), so
// O_NOFOLLOW with O_DIRECTORY refuses a link (ENOTDIR, or ELOOP) with no
// resolution left for a link to redirect. It uses openat, not openat2: a
// thread confined ahead checks its paths after its seccomp filter is in
// place, and that filter answers openat2 with ENOSYS (its mode is out of
// the filter's reach; see internal/seccomp).
func openComponent(dir int, name string) (int, error) {
	if name == "" || name == "." || name == ".." || strings.Contains(name, "/") {
		return -1, unix.EXDEV // not a component beneath dir
	}
	for {
		fd, err := unix.Openat(dir, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != unix.EINTR && err != unix.EAGAIN {
			return fd, err
		}
	}
}

// ProtectPaths mounts each of rel (clean relative paths of directories
// beneath root) read-only, nosuid and nodev over itself, recursively, in the
// calling thread's mount namespace, which must be private. A command then
// cannot write, create, remove or rename anything beneath them (EROFS), nor
// rename, remove or replace the directories themselves (EBUSY: they are
// mount points), nor give a file in them a second name elsewhere (EXDEV:
// link(2) does not cross mounts), however it names them. root must be
// opened after the root's own mount is in place (ReadOnlyView), so that
// the new mounts sit on top of it.
//
// The directories must exist (the backend creates them, in the host's
// namespace, before each command): one that is missing is an error, unless
// the root's mount is read-only, where no command can create it. Nothing
// is created here, so that a thread confined ahead for a command never
// makes again a directory removed meanwhile.
//
// Each mount is made on the descriptor of the directory opened, never on
// a path looked up again, so a link swapped in meanwhile cannot redirect
// it.
func ProtectPaths(root string, rel []string) error {
	return eachProtected(root, rel, func(fd int) error {
		tree, err := unix.OpenTree(fd, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("clone mount: %w", err)
		}
		defer unix.Close(tree)
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}); err != nil {
			return fmt.Errorf("make the mount read-only: %w", err)
		}
		if err := unix.MoveMount(tree, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
		return nil
	})
}

// ErrProtectionGone is wrapped by [CheckProtected] when a read-only path is
// no longer the root of a read-only mount in the calling thread's mount
// namespace: the directory was removed on the host after the thread was
// confined (the kernel then detaches the mounts on it in every namespace),
// and a command started now could create it.
var ErrProtectionGone = errors.New("no longer mounted read-only (removed since the confinement)")

// CheckProtected checks, just before a command is started from a thread
// confined ahead of it, that each of rel is still a read-only mount of its
// own beneath root in the thread's mount namespace ([ErrProtectionGone]
// otherwise). It costs a few system calls per path, which Landlock and the
// seccomp filter allow.
func CheckProtected(root string, rel []string) error {
	return eachProtected(root, rel, func(fd int) error {
		var stx unix.Statx_t
		if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_TYPE, &stx); err != nil {
			return err
		}
		var fs unix.Statfs_t
		if err := unix.Fstatfs(fd, &fs); err != nil {
			return err
		}
		if stx.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0 || stx.Attributes&unix.STATX_ATTR_MOUNT_ROOT == 0 || fs.Flags&unix.ST_RDONLY == 0 {
			return ErrProtectionGone
		}
		return nil
	})
}

// eachProtected calls f with an O_PATH descriptor of each of rel beneath
// root, skipping a missing one where the root's mount is read-only.
func eachProtected(root string, rel []string, f func(fd int) error) error {
	if len(rel) == 0 {
		return nil
	}
	rfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open the root: %w", err)
	}
	defer unix.Close(rfd)
	for _, p := range rel {
		fd, _, err := OpenProtected(rfd, p, false)
		if errors.Is(err, unix.ENOENT) {
			var fs unix.Statfs_t
			if unix.Fstatfs(rfd, &fs) == nil && fs.Flags&unix.ST_RDONLY != 0 {
				continue
			}
		}
		if err == nil {
			err = f(fd)
			unix.Close(fd)
		}
		if err != nil {
			return fmt.Errorf("read-only path %s: %w", p, err)
		}
	}
	return nil
}
