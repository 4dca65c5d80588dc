package forkd

import (
	"context"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/execfs"
)

// maxArgvBytes caps the arguments of one file operation's exec. The
// controller takes the exec's arguments as a JSON body, which axum 0.7's
// default limit caps at 2 MiB (the controller sets no other). JSON at most
// doubles what execfs puts in an argument (a backslash, written \, is
// \\ in JSON; a quote is "; control bytes are octal escapes already),
// so 900 KiB of arguments stay well under it: execfs's default of 1 MiB
// came within 13% of the limit (1,839,002 bytes) in the test that writes
// 2 MiB of backslashes.
const maxArgvBytes = 900 << 10

// newFS is the file tree of a workspace rooted at root (absolute, in the
// microVM), over its exec: no standard input, output decoded as UTF-8
// (execfs encodes it in the microVM).
func newFS(ctx context.Context, r execfs.Runner, root string) (workspace.FS, error) {
	return execfs.New(ctx, r, root, &execfs.Options{NoStdin: true, TextOnly: true, MaxArgvBytes: maxArgvBytes})
}

// WriteFileExpect implements [workspace.ExpectWriter] with the workspace's
// file system (held as a [workspace.FS], whose method set does not carry
// it): the check is made in the write's own exec.
func (w *Workspace) WriteFileExpect(ctx context.Context, name string, data []byte, expect []string) (workspace.WriteResult, error) {
	return workspace.WriteFileExpect(ctx, w.FS, name, data, expect)
}

// UpdateFileExpect implements [workspace.ExpectWriter] as WriteFileExpect
// does.
func (w *Workspace) UpdateFileExpect(ctx context.Context, name string, maxSize int64, expect []string, update func(old []byte) ([][]byte, error)) (workspace.WriteResult, error) {
	return workspace.UpdateFileExpect(ctx, w.FS, name, maxSize, expect, update)
}

var _ workspace.ExpectWriter = (*Workspace)(nil)
