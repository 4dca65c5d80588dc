// Package filetool provides the sandboxed file tools Read, Write and Edit.
//
// Each tool works on one [workspace.FS]: a workspace (local, in a container,
// in a microVM) or, for the files of this machine alone, local.NewFS of a
// fsroot.FS. Paths are resolved against its root and nothing outside
// it can be read or written, whatever the path form or link (see package
// sandbox for the exact guarantees and limits on this machine, and each
// engine's package for its own). The file system's errors, matched with
// errors.Is, are turned here into messages that tell the model what to do.
// The tools are typed function tools (package functiontool): their argument
// schemas are inferred from [ReadArgs], [WriteArgs] and [EditArgs], and their
// arguments are validated against the schema, every problem reported at
// once, before anything touches the disk.
//
// Every tool implements [helikon.Tool], [helikon.Effecter],
// [helikon.StructuredOutput] and [helikon.Targeter]. Targets reports the
// absolute path a call touches and, on a file system that resolves links
// cheaply ([workspace.Resolver], the local one), also the path it resolves to
// through symbolic links inside the root, so that permission rules such as
// Read(.env) or Edit(src/**) and the built-in guards cannot be sidestepped
// with a link. On a file system that cannot (a remote one), the targets hold
// the path as written. Either way the targets are what the rules saw at
// the check, and a command of the workspace can swap a directory for a link
// before the call runs; so a call that came through the permission check
// is refused, naming the real path, when the file it opens or creates is
// not among them, on every file system: Read compares the path the file
// system opened ([workspace.File.Path]); Edit and Write pass the targets to
// the write as the paths it may land on ([workspace.WriteFileExpect],
// [workspace.UpdateFileExpect]). A file system that checks that in the
// write itself ([workspace.ExpectWriter]: package workspace/local, whose
// write goes through the directories its own walk opened; package
// workspace/execfs, behind the Docker isolated, forkd and Kubernetes
// workspaces) refuses before it creates a directory, reads or writes
// anything, in the same operation, so a remote Write costs one exec and an
// Edit two (its read and its write); on any other, Edit and Write open the
// file first (one more round trip), and a Write that created a new file
// through a linked directory removes it again.
//
// # What is guaranteed
//
//   - Read's memory use is bounded by its window (at most MaxBytes of content,
//     one line of MaxLineBytes and a 256 KiB read buffer), never by the file:
//     reading the first lines of a 10 GB file reads only those lines, and
//     reading far into a file streams past the lines before the window.
//   - Read returns only UTF-8 text: a file with NUL bytes in its first 8000
//     bytes, in the lines before the window or anywhere in a line of the
//     window, or with invalid UTF-8 inside the window, is refused; so a
//     sparse file with a text head is refused at its first hole instead of
//     being scanned to its end. Directories,
//     FIFOs, sockets and devices are refused without blocking.
//   - Write and Edit replace files atomically (see [workspace.FS.WriteFile]):
//     a crash or kill leaves the old content or the new, never a mix; an
//     existing file keeps its mode; a hard link to a file outside the root is
//     not written through.
//   - Edit changes only the matched bytes: line endings, a byte-order mark
//     and a missing final newline are kept as they are.
//
// # What is not guaranteed
//
//   - Edit is a read-modify-write. Edits of one path through one file
//     system value are serialised; a change made by another process between Edit's read and
//     its rename makes Edit fail (nothing written, the model told to read
//     the file again), except one made in the last microseconds before the
//     rename, or one that keeps the size within a clock tick of the read
//     (see [workspace.ErrChanged]): that one is overwritten, whole.
//   - On a file system that is no ExpectWriter, a Write refused for
//     creating a file through a linked directory made that file (and the
//     missing directories before it) for an instant before removing the
//     file; the directories stay, and a concurrent writer inside the
//     workspace can swap a link between the open that checks where the path
//     leads and the write. In execfs the same swap fits between two steps
//     of one script (see its package doc). On the local file system the
//     write goes through the directory descriptors of the walk whose path
//     was compared, so no such window is left.
//   - total_lines is null when counting would mean scanning more than
//     ReadOptions.CountBytes past the window.
//   - Read does not check the UTF-8 encoding of lines it skips or of the
//     part of a line it cuts (it does look for NUL bytes there); Edit does not check encodings at all (it refuses files
//     with NUL bytes, and otherwise replaces bytes exactly).
package filetool

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/workspace"
)

