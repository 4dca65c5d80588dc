package local

import (
	"io/fs"
	"syscall"
)

// statKey returns what the checkpoint store compares to reuse a file's
// recorded hash: the inode, its change time and its link count.
func statKey(fi fs.FileInfo) (ino, dev uint64, ctime int64, nlink uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0, 0
	}
	return st.Ino, st.Dev, st.Ctim.Nano(), uint64(st.Nlink)
}

// openNoFollow opens without following a link as the last component, and
// without blocking on a FIFO swapped in for a file.
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
