package workspace

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// MaxPathBytes is the longest name an [FS] accepts: Linux's PATH_MAX. The
// kernel refuses longer paths, and a longer one can only serve to make
// resolution slow.
const MaxPathBytes = 4096

// Rel is the lexical half of confinement, which every [FS] applies before
// it looks at the file system: it returns name relative to dir (an
// absolute, clean path: the root as [FS.Dir] reports it). A relative name is
// returned as given, slash-separated (the FS resolves it, following links
// that stay inside); an absolute name must lie inside dir, compared
// component by component (so /root-evil is not inside /root), and is
// returned relative to it, lexically cleaned, with a trailing slash kept
// (it means "a directory"). A name that leaves dir lexically ("..", an
// absolute path outside) fails with [ErrOutside]; an empty name, one with a
// NUL byte or one longer than [MaxPathBytes] with an error wrapping
// [fs.ErrInvalid]. The errors do not name the path: callers wrap them (in
// an *fs.PathError, say).
//
// Rel does not resolve symbolic links: a link that leads outside must be
// refused where it is followed.
func Rel(dir, name string) (string, error) {
	switch {
	case name == "":
		return "", fmt.Errorf("empty path: %w", fs.ErrInvalid)
	case strings.IndexByte(name, 0) >= 0:
		return "", fmt.Errorf("path contains a NUL byte: %w", fs.ErrInvalid)
	case len(name) > MaxPathBytes:
		return "", fmt.Errorf("path is %d bytes long, over %d: %w", len(name), MaxPathBytes, fs.ErrInvalid)
	}
	if filepath.IsAbs(name) {
		rel, ok := within(dir, filepath.Clean(name))
		if !ok {
			return "", ErrOutside
		}
		if strings.HasSuffix(name, "/") && rel != "." {
			rel += "/"
		}
		return rel, nil
	}
	if c := filepath.ToSlash(filepath.Clean(name)); c == ".." || strings.HasPrefix(c, "../") {
		return "", ErrOutside
	}
	return filepath.ToSlash(name), nil
}

// within reports whether clean (an absolute, clean path) is dir or lies
// beneath it, comparing whole components, and returns it relative to dir.
func within(dir, clean string) (string, bool) {
	if clean == dir {
		return ".", true
	}
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	rest, ok := strings.CutPrefix(clean, prefix)
	if !ok || rest == "" {
		return "", false
	}
	return filepath.ToSlash(rest), true
}
