package filetool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/functiontool"
	"github.com/paigasus/helikon/workspace"
)

// EditArgs are the arguments of the Edit tool.
type EditArgs struct {
	Path       string `json:"path" jsonschema:"the file to change, relative to the sandbox root (an absolute path must lie inside the root)"`
	OldString  string `json:"old_string" jsonschema:"the exact text to replace, copied from the file (whitespace and indentation included); it must occur exactly once unless replace_all is true"`
	NewString  string `json:"new_string" jsonschema:"the text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence of old_string instead of requiring exactly one; default false"`
}

// EditResult is the output of the Edit tool.
type EditResult struct {
	Path         string `json:"path" jsonschema:"the file changed, relative to the sandbox root, symbolic links resolved"`
	Replacements int    `json:"replacements" jsonschema:"the number of occurrences replaced"`
}

// EditOptions configures the Edit tool. The zero value (or nil) means the
// defaults.
type EditOptions struct {
	// MaxBytes caps the size of the file, before and after the edit.
	// Zero or negative means [DefaultMaxWriteBytes].
	MaxBytes int64
}

// Edit is the Edit tool: it replaces an exact string in a file inside the
// sandbox, atomically. Its effect is write. It is safe for concurrent use;
// concurrent edits of one file through one sandbox all apply, one after the
// other.
type Edit[C any] struct {
	*functiontool.Tool[C, EditArgs, EditResult]
	fsys    workspace.FS
	maxSize int64
}

// NewEdit returns the Edit tool for the file system fsys. opts may be nil.
func NewEdit[C any](fsys workspace.FS, opts *EditOptions) *Edit[C] {
	t := &Edit[C]{fsys: fsys, maxSize: DefaultMaxWriteBytes}
	if opts != nil && opts.MaxBytes > 0 {
		t.maxSize = opts.MaxBytes
	}
	desc := fmt.Sprintf("Replace text in an existing file inside the sandbox (root: %s). "+
		"old_string must occur in the file exactly as written, whitespace and indentation included, and exactly once unless replace_all is true; "+
		"it is replaced by new_string. Read the file first and copy old_string from its content, with enough surrounding lines to make it unique. "+
		"Everything outside the match is kept byte for byte (line endings included) and the file is replaced atomically. "+
		"Files over %s are refused. To create a file or replace all of it, use Write.",
		fsys.Dir(), formatSize(t.maxSize))
	in := schemaFor[EditArgs](func(p map[string]*jsonschema.Schema) {
		p["path"].MinLength = ptr(1)
		p["old_string"].MinLength = ptr(1)
	})
	t.Tool = functiontool.Must(functiontool.New(EditName, desc, t.edit, &functiontool.Options{
		Effect:      helikon.EffectWrite,
		InputSchema: in,
	}))
	return t
}

// Targets reports the file a call reads and writes.
func (t *Edit[C]) Targets(args json.RawMessage) (helikon.Targets, error) {
	return targetsOf(t.DecodeTargets, func(in EditArgs) string { return in.Path }, t.fsys, args, helikon.AccessRead, helikon.AccessWrite)
}

func (t *Edit[C]) edit(tc *helikon.ToolContext[C], in EditArgs) (EditResult, error) {
	if in.OldString == in.NewString {
		return EditResult{}, helikon.InvalidArgs("new_string: it is identical to old_string, so the edit would change nothing; give the text that should replace old_string")
	}
	var n int
	update := func(old []byte) ([][]byte, error) {
		updated, count, err := applyEdit(old, in.OldString, in.NewString, in.ReplaceAll, t.maxSize)
		if err != nil {
			return nil, editError(in, count, t.maxSize, err)
		}
		n = count
		return updated, nil
	}
	var res workspace.WriteResult
	var err error
	if needsCheck(tc.Targets()) {
		// The file read and replaced must be one the rules saw,
		// whatever a link swapped in since the check says.
		res, err = workspace.UpdateFileExpect(tc, t.fsys, in.Path, t.maxSize, expected(tc.Targets(), t.fsys.Dir()), update)
	} else {
		res, err = t.fsys.UpdateFile(tc, in.Path, t.maxSize, update)
	}
	if err != nil {
		if oe := (*helikon.OtherError)(nil); errors.Is(err, workspace.ErrTooLarge) && !errors.As(err, &oe) {
			size := ""
			if fi, serr := t.fsys.Stat(tc, in.Path); serr == nil {
				size = " is " + formatSize(fi.Size()) + ","
			}
			return EditResult{}, helikon.Other(fmt.Errorf("%s%s over the %s limit; Edit changes files of up to %s: use a shell command such as sed for larger files: %w", in.Path, size, formatSize(t.maxSize), formatSize(t.maxSize), workspace.ErrTooLarge))
		}
		return EditResult{}, writeError(tc, t.fsys, EditName, in.Path, err)
	}
	return EditResult{Path: res.Path, Replacements: n}, nil
}

