package execfs

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paigasus/helikon/workspace"
)

// Stat returns the file information of name, links inside the root
// followed. One exec.
func (f *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	rel, err := f.rel(name)
	if err != nil {
		return nil, f.pathErr("stat", name, err)
	}
	out, err := f.run(ctx, "stat", []string{rel}, nil, replySlack)
	if err != nil {
		return nil, f.pathErr("stat", name, err)
	}
	fi, err := parseStat(strings.TrimSuffix(string(out), "\n"), baseName(name))
	if err != nil {
		return nil, f.pathErr("stat", name, err)
	}
	if fi.mode&fs.ModeSymlink != 0 { // swapped in after the walk
		return nil, f.pathErr("stat", name, ErrRace)
	}
	return fi, nil
}

// baseName is the Name a FileInfo of name reports, as os.Stat has it.
func baseName(name string) string {
	return path.Base(name)
}

// Open opens the regular file name for reading: one exec, which also reads
// the first [Options].ChunkSize bytes. A larger file costs one exec per
// further chunk, each of which checks that the file is still the one
// opened (device, inode, size, modification time) and fails with an error
// wrapping [workspace.ErrChanged] if not. The later execs run under ctx:
// it must outlive the reading.
func (f *FS) Open(ctx context.Context, name string) (workspace.File, error) {
	rel, err := f.rel(name)
	if err != nil {
		return nil, f.pathErr("open", name, err)
	}
	file := &File{fs: f, ctx: ctx, name: name}
	if err := file.fetch(rel, 0); err != nil {
		return nil, err
	}
	return file, nil
}

// File is a regular file opened by [FS.Open]. It holds at most one chunk
// in memory. It is not safe for concurrent use.
type File struct {
	fs     *FS
	ctx    context.Context
	name   string // as given
	real   string // resolved, relative to the root
	ident  string // the stat line at opening
	info   *fileInfo
	buf    []byte
	next   int64 // index of the next chunk to fetch
	eof    bool
	closed bool
}

// fetch reads chunk k of the file: the whole chunk, or less at its end.
func (fl *File) fetch(rel string, k int64) error {
	f := fl.fs
	blocks := int64(f.opts.ChunkSize / readBlock)
	ident, real, data, err := f.read(fl.ctx, rel, k*blocks, blocks, -1, anyPath)
	if err != nil {
		return f.pathErr("read", fl.name, err)
	}
	if fl.info == nil {
		fi, err := parseStat(ident, baseName(fl.name))
		if err != nil {
			return f.pathErr("open", fl.name, err)
		}
		fl.info, fl.ident, fl.real = fi, ident, real
	} else if ident != fl.ident || real != fl.real {
		return f.pathErr("read", fl.name, fmt.Errorf("the file was replaced or modified while it was read: %w", workspace.ErrChanged))
	}
	fl.buf = data
	fl.next = k + 1
	// The size at opening says where the file ends: no exec to learn
	// that a chunk that ends there was the last.
	fl.eof = len(data) < f.opts.ChunkSize || fl.next*int64(f.opts.ChunkSize) >= fl.info.size
	return nil
}

// read runs scriptRead: the stat line, resolved path and blocks
// skip..skip+count of rel, or no content when the file is larger than
// limit (limit >= 0); want is the expectation argument (anyPath, or from
// expectArg).
func (f *FS) read(ctx context.Context, rel string, skip, count, limit int64, want string) (ident, real string, data []byte, err error) {
	args := []string{rel, strconv.FormatInt(skip, 10), strconv.FormatInt(count, 10), strconv.FormatInt(limit, 10), want}
	out, err := f.run(ctx, "read", args, nil, count*readBlock+replySlack)
	if err != nil {
		return "", "", nil, err
	}
	line, rest, ok := bytes.Cut(out, []byte("\n"))
	resolved, data, ok2 := bytes.Cut(rest, []byte{0})
	if !ok || !ok2 {
		return "", "", nil, fmt.Errorf("malformed read reply %.80q", out)
	}
	return string(line), string(resolved), data, nil
}

// Read reads from the file, fetching the next chunk when the one held is
// used up.
func (fl *File) Read(p []byte) (int, error) {
	if fl.closed {
		return 0, fs.ErrClosed
	}
	for len(fl.buf) == 0 {
		if fl.eof {
			return 0, io.EOF
		}
		if err := fl.fetch(fl.real, fl.next); err != nil {
			return 0, err
		}
	}
	n := copy(p, fl.buf)
	fl.buf = fl.buf[n:]
	return n, nil
}

// Close releases the chunk held; nothing is open in the workspace.
func (fl *File) Close() error {
	if fl.closed {
		return fs.ErrClosed
	}
	fl.closed, fl.buf = true, nil
	return nil
}

// Stat returns the file's information as of its opening.
func (fl *File) Stat() (fs.FileInfo, error) { return fl.info, nil }

