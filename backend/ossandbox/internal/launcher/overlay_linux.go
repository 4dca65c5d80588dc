package launcher

import (
	"fmt"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/internal/landlock"
)

// MountOverlays mounts each overlay (overlayfs, nosuid, nodev) on its
// Target in the calling thread's mount namespace, which must be private:
// commands read Lower through it and every change (a new file, a changed
// one, a removal) goes to Upper, so nothing they do reaches Lower. With
// userxattr (a mount made in a user namespace) overlayfs keeps its
// metadata in user.* extended attributes. Target is opened from /
// component by component without following links, and the mount is made
// on that descriptor. Where rs is not nil, each mount is granted read-write
// in rs by descriptor (a ruleset built before the mount names the
// directory beneath it).
func MountOverlays(rs *landlock.Ruleset, ovs []Overlay, userxattr bool) error {
	if len(ovs) == 0 {
		return nil
	}
	rfd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /: %w", err)
	}
	defer unix.Close(rfd)
	for _, o := range ovs {
		if err := mountOverlay(rfd, rs, o, userxattr); err != nil {
			return fmt.Errorf("overlay of %s on %s: %w", o.Lower, o.Target, err)
		}
	}
	return nil
}

func mountOverlay(rfd int, rs *landlock.Ruleset, o Overlay, userxattr bool) error {
	for _, p := range []string{o.Lower, o.Upper, o.Work} {
		if strings.ContainsAny(p, ",:\\") || !strings.HasPrefix(p, "/") {
			// overlayfs splits its options on these.
			return fmt.Errorf("%q: not a plain absolute path", p)
		}
	}
	// overlayfs refuses an upper layer on a read-only mount: the view
	// made every mount read-only. The layers' directories are mounted
	// writable, not granted by Landlock: commands reach them only
	// through the overlay.
	// Upper and Work must be on one mount: they share a parent, which
	// is mounted writable.
	layers := filepath.Dir(o.Upper)
	if filepath.Dir(o.Work) != layers {
		return fmt.Errorf("%s and %s: the upper and work directories must share a parent", o.Upper, o.Work)
	}
	if err := writablePath(rfd, layers); err != nil {
		return fmt.Errorf("%s: %w", layers, err)
	}
	target, _, err := OpenProtected(rfd, strings.TrimPrefix(o.Target, "/"), false)
	if err != nil {
		return err
	}
	defer unix.Close(target)
	fs, err := unix.Fsopen("overlay", unix.FSOPEN_CLOEXEC)
	if err != nil {
		return fmt.Errorf("overlayfs: %w", err)
	}
	defer unix.Close(fs)
	opts := [][2]string{{"lowerdir", o.Lower}, {"upperdir", o.Upper}, {"workdir", o.Work}}
	for _, kv := range opts {
		if err := unix.FsconfigSetString(fs, kv[0], kv[1]); err != nil {
			return fmt.Errorf("overlayfs %s=%s: %w", kv[0], kv[1], err)
		}
	}
	if userxattr {
		if err := unix.FsconfigSetFlag(fs, "userxattr"); err != nil {
			return fmt.Errorf("overlayfs userxattr: %w", err)
		}
	}
	if err := unix.FsconfigCreate(fs); err != nil {
		return fmt.Errorf("overlayfs: %w", err)
	}
	mnt, err := unix.Fsmount(fs, unix.FSMOUNT_CLOEXEC, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV)
	if err != nil {
		return fmt.Errorf("overlayfs mount: %w", err)
	}
	defer unix.Close(mnt)
	if err := unix.MoveMount(mnt, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("mount: %w", err)
	}
	if rs != nil {
		return rs.AllowFD(mnt, landlock.ReadWrite)
	}
	return nil
}
