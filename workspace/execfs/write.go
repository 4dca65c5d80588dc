package execfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/paigasus/helikon/workspace"
)

// WriteFile atomically replaces the file name with data, creating it and
// its missing parents: one exec when the runner passes standard input or
// the data fits in one exec's arguments, else one exec per MaxArgvBytes of
// encoded data. A link at name is followed inside the root and its target
// replaced. An existing file keeps its permission and sticky bits and,
// where chown allows it, its owner and group; set-user-ID and set-group-ID
// bits are dropped. A new file gets 0666 less the workspace shell's umask.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte) (workspace.WriteResult, error) {
	rel, err := f.writable(name)
	if err != nil {
		return workspace.WriteResult{}, f.pathErr("write", name, err)
	}
	defer f.lock(rel)()
	res, err := f.put(ctx, rel, data, "")
	if err != nil {
		return res, f.pathErr("write", name, err)
	}
	return res, nil
}

// UpdateFile reads the regular file name (one exec, or one per chunk when
// maxSize is 0 or negative, meaning no limit, and the file is larger than
// [Options].ChunkSize), calls update, and writes the result as
// [FS.WriteFile] does to the path it read. The write's exec compares the
// file's stat line (device, inode, size, mode, owner, links and the
// modification time in nanoseconds) with the read's just before its
// rename and fails with [workspace.ErrChanged] when they differ.
func (f *FS) UpdateFile(ctx context.Context, name string, maxSize int64, update func(old []byte) ([][]byte, error)) (workspace.WriteResult, error) {
	rel, err := f.writable(name)
	if err != nil {
		return workspace.WriteResult{}, f.pathErr("update", name, err)
	}
	defer f.lock(rel)()
	old, ident, real, err := f.readAll(ctx, rel, maxSize)
	if err != nil {
		return workspace.WriteResult{}, f.pathErr("update", name, err)
	}
	pieces, err := update(old)
	if err != nil {
		return workspace.WriteResult{}, err
	}
	res, err := f.put(ctx, real, bytes.Join(pieces, nil), ident)
	if err != nil {
		return res, f.pathErr("update", name, err)
	}
	return res, nil
}

// readAll reads the whole regular file rel, at most maxSize bytes when
// maxSize > 0, and returns its content, its stat line and its resolved
// path.
func (f *FS) readAll(ctx context.Context, rel string, maxSize int64) (data []byte, ident, real string, err error) {
	blocks := int64(f.opts.ChunkSize / readBlock)
	limit := int64(-1)
	if maxSize > 0 {
		// One exec for all of it: the caller's cap bounds the memory.
		blocks, limit = maxSize/readBlock+1, maxSize
	}
	ident, real, data, err = f.read(ctx, rel, 0, blocks, limit)
	if err != nil {
		return nil, "", "", err
	}
	fi, err := parseStat(ident, path.Base(rel))
	if err != nil {
		return nil, "", "", err
	}
	if maxSize > 0 && fi.size > maxSize {
		return nil, "", "", fmt.Errorf("%d bytes, over the limit of %d: %w", fi.size, maxSize, workspace.ErrTooLarge)
	}
	for k := int64(1); int64(len(data)) == k*blocks*readBlock; k++ {
		id, r, more, err := f.read(ctx, real, k*blocks, blocks, -1)
		if err != nil {
			return nil, "", "", err
		}
		if id != ident || r != real {
			return nil, "", "", fmt.Errorf("the file was modified while it was read: %w", workspace.ErrChanged)
		}
		data = append(data, more...)
	}
	return data, ident, real, nil
}

// writable checks name for writing as sandbox does: not the root, not a
// path ending in a slash, ".", or "..".
func (f *FS) writable(name string) (string, error) {
	rel, err := f.rel(name)
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(rel, "/") {
		return "", fmt.Errorf("ends in a slash, which names a directory: %w", workspace.ErrNotRegular)
	}
	if last := path.Base(rel); last == "." || last == ".." || path.Clean(rel) == "." {
		return "", fmt.Errorf("names a directory: %w", workspace.ErrNotRegular)
	}
	return rel, nil
}

// put writes data to rel through scriptWrite; ident, when not empty, is
// the stat line the data was computed from (an update).
func (f *FS) put(ctx context.Context, rel string, data []byte, ident string) (workspace.WriteResult, error) {
	mode := "w"
	if ident != "" {
		mode = "u"
	}
	tmp := newNonce()
	head := []string{rel, "all", mode, ident, tmp}
	var out []byte
	var err error
	if !f.opts.NoStdin {
		if data == nil {
			data = []byte{} // standard input, empty: not none
		}
		out, err = f.run(ctx, "write", head, data, replySlack)
	} else {
		out, err = f.putArgs(ctx, head, data)
	}
	if err != nil {
		return workspace.WriteResult{}, err
	}
	created, real, ok := strings.Cut(string(out), "\n")
	if !ok || (created != "0" && created != "1") {
		return workspace.WriteResult{}, fmt.Errorf("malformed write reply %.80q", out)
	}
	return workspace.WriteResult{Path: real, Created: created == "1", BytesWritten: int64(len(data))}, nil
}