// The tools' names, as models call them and permission rules name them
// (Read(.env), Edit(src/**)).
const (
	ReadName  = "Read"
	WriteName = "Write"
	EditName  = "Edit"
)

// The defaults of the options structs.
const (
	// DefaultMaxLines is the number of lines Read returns when no limit is
	// given: enough for most source files in one call.
	DefaultMaxLines = 2000
	// DefaultMaxBytes caps the content one Read returns (256 KiB, about
	// 64k tokens), with or without a limit.
	DefaultMaxBytes = 256 << 10
	// DefaultMaxLineBytes is where Read cuts a long line (minified code,
	// data on one line): long enough for any line a person writes.
	DefaultMaxLineBytes = 2000
	// DefaultCountBytes is how far past its window Read scans to report
	// total_lines: a few milliseconds of scanning.
	DefaultCountBytes = 8 << 20
	// DefaultMaxWriteBytes caps the content Write accepts and the size of a
	// file Edit changes (10 MiB).
	DefaultMaxWriteBytes = 10 << 20
)

// targets reports what a call on path p with the given access touches: its
// lexical absolute path and, when the file system resolves links cheaply
// ([workspace.Resolver]) and it differs, the path symbolic links inside the
// root resolve it to. A path outside the root is reported as the absolute
// path it names, so that deny rules and guards see it; the tool itself then
// refuses the call. On a file system that is not a Resolver the tools
// compare the path they open with these targets instead (see [seen]).
func targets(fsys workspace.FS, p string, access ...helikon.Access) helikon.Targets {
	if p == "" {
		return helikon.Targets{}
	}
	dir := fsys.Dir()
	res, resolves := fsys.(workspace.Resolver)
	var abs []string
	rel, err := workspace.Rel(dir, p)
	switch {
	case err == nil:
		lexical := path.Clean(rel)
		abs = append(abs, absPath(dir, lexical))
		if resolves {
			if real, err := res.RealPath(p); err == nil && real != lexical {
				abs = append(abs, absPath(dir, real))
			}
		}
	case resolves && errors.Is(err, workspace.ErrOutside):
		// The resolver may know the root under another name (the
		// directory as given, before its links were evaluated).
		if real, err := res.RealPath(p); err == nil {
			abs = append(abs, absPath(dir, real))
			break
		}
		fallthrough
	default:
		a := p
		if !filepath.IsAbs(a) {
			a = filepath.Join(dir, a)
		}
		abs = append(abs, filepath.Clean(a))
	}
	var t helikon.Targets
	for _, a := range abs {
		for _, acc := range access {
			t.Paths = append(t.Paths, helikon.PathTarget{Path: a, Root: dir, Access: acc})
		}
	}
	return t
}

// targetsOf decodes args with decodeTargets (the tool's DecodeTargets, of
// package functiontool, so that the checked call's Invoke does not decode
// them again) and reports the targets of its path. Arguments that
// do not decode report nothing, without an error: Invoke refuses them the
// same way before touching anything, with a message the model can act on.
func targetsOf[In any](decodeTargets func(json.RawMessage, func(In) helikon.Targets) (helikon.Targets, error), pathOf func(In) string, fsys workspace.FS, args json.RawMessage, access ...helikon.Access) (helikon.Targets, error) {
	tg, err := decodeTargets(args, func(in In) helikon.Targets { return targets(fsys, pathOf(in), access...) })
	if err != nil {
		return helikon.Targets{}, nil
	}
	return tg, nil
}

// schemaFor infers the schema of T (descriptions from jsonschema tags) and
// lets patch add the constraints tags cannot express.
func schemaFor[T any](patch func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic("filetool: " + err.Error()) // the argument types are fixed: a bug
	}
	if patch != nil {
		patch(s.Properties)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

// formatSize renders n bytes for a message: "512 B", "10.0 KiB", "1.5 MiB".
func formatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
