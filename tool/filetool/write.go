package filetool

import (
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/functiontool"
	"github.com/paigasus/helikon/workspace"
)

// WriteArgs are the arguments of the Write tool.
type WriteArgs struct {
	Path    string `json:"path" jsonschema:"the file to create or overwrite, relative to the sandbox root (an absolute path must lie inside the root)"`
	Content string `json:"content" jsonschema:"the complete new content of the file"`
}

// WriteResult is the output of the Write tool.
type WriteResult struct {
	Path         string `json:"path" jsonschema:"the file written, relative to the sandbox root, symbolic links resolved"`
	BytesWritten int64  `json:"bytes_written" jsonschema:"the size of the new content in bytes"`
	Created      bool   `json:"created" jsonschema:"true when the file did not exist before"`
}

// WriteOptions configures the Write tool. The zero value (or nil) means the
// defaults.
type WriteOptions struct {
	// MaxBytes caps the content of one call; larger content is refused as
	// invalid arguments. Zero or negative means [DefaultMaxWriteBytes].
	MaxBytes int64
}

// Write is the Write tool: it creates or atomically overwrites a file inside
// the sandbox. Its effect is write. It is safe for concurrent use.
type Write[C any] struct {
	*functiontool.Tool[C, WriteArgs, WriteResult]
	fsys     workspace.FS
	maxBytes int64
}

// NewWrite returns the Write tool for the file system fsys. opts may be
// nil.
func NewWrite[C any](fsys workspace.FS, opts *WriteOptions) *Write[C] {
	t := &Write[C]{fsys: fsys, maxBytes: DefaultMaxWriteBytes}
	if opts != nil && opts.MaxBytes > 0 {
		t.maxBytes = opts.MaxBytes
	}
	desc := fmt.Sprintf("Create or overwrite a file inside the sandbox (root: %s) with content, replacing the whole file atomically. "+
		"The path is relative to the root; an absolute path must lie inside it. Missing parent directories are created; "+
		"an existing file keeps its permissions. Content is limited to %s. To change part of an existing file, use Edit instead.",
		fsys.Dir(), formatSize(t.maxBytes))
	in := schemaFor[WriteArgs](func(p map[string]*jsonschema.Schema) {
		p["path"].MinLength = ptr(1)
	})
	t.Tool = functiontool.Must(functiontool.New(WriteName, desc, t.write, &functiontool.Options{
		Effect:      helikon.EffectWrite,
		InputSchema: in,
	}))
	return t
}

// Targets reports the file a call writes.
func (t *Write[C]) Targets(args json.RawMessage) (helikon.Targets, error) {
	return targetsOf(t.DecodeTargets, func(in WriteArgs) string { return in.Path }, t.fsys, args, helikon.AccessWrite)
}

func (t *Write[C]) write(tc *helikon.ToolContext[C], in WriteArgs) (WriteResult, error) {
	if n := int64(len(in.Content)); n > t.maxBytes {
		return WriteResult{}, helikon.InvalidArgs(fmt.Sprintf("content: %s is over the %s limit of Write; write a smaller file (split the content over several files)",
			formatSize(n), formatSize(t.maxBytes)))
	}
	var res workspace.WriteResult
	var err error
	if needsCheck(tc.Targets()) {
		// The write must land on a file the rules saw, whatever a
		// link swapped in since the check says.
		res, err = workspace.WriteFileExpect(tc, t.fsys, in.Path, []byte(in.Content), expected(tc.Targets(), t.fsys.Dir()))
	} else {
		res, err = t.fsys.WriteFile(tc, in.Path, []byte(in.Content))
	}
	if err != nil {
		return WriteResult{}, writeError(tc, t.fsys, WriteName, in.Path, err)
	}
	return WriteResult{Path: res.Path, BytesWritten: res.BytesWritten, Created: res.Created}, nil
}
