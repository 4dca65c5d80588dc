//go:build unix

// Package procdev tells whether a path leads through /proc or /dev, where a
// name means the process that opens it: /proc/self/exe is bash when bash
// executes it and the calling program otherwise, /dev/fd/N is a descriptor
// of the opener. It resolves the path as the kernel does, one element at a
// time and following symbolic links, rather than by its spelling.
package procdev

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxSymlinks bounds the symbolic links followed, as the kernel does (40,
// its limit for one lookup).
const maxSymlinks = 40

// Through reports whether resolving name (relative to dir when it is not
// absolute) passes through /proc or /dev at some step, and whether it
// resolves at all: exists is false when an element is missing or cannot be
// read, or the symbolic links nest too deep. A .. goes up from the
// directory reached so far, which holds no symbolic link.
func Through(name, dir string) (through, exists bool) {
	if !strings.HasPrefix(name, "/") {
		name = dir + "/" + name
	}
	todo := strings.Split(name, "/")
	cur, links := "/", 0
	for len(todo) > 0 {
		e := todo[0]
		todo = todo[1:]
		switch e {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, e)
		if next == "/proc" || next == "/dev" {
			through = true
		}
		var st syscall.Stat_t
		if syscall.Lstat(next, &st) != nil {
			return through, false
		}
		if st.Mode&syscall.S_IFMT != syscall.S_IFLNK {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if links++; err != nil || links > maxSymlinks {
			return through, false
		}
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return through, true
}