// putArgs writes data in arguments: in one exec when it fits, else begin,
// append..., commit, and on a failure after begin an abort that removes
// the temporary file.
func (f *FS) putArgs(ctx context.Context, head []string, data []byte) ([]byte, error) {
	fixed := len(f.scripts["write"]) + len(f.opts.Shell) + len("-c execfs") + len(f.phys) + 16
	for _, a := range head {
		fixed += len(a)
	}
	fixed += (len(head) + 8) * argOverhead
	groups := f.chunk(data, f.opts.MaxArgvBytes-fixed)
	if len(groups) == 1 {
		return f.run(ctx, "write", append(head, groups[0]...), nil, replySlack)
	}
	phase := func(p string) []string {
		h := slices.Clone(head)
		h[1] = p
		return h
	}
	out, err := f.run(ctx, "write", append(phase("begin"), groups[0]...), nil, replySlack)
	if err != nil {
		return nil, err
	}
	tmp, parent, ok := strings.Cut(string(out), "\x00")
	if !ok {
		return nil, fmt.Errorf("malformed write reply %.80q", out)
	}
	for i, g := range groups[1:] {
		p := "append"
		if i == len(groups)-2 {
			p = "commit"
		}
		out, err = f.run(ctx, "write", append(phase(p), g...), nil, replySlack)
		if err != nil {
			// Best effort, under a context of its own: ctx may be
			// what ended the write.
			f.run(context.WithoutCancel(ctx), "abort", []string{parent, tmp}, nil, replySlack)
			return nil, err
		}
	}
	return out, nil
}

// argOverhead is what an argument costs beyond its bytes: its NUL and its
// pointer in argv.
const argOverhead = 1 + 8

// chunk encodes data as printf %b arguments of at most MaxArgBytes-1
// bytes and groups them into execs of at most budget bytes (each group
// has at least one argument, so empty data is one empty argument). Valid
// UTF-8 passes as it is, but for the backslash; control characters, DEL
// and bytes that are not UTF-8 become \0ooo.
func (f *FS) chunk(data []byte, budget int) [][]string {
	maxArg := f.opts.MaxArgBytes - 1
	budget = max(budget, maxArg+argOverhead)
	var groups [][]string
	var group []string
	used := 0
	var arg strings.Builder
	flushArg := func() {
		if used+arg.Len()+argOverhead > budget && len(group) > 0 {
			groups = append(groups, group)
			group, used = nil, 0
		}
		group = append(group, arg.String())
		used += arg.Len() + argOverhead
		arg.Reset()
	}
	var unit [5]byte
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		var u []byte
		switch {
		case r == '\\':
			u = append(unit[:0], '\\', '\\')
		case r == '\n' || r == '\t' || (r >= 0x20 && r < 0x7f) || (r > 0x9f && r != utf8.RuneError) || (r == utf8.RuneError && size > 1):
			u = data[i : i+size]
		default:
			size = 1
			b := data[i]
			u = append(unit[:0], '\\', '0', '0'+(b>>6), '0'+((b>>3)&7), '0'+(b&7))
		}
		if arg.Len()+len(u) > maxArg {
			flushArg()
		}
		arg.Write(u)
		i += size
	}
	flushArg()
	return append(groups, group)
}

// Remove removes the file or empty directory name in one exec. A link is
// removed, not followed.
func (f *FS) Remove(ctx context.Context, name string) error {
	parent, base, err := f.split(name)
	if err != nil {
		return f.pathErr("remove", name, err)
	}
	if _, err := f.run(ctx, "remove", []string{parent, base}, nil, replySlack); err != nil {
		return f.pathErr("remove", name, err)
	}
	return nil
}

// Rename renames oldname to newname in one exec, replacing newname when
// it is a file (or an empty directory, when oldname is a directory). The
// last components are not followed: a link is renamed, or replaced, as
// itself. newname's parent must exist.
func (f *FS) Rename(ctx context.Context, oldname, newname string) error {
	op, ob, err := f.split(oldname)
	if err != nil {
		return f.pathErr("rename", oldname, err)
	}
	np, nb, err := f.split(newname)
	if err != nil {
		return f.pathErr("rename", newname, err)
	}
	if _, err := f.run(ctx, "rename", []string{op, ob, np, nb}, nil, replySlack); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, workspace.ErrOutside) {
			return f.pathErr("rename", oldname+" -> "+newname, err)
		}
		return f.pathErr("rename", oldname, err)
	}
	return nil
}

// split separates name's last component, which an operation on an entry
// itself does not follow, from its parent, which is resolved.
func (f *FS) split(name string) (parent, base string, err error) {
	rel, err := f.rel(name)
	if err != nil {
		return "", "", err
	}
	rel = strings.TrimRight(rel, "/")
	i := strings.LastIndexByte(rel, '/')
	parent, base = ".", rel
	if i >= 0 {
		parent, base = rel[:i+1], rel[i+1:]
	}
	if base == "" || base == "." || base == ".." {
		return "", "", fmt.Errorf("names no entry of a directory: %w", syscall.EINVAL)
	}
	return parent, base, nil
}
