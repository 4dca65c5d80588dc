package docker

import (
	"bytes"
	"context"
	"errors"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
)

// runner is the exec that the isolated mode's file system (package
// workspace/execfs) runs its scripts with: argv as it is, in the
// container's environment, killed with its session when ctx ends.
type runner struct{ w *Workspace }

// Exec runs argv in the container and returns its first maxStdout bytes of
// output, its standard error (at most stderrCap bytes) and its exit code.
func (r runner) Exec(ctx context.Context, argv []string, stdin []byte, maxStdout int64) (stdout, stderr []byte, exitCode int, err error) {
	if r.w.isClosed() {
		return nil, nil, 0, errClosed
	}
	out := backend.NewCappedBuffer(maxStdout)
	errb := backend.NewCappedBuffer(stderrCap)
	s := &execSpec{script: wrapper("", nil), argv: argv, stdout: out, stderr: errb}
	if stdin != nil {
		s.stdin = bytes.NewReader(stdin)
	}
	o, err := r.w.exec(ctx, s)
	if o == nil {
		return nil, nil, 0, err
	}
	if err == nil && o.killed {
		err = errors.New("docker: the file operation's command was killed")
	}
	if err != nil {
		return nil, nil, 0, err
	}
	return bytes.Clone(out.Bytes()), bytes.Clone(errb.Bytes()), o.exitCode, nil
}

// stderrCap bounds what a file operation's standard error may hold.
const stderrCap = 64 << 10

var _ = workspace.ErrGone
