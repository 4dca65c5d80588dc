//go:build !unix

package fsroot

import (
	"io/fs"
	"os"
)

// canLock is false: without flock a live writer's temporary file cannot be
// told from a dead one's, so stale temporary files are left alone.
const canLock = false

func lockFile(*os.File, bool) error { return nil }

func keepOwner(*os.File, fs.FileInfo) {}

// sameOwner cannot tell owners apart here: set-user-ID and set-group-ID
// bits are not kept.
func sameOwner(fs.FileInfo, fs.FileInfo) (uid, gid bool) { return false, false }
