//go:build unix

package docker

import (
	"io/fs"
	"syscall"
)

// linkKey returns the device and inode of a file with more than one
// link, for writeTree to write its other names as hard links.
func linkKey(fi fs.FileInfo) ([2]uint64, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink < 2 {
		return [2]uint64{}, false
	}
	return [2]uint64{uint64(st.Dev), uint64(st.Ino)}, true
}
