//go:build linux

package ossandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// A command's private temporary directory (HOME and TMPDIR) is, where the
// command has a mount namespace of its own (root callers, and unprivileged
// callers through the launcher), a fresh tmpfs mounted in that namespace
// over one empty directory of this user's that every command shares as a
// mount point: nothing is created or removed on the host per command, and
// the tmpfs is gone with the namespace. Creating and removing a directory
// per command cost about a third of a sandboxed /bin/true (the removal of a
// directory that is a mount point elsewhere waits for an RCU grace period).
// Elsewhere, and whenever the mount point is unusable, each command gets a
// directory of its own in os.TempDir(), removed afterwards.

// tempDir is one command's private temporary directory.
type tempDir struct {
	path string
	// tmpfs: path is the shared mount point; a tmpfs of at most size
	// bytes (0: the kernel's default, half the memory) is mounted there
	// in the command's mount namespace. Otherwise path is a directory of
	// the command's own, removed by [tempDir.remove].
	tmpfs bool
	size  int64
}

// remove removes a per-command directory; a tmpfs needs nothing.
func (t tempDir) remove() {
	if !t.tmpfs {
		_ = os.RemoveAll(t.path)
	}
}

// tmpfsMountPointName is the name of the shared mount point in
// os.TempDir(), followed by the effective uid.
const tmpfsMountPointName = "helikon-os-tmp-"

// tmpfsMountPoint returns the mount point of this user's command tmpfs,
// creating it, or "" where it cannot be used: it must be a directory (not a
// symbolic link) owned by this user that nobody else can write, and must
// neither contain nor lie in the root or a read path (a tmpfs over it would
// hide them).
func (b *Backend) tmpfsMountPoint() string {
	p := filepath.Join(os.TempDir(), tmpfsMountPointName+strconv.Itoa(os.Geteuid()))
	if !filepath.IsAbs(p) {
		return ""
	}
	for _, q := range append([]string{b.root}, b.readPaths...) {
		if within(p, q) || within(q, p) {
			return ""
		}
	}
	if !usableMountPoint(p) {
		return ""
	}
	return p
}

// within reports whether path is dir or beneath it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}

// usableMountPoint checks (and if missing, creates) the shared mount point.
// Another user cannot replace it: os.TempDir() is sticky (or this user's),
// so only its owner and root can rename or remove it. Even a replaced one
// would only be covered by the command's tmpfs in the command's private
// namespace, and Landlock grants the tmpfs by descriptor, not by path.
func usableMountPoint(p string) bool {
	var st unix.Stat_t
	err := unix.Lstat(p, &st)
	if errors.Is(err, unix.ENOENT) {
		if err = unix.Mkdir(p, 0o700); err == nil || errors.Is(err, unix.EEXIST) {
			err = unix.Lstat(p, &st)
		}
	}
	return err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && st.Uid == uint32(os.Geteuid()) && st.Mode&0o022 == 0
}

// tempDir returns the private temporary directory of a command whose file
// size limit is fileSize (the tmpfs holds at most that much; none means the
// kernel's default); tmpBase is the tmpfs mount point, or "".
// tmpfsDir is the temporary directory of a command whose tmpfs, mounted on
// tmpBase in its mount namespace, holds at most fileSize bytes.
func tmpfsDir(tmpBase string, fileSize int64) tempDir {
	return tempDir{path: tmpBase, tmpfs: true, size: max(fileSize, 0)}
}

func (b *Backend) tempDir(fileSize int64, tmpBase string) (tempDir, error) {
	if tmpBase != "" && usableMountPoint(tmpBase) {
		return tmpfsDir(tmpBase, fileSize), nil
	}
	dir, err := os.MkdirTemp("", "helikon-os-")
	if err != nil {
		return tempDir{}, fmt.Errorf("ossandbox: create the command's temporary directory: %w", err)
	}
	return tempDir{path: dir}, nil
}
