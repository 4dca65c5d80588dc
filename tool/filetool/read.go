package filetool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/functiontool"
	"github.com/paigasus/helikon/workspace"
)

// ReadArgs are the arguments of the Read tool.
type ReadArgs struct {
	Path   string `json:"path" jsonschema:"the file to read, relative to the sandbox root (an absolute path must lie inside the root)"`
	Offset int    `json:"offset,omitempty" jsonschema:"the first line to return, 1-based; default 1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"the number of lines to return; default: as many as fit the tool's caps"`
}

// ReadResult is the output of the Read tool.
type ReadResult struct {
	Path       string `json:"path" jsonschema:"the file read, relative to the sandbox root, symbolic links resolved"`
	Content    string `json:"content" jsonschema:"the lines read, exactly as in the file, line endings included"`
	StartLine  int    `json:"start_line" jsonschema:"the number of the first line in content (1-based)"`
	EndLine    int    `json:"end_line" jsonschema:"the number of the last line in content; start_line-1 when content is empty"`
	TotalLines *int   `json:"total_lines" jsonschema:"the number of lines in the file, or null when the file is too large to count past the window"`
	Truncated  bool   `json:"truncated" jsonschema:"true when the file continues after end_line: call Read again with offset end_line+1"`
}

// ReadOptions configures the Read tool. The zero value (or nil) means the
// defaults; a field that is zero or negative takes its default.
type ReadOptions struct {
	// MaxLines is the number of lines returned when the call gives no
	// limit. Default [DefaultMaxLines].
	MaxLines int
	// MaxBytes caps the content of one call, limit or not; at least one
	// line is always returned. Default [DefaultMaxBytes].
	MaxBytes int
	// MaxLineBytes is where a long line is cut, with a marker saying how
	// many bytes were left out. Default [DefaultMaxLineBytes]; it is
	// lowered to MaxBytes when larger.
	MaxLineBytes int
	// CountBytes is how far past the window Read scans to count the
	// file's lines; beyond it total_lines is null. Default
	// [DefaultCountBytes].
	CountBytes int64
}

func (o *ReadOptions) withDefaults() ReadOptions {
	var r ReadOptions
	if o != nil {
		r = *o
	}
	if r.MaxLines <= 0 {
		r.MaxLines = DefaultMaxLines
	}
	if r.MaxBytes <= 0 {
		r.MaxBytes = DefaultMaxBytes
	}
	if r.MaxLineBytes <= 0 {
		r.MaxLineBytes = DefaultMaxLineBytes
	}
	r.MaxLineBytes = min(r.MaxLineBytes, r.MaxBytes)
	if r.CountBytes <= 0 {
		r.CountBytes = DefaultCountBytes
	}
	return r
}

// Read is the Read tool: it returns a window of lines of a UTF-8 text file
// inside the sandbox. Its effect is read-only. It is safe for concurrent
// use.
type Read[C any] struct {
	*functiontool.Tool[C, ReadArgs, ReadResult]
	fsys workspace.FS
	opts ReadOptions
}

// NewRead returns the Read tool for the file system fsys (a workspace, or
// local.NewFS of a sandbox). opts may be nil.
func NewRead[C any](fsys workspace.FS, opts *ReadOptions) *Read[C] {
	t := &Read[C]{fsys: fsys, opts: opts.withDefaults()}
	o := t.opts
	desc := fmt.Sprintf("Read a UTF-8 text file inside the sandbox (root: %s). The path is relative to the root; an absolute path must lie inside it. "+
		"Returns up to %d lines and %s starting at line offset (1-based, default 1); limit sets the number of lines. "+
		"content is the file's exact text, line endings included, so it can be copied into Edit's old_string. "+
		"When truncated is true the file goes on: call Read again with offset = end_line + 1. "+
		"Lines longer than %d bytes are cut with a marker saying how many bytes were left out. "+
		"Binary files, directories, pipes and devices are refused.",
		fsys.Dir(), o.MaxLines, formatSize(int64(o.MaxBytes)), o.MaxLineBytes)
	in := schemaFor[ReadArgs](func(p map[string]*jsonschema.Schema) {
		p["path"].MinLength = ptr(1)
		p["offset"].Minimum = ptr(1.0)
		p["limit"].Minimum = ptr(1.0)
	})
	t.Tool = functiontool.Must(functiontool.New(ReadName, desc, t.read, &functiontool.Options{
		Effect:      helikon.EffectReadOnly,
		InputSchema: in,
	}))
	return t
}

// Targets reports the file a call reads.
func (t *Read[C]) Targets(args json.RawMessage) (helikon.Targets, error) {
	return targetsOf(t.DecodeTargets, func(in ReadArgs) string { return in.Path }, t.fsys, args, helikon.AccessRead)
}

func (t *Read[C]) read(tc *helikon.ToolContext[C], in ReadArgs) (ReadResult, error) {
	f, err := t.fsys.Open(tc, in.Path)
	if err != nil {
		return ReadResult{}, fsError(tc, t.fsys, in.Path, err)
	}
	defer f.Close()
	if !seen(tc.Targets(), t.fsys.Dir(), f.Path()) {
		return ReadResult{}, unseen(ReadName, in.Path, t.fsys.Dir(), f.Path())
	}
	offset := max(in.Offset, 1)
	limit := in.Limit
	if limit <= 0 {
		limit = t.opts.MaxLines
	}
	w, err := readWindow(tc, f, offset, limit, windowLimits{
		maxBytes:     t.opts.MaxBytes,
		maxLineBytes: t.opts.MaxLineBytes,
		countBytes:   t.opts.CountBytes,
	})
	if err != nil {
		return ReadResult{}, readError(in.Path, err)
	}
	content := w.content
	if w.start == 1 {
		// A byte-order mark is invisible and meaningless to a model; Edit
		// keeps it in the file.
		content = bytes.TrimPrefix(content, utf8BOM)
	}
	res := ReadResult{
		Path:      f.Path(),
		Content:   string(content),
		StartLine: w.start,
		EndLine:   w.end,
		Truncated: w.truncated,
	}
	if w.total >= 0 {
		res.TotalLines = ptr(w.total)
	}
	return res, nil
}

var utf8BOM = []byte("\xef\xbb\xbf")

// readError turns a window error into a message that says what to do.
func readError(p string, err error) error {
	var ce *contentError
	var pe *pastEndError
	switch {
	case errors.As(err, &pe):
		if pe.total == 0 {
			return helikon.Other(fmt.Errorf("offset %d is past the end of %s, which is empty", pe.offset, p))
		}
		return helikon.Other(fmt.Errorf("offset %d is past the end of %s, which has %d lines; use an offset from 1 to %d", pe.offset, p, pe.total, pe.total))
	case errors.As(err, &ce) && errors.Is(err, errBinary):
		return helikon.Other(fmt.Errorf("%s looks binary (it contains NUL bytes), and Read shows only text; inspect it with a shell command such as file or xxd: %w", p, errBinary))
	case errors.As(err, &ce) && errors.Is(err, errNotUTF8):
		return helikon.Other(fmt.Errorf("%s is not UTF-8 text (line %d has an invalid byte sequence); it may be binary or in another encoding: inspect it with a shell command such as file or iconv: %w", p, ce.line, errNotUTF8))
	}
	return helikon.Other(fmt.Errorf("reading %s: %w", p, err))
}
