package execfs

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"
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
	return f.writeFile(ctx, name, data, anyPath)
}

// WriteFileExpect is [FS.WriteFile] done only when name leads to one of
// expect ([workspace.ExpectWriter]), at the same cost: the script that
// resolves the path compares it with expect before it creates a parent or
// writes a byte, in the same exec (and again in every exec of a write in
// several).
func (f *FS) WriteFileExpect(ctx context.Context, name string, data []byte, expect []string) (workspace.WriteResult, error) {
	want, err := f.expectArg(expect)
	if err != nil {
		return workspace.WriteResult{}, f.pathErr("write", name, err)
	}
	return f.writeFile(ctx, name, data, want)
}

func (f *FS) writeFile(ctx context.Context, name string, data []byte, want string) (workspace.WriteResult, error) {
	rel, err := f.writable(name)
	if err != nil {
		return workspace.WriteResult{}, f.pathErr("write", name, err)
	}
	defer f.lock(rel)()
	res, err := f.put(ctx, rel, data, "", want)
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
// rename and fails with [workspace.ErrChanged] when they differ, or when
// the path read now leads elsewhere (a link swapped in).
func (f *FS) UpdateFile(ctx context.Context, name string, maxSize int64, update func(old []byte) ([][]byte, error)) (workspace.WriteResult, error) {
	return f.updateFile(ctx, name, maxSize, anyPath, update)
}

// UpdateFileExpect is [FS.UpdateFile] done only when name leads to one of
// expect ([workspace.ExpectWriter]), at the same cost: the read's script
// compares the resolved path with expect before it reads the content, in
// the same exec.
func (f *FS) UpdateFileExpect(ctx context.Context, name string, maxSize int64, expect []string, update func(old []byte) ([][]byte, error)) (workspace.WriteResult, error) {
	want, err := f.expectArg(expect)
	if err != nil {
		return workspace.WriteResult{}, f.pathErr("update", name, err)
	}
	return f.updateFile(ctx, name, maxSize, want, update)
}

func (f *FS) updateFile(ctx context.Context, name string, maxSize int64, want string, update func(old []byte) ([][]byte, error)) (workspace.WriteResult, error) {
	rel, err := f.writable(name)
	if err != nil {
		return workspace.WriteResult{}, f.pathErr("update", name, err)
	}
	defer f.lock(rel)()
	old, ident, real, err := f.readAll(ctx, rel, maxSize, want)
	if err != nil {
		return workspace.WriteResult{}, f.pathErr("update", name, err)
	}
	pieces, err := update(old)
	if err != nil {
		return workspace.WriteResult{}, err
	}
	// The write expects the file read: a link swapped in on its way
	// since is a change, as a new inode there is.
	res, err := f.put(ctx, real, bytes.Join(pieces, nil), ident, expectOne(real))
	if ue := (*workspace.UnexpectedPathError)(nil); errors.As(err, &ue) {
		err = fmt.Errorf("%s now leads to %s: %w", real, ue.Path, workspace.ErrChanged)
	}
	if err != nil {
		return res, f.pathErr("update", name, err)
	}
	return res, nil
}

// anyPath is the scripts' expectation argument that expects nothing in
// particular.
const anyPath = "any"

// expectArg encodes expect for the scripts (see expected in prelude):
// "=" and the paths joined with "//". Each must be a clean relative path
// inside the root, as [workspace.WriteResult.Path] has it.
func (f *FS) expectArg(expect []string) (string, error) {
	for _, e := range expect {
		if e == "" || path.Clean(e) != e || path.IsAbs(e) || e == ".." || strings.HasPrefix(e, "../") || strings.IndexByte(e, 0) >= 0 {
			return "", fmt.Errorf("expected path %q: want a clean path relative to the root: %w", e, fs.ErrInvalid)
		}
		if f.opts.TextOnly && !utf8.ValidString(e) {
			return "", fmt.Errorf("expected path is not valid UTF-8, which this workspace's exec cannot carry: %w", fs.ErrInvalid)
		}
	}
	return "=" + strings.Join(expect, "//"), nil
}

// expectOne is the expectation argument of one clean path.
func expectOne(p string) string { return "=" + p }

// readAll reads the whole regular file rel, at most maxSize bytes when
// maxSize > 0, and returns its content, its stat line and its resolved
// path.
func (f *FS) readAll(ctx context.Context, rel string, maxSize int64, want string) (data []byte, ident, real string, err error) {
	blocks := int64(f.opts.ChunkSize / readBlock)
	limit := int64(-1)
	if maxSize > 0 {
		// One exec for all of it: the caller's cap bounds the memory.
		blocks, limit = maxSize/readBlock+1, maxSize
	}
	ident, real, data, err = f.read(ctx, rel, 0, blocks, limit, want)
	if err != nil {
		return nil, "", "", err
	}
	fi, err := parseStat(ident, path.Base(rel))
	if err != nil {
		return nil, "", "", err
	}
	if maxSize > 0 && (fi.size > maxSize || int64(len(data)) > maxSize) {
		// The content can be past the size stat saw: the file grew.
		return nil, "", "", fmt.Errorf("%d bytes, over the limit of %d: %w", max(fi.size, int64(len(data))), maxSize, workspace.ErrTooLarge)
	}
	for k := int64(1); maxSize <= 0 && int64(len(data)) == k*blocks*readBlock; k++ {
		id, r, more, err := f.read(ctx, real, k*blocks, blocks, -1, anyPath)
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

// writable is rel for a write. A name that names a directory (the root,
// a trailing slash, "." or ".." last) is refused by scriptWrite after its
// walk, so that a path that leads out is refused as outside first.
func (f *FS) writable(name string) (string, error) {
	return f.rel(name)
}

// put writes data to rel through scriptWrite; ident, when not empty, is
// the stat line the data was computed from (an update); want is the
// expectation argument (anyPath, or from expectArg).
func (f *FS) put(ctx context.Context, rel string, data []byte, ident, want string) (workspace.WriteResult, error) {
	mode := "w"
	if ident != "" {
		mode = "u"
	}
	tmp := newNonce()
	var out []byte
	var err error
	switch {
	case !f.opts.NoStdin:
		if data == nil {
			data = []byte{} // standard input, empty: not none
		}
		out, err = f.run(ctx, "write", []string{rel, "all", mode, ident, tmp, "stdin", want}, data, replySlack)
	case f.b64:
		out, err = f.putArgs(ctx, []string{rel, "all", mode, ident, tmp, "b64", want}, data)
	default:
		out, err = f.putArgs(ctx, []string{rel, "all", mode, ident, tmp, "esc", want}, data)
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
	var groups [][]string
	if f.b64 {
		groups = f.chunkBase64(data, f.opts.MaxArgvBytes-fixed)
	} else {
		groups = f.chunk(data, f.opts.MaxArgvBytes-fixed)
	}
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
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
			f.run(actx, "abort", []string{parent, tmp}, nil, replySlack)
			cancel()
			return nil, err
		}
	}
	return out, nil
}

// abortTimeout bounds the clean-up exec of a failed write in several
// execs, which runs even when the caller's context has ended.
const abortTimeout = 30 * time.Second

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

// chunkBase64 is chunk for base64: every argument but the last encodes a
// multiple of 3 bytes, so that the arguments of one exec, and those of
// all of them, decode as one stream.
func (f *FS) chunkBase64(data []byte, budget int) [][]string {
	perArg := (f.opts.MaxArgBytes - 1) / 4 * 3
	args := budget/(f.opts.MaxArgBytes-1) + 1
	perExec := max((budget-args*argOverhead)*3/4/3*3, 3)
	var groups [][]string
	for len(groups) == 0 || len(data) > 0 {
		n := min(len(data), perExec)
		var group []string
		for part := data[:n]; len(group) == 0 || len(part) > 0; {
			k := min(len(part), perArg)
			group = append(group, base64.StdEncoding.EncodeToString(part[:k]))
			part = part[k:]
		}
		groups = append(groups, group)
		data = data[n:]
	}
	return groups
}

// Remove removes the file or empty directory name in one exec. A link is
// removed, not followed.
func (f *FS) Remove(ctx context.Context, name string) error {
	parent, base, rel, err := f.split(name)
	if err != nil {
		return f.pathErr("remove", name, err)
	}
	if _, err := f.run(ctx, "remove", []string{parent, base, rel}, nil, replySlack); err != nil {
		return f.pathErr("remove", name, err)
	}
	return nil
}

// Rename renames oldname to newname in one exec, replacing newname when
// it is a file (or an empty directory, when oldname is a directory). The
// last components are not followed: a link is renamed, or replaced, as
// itself. newname's parent must exist.
func (f *FS) Rename(ctx context.Context, oldname, newname string) error {
	op, ob, orel, err := f.split(oldname)
	if err != nil {
		return f.pathErr("rename", oldname, err)
	}
	np, nb, nrel, err := f.split(newname)
	if err != nil {
		return f.pathErr("rename", newname, err)
	}
	if _, err := f.run(ctx, "rename", []string{op, ob, np, nb, orel, nrel}, nil, replySlack); err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, workspace.ErrOutside) {
			return f.pathErr("rename", oldname+" -> "+newname, err)
		}
		return f.pathErr("rename", oldname, err)
	}
	return nil
}

// split separates name's last component, which an operation on an entry
// itself does not follow, from its parent, which is resolved; rel is the
// whole path relative to the root, trailing slash kept.
func (f *FS) split(name string) (parent, base, rel string, err error) {
	rel, err = f.rel(name)
	if err != nil {
		return "", "", "", err
	}
	trimmed := strings.TrimRight(rel, "/")
	i := strings.LastIndexByte(trimmed, '/')
	parent, base = ".", trimmed
	if i >= 0 {
		parent, base = trimmed[:i+1], trimmed[i+1:]
	}
	if base == "" || base == "." || base == ".." {
		return "", "", "", fmt.Errorf("names no entry of a directory: %w", syscall.EINVAL)
	}
	return parent, base, rel, nil
}