var (
	errNotFound  = errors.New("old_string not found")
	errNotUnique = errors.New("old_string is not unique")
	errBinaryEd  = errors.New("binary file")
)

// applyEdit replaces old by repl in content: once, requiring exactly one
// occurrence, or every occurrence when all is set. When old does not occur
// but the file uses CRLF line endings and old has bare LF ones (models
// often drop the CR), old and repl are matched and inserted with CRLF
// instead, so the file's line endings stay as they were. count is the
// number of occurrences found. A result over maxSize is an error wrapping
// workspace.ErrTooLarge.
//
// The result is returned as pieces, slices of content between the
// replacements, so that a large file is not copied: the pieces are written
// straight to the new file.
func applyEdit(content []byte, old, repl string, all bool, maxSize int64) (out [][]byte, count int, err error) {
	if old == "" {
		// The schema refuses it first; an empty old_string matches
		// everywhere, and the replace_all loop would never end.
		return nil, 0, errNotFound
	}
	if bytes.IndexByte(content, 0) >= 0 {
		return nil, 0, errBinaryEd
	}
	o, r := []byte(old), []byte(repl)
	first := bytes.Index(content, o)
	if first < 0 && strings.Contains(old, "\n") && !strings.Contains(old, "\r") && bytes.Contains(content, []byte("\r\n")) {
		co := []byte(strings.ReplaceAll(old, "\n", "\r\n"))
		if i := bytes.Index(content, co); i >= 0 {
			o, first = co, i
			r = []byte(strings.ReplaceAll(strings.ReplaceAll(repl, "\r\n", "\n"), "\n", "\r\n"))
		}
	}
	if first < 0 {
		return nil, 0, errNotFound
	}
	if !all {
		if bytes.Contains(content[first+len(o):], o) {
			return nil, bytes.Count(content, o), errNotUnique
		}
		count = 1
	} else {
		count = bytes.Count(content, o)
	}
	// The size is checked before anything is built: a replacement that
	// grows the file must not allocate the oversized result first.
	if size := int64(len(content)) + int64(count)*(int64(len(r))-int64(len(o))); maxSize > 0 && size > maxSize {
		return nil, count, fmt.Errorf("the edited file would be %s: %w", formatSize(size), workspace.ErrTooLarge)
	}
	switch {
	case !all:
		out = [][]byte{content[:first], r, content[first+len(o):]}
	case count > maxPieceEdits:
		// Two slice headers (48 bytes) per replacement would dwarf the
		// file: replacing every byte of a 10 MiB file took 2.8 GB of
		// allocations. One buffer of the new size is cheaper.
		out = [][]byte{bytes.Replace(content, o, r, -1)}
	default:
		out = make([][]byte, 0, 2*count+1)
		rest := content
		for i := first; i >= 0; i = bytes.Index(rest, o) {
			out = append(out, rest[:i], r)
			rest = rest[i+len(o):]
		}
		out = append(out, rest)
	}
	return out, count, nil
}

// maxPieceEdits is the number of replacements up to which applyEdit returns
// slices of the old content rather than a new buffer: the slices save
// copying a large file when there are few replacements, and cost more than
// the copy when there are many.
const maxPieceEdits = 1024

// editError words an applyEdit failure for the model.
func editError(in EditArgs, count int, maxSize int64, err error) error {
	switch {
	case errors.Is(err, errNotFound):
		return helikon.Other(fmt.Errorf("old_string was not found in %s; it must match the file exactly, whitespace, indentation and line breaks included: Read the file again and copy the text from its content: %w", in.Path, err))
	case errors.Is(err, errNotUnique):
		return helikon.Other(fmt.Errorf("old_string occurs %d times in %s; include more surrounding lines to make it unique, or set replace_all to true to replace all %d: %w", count, in.Path, count, err))
	case errors.Is(err, errBinaryEd):
		return helikon.Other(fmt.Errorf("%s looks binary (it contains NUL bytes); Edit changes text files only: %w", in.Path, err))
	case errors.Is(err, workspace.ErrTooLarge):
		return helikon.Other(fmt.Errorf("%s: %w; Edit changes files of up to %s", in.Path, err, formatSize(maxSize)))
	}
	return helikon.Other(err)
}
