//go:build !unix

package docker

import "io/fs"

// linkKey finds no hard links where the file information has no inode.
func linkKey(fs.FileInfo) ([2]uint64, bool) { return [2]uint64{}, false }
