package launcher

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// MaskPaths hides each of paths (absolute) in the calling thread's mount
// namespace, which must be private: a regular file gets /dev/null mounted
// over it on a mount marked nodev, so that opening it fails with EACCES
// and its size reads 0; a directory gets an empty read-only tmpfs of mode
// 0000. A path that is missing or a symbolic link is skipped: a link's
// target is masked under its own name when it is listed, and a mount on a
// link would follow it. Nothing is masked in the host's namespace.
func MaskPaths(paths []string) error {
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open %s to mask it: %w", p, err)
		}
		err = maskFD(fd)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("mask %s: %w", p, err)
		}
	}
	return nil
}

// maskFD mounts the mask over the O_PATH descriptor fd.
func maskFD(fd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	var mnt int
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return nil
	case unix.S_IFDIR:
		fs, err := unix.Fsopen("tmpfs", unix.FSOPEN_CLOEXEC)
		if err != nil {
			return err
		}
		defer unix.Close(fs)
		for _, o := range [][2]string{{"mode", "0000"}, {"size", "4096"}, {"nr_inodes", "1"}} {
			if err := unix.FsconfigSetString(fs, o[0], o[1]); err != nil {
				return fmt.Errorf("configure the tmpfs (%s=%s): %w", o[0], o[1], err)
			}
		}
		if err := unix.FsconfigCreate(fs); err != nil {
			return err
		}
		if mnt, err = unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV|unix.MOUNT_ATTR_NOEXEC); err != nil {
			return err
		}
	default:
		var err error
		if mnt, err = unix.OpenTree(unix.AT_FDCWD, "/dev/null", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC); err != nil {
			return fmt.Errorf("clone /dev/null: %w", err)
		}
		// nodev: the mask cannot even be opened as the null device.
		if err := unix.MountSetattr(mnt, "", unix.AT_EMPTY_PATH, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC}); err != nil {
			unix.Close(mnt)
			return fmt.Errorf("make the mask read-only: %w", err)
		}
	}
	defer unix.Close(mnt)
	return unix.MoveMount(mnt, "", fd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}