// Path is the file's path relative to the root with links resolved.
func (fl *File) Path() string { return fl.real }

// ReadDir lists the directory name, sorted by file name, in one exec.
// Entries are not followed: a link is listed as a link, with the
// information of the link itself.
func (f *FS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	rel, err := f.rel(name)
	if err != nil {
		return nil, f.pathErr("readdir", name, err)
	}
	recSep := newNonce() // see scriptReadDir
	out, err := f.run(ctx, "readdir", []string{rel, recSep}, nil, maxListing)
	if err != nil {
		return nil, f.pathErr("readdir", name, err)
	}
	var list []fs.DirEntry
	sep := []byte("\n" + recSep + " ")
	out = append([]byte("\n"), out...)
	for _, rec := range bytes.Split(out, sep)[1:] {
		rec = bytes.TrimSuffix(rec, []byte("\n"))
		// The stat line has 12 fields (%y is three), then "./name".
		fields := bytes.SplitN(rec, []byte(" "), 13)
		if len(fields) != 13 || !bytes.HasPrefix(fields[12], []byte("./")) {
			return nil, f.pathErr("readdir", name, fmt.Errorf("malformed listing record %.80q", rec))
		}
		entry := string(fields[12][2:])
		fi, err := parseStat(string(bytes.Join(fields[:12], []byte(" "))), entry)
		if err != nil {
			return nil, f.pathErr("readdir", name, err)
		}
		list = append(list, dirEntry{fi})
	}
	slices.SortFunc(list, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return list, nil
}

// fileInfo is what stat reported.
type fileInfo struct {
	name    string
	size    int64
	mode    fs.FileMode
	modTime time.Time
	sys     *Sys
}

// Sys is what [fs.FileInfo.Sys] returns for a file of an [FS]: the
// identity and ownership stat reported in the workspace.
type Sys struct {
	Dev, Ino uint64
	Uid, Gid uint32
	Nlink    uint64
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.size }
func (fi *fileInfo) Mode() fs.FileMode  { return fi.mode }
func (fi *fileInfo) ModTime() time.Time { return fi.modTime }
func (fi *fileInfo) IsDir() bool        { return fi.mode.IsDir() }
func (fi *fileInfo) Sys() any           { return fi.sys }

type dirEntry struct{ fi *fileInfo }

func (e dirEntry) Name() string               { return e.fi.name }
func (e dirEntry) IsDir() bool                { return e.fi.IsDir() }
func (e dirEntry) Type() fs.FileMode          { return e.fi.mode.Type() }
func (e dirEntry) Info() (fs.FileInfo, error) { return e.fi, nil }
func (e dirEntry) String() string             { return fs.FormatDirEntry(e) }

// statTime is the layout of stat's %y (GNU and busybox alike).
const statTime = "2006-01-02 15:04:05.999999999 -0700"

// parseStat parses a line of the scripts' stat format,
// "%f %a %s %i %d %u %g %h %Y %y".
func parseStat(line, name string) (*fileInfo, error) {
	f := strings.Fields(line)
	if len(f) != 12 {
		return nil, fmt.Errorf("malformed stat line %.80q", line)
	}
	raw, err1 := strconv.ParseUint(f[0], 16, 32)
	size, err2 := strconv.ParseInt(f[2], 10, 64)
	ino, err3 := strconv.ParseUint(f[3], 10, 64)
	dev, err4 := strconv.ParseUint(f[4], 10, 64)
	uid, err5 := strconv.ParseUint(f[5], 10, 32)
	gid, err6 := strconv.ParseUint(f[6], 10, 32)
	nlink, err7 := strconv.ParseUint(f[7], 10, 64)
	secs, err8 := strconv.ParseInt(f[8], 10, 64)
	for _, err := range []error{err1, err2, err3, err4, err5, err6, err7, err8} {
		if err != nil {
			return nil, fmt.Errorf("malformed stat line %.80q: %w", line, err)
		}
	}
	mt, err := time.Parse(statTime, strings.Join(f[9:], " "))
	if err != nil {
		mt = time.Unix(secs, 0) // a stat without nanoseconds
	}
	return &fileInfo{
		name: name, size: size, mode: fileMode(uint32(raw)), modTime: mt,
		sys: &Sys{Dev: dev, Ino: ino, Uid: uint32(uid), Gid: uint32(gid), Nlink: nlink},
	}, nil
}

// fileMode converts a st_mode to an fs.FileMode, as package os does.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & 0o170000 {
	case 0o060000:
		mode |= fs.ModeDevice
	case 0o020000:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case 0o040000:
		mode |= fs.ModeDir
	case 0o010000:
		mode |= fs.ModeNamedPipe
	case 0o120000:
		mode |= fs.ModeSymlink
	case 0o140000:
		mode |= fs.ModeSocket
	}
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
