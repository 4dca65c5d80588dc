package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/execfs"
	"github.com/paigasus/helikon/workspace/fsroot"
	"github.com/paigasus/helikon/workspace/local"
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
	s := &execSpec{script: wrapper("", nil, nil), argv: argv, stdout: out, stderr: errb}
	if stdin != nil {
		s.stdin = bytes.NewReader(stdin)
		s.script = drainingWrapper
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

// drainingWrapper is the wrapper of a file operation given input: it runs
// the script as a child instead of exec'ing it, and reads what input the
// script left before it exits. A script that refuses a write exits before
// reading its data, and Podman's service (4.3) then resets the exec's
// attachment and loses its reply, when the rest of the data arrives for a
// process that is gone. The child is in the wrapper's process group, which
// a kill reaches as it reaches an exec'd command.
const drainingWrapper = "echo $$ || exit 125\n\"$@\"\nrc=$?\ncat >/dev/null\nexit $rc"

// stderrCap bounds what a file operation's standard error may hold.
const stderrCap = 64 << 10

// newBindFS is the file system of a bind-mode workspace: source, the
// directory of this machine mounted at dir in the container, opened with
// package fsroot. The two paths must be the same, or files and commands
// would disagree about what a path names.
func newBindFS(source, dir string) (*local.FS, *fsroot.FS, error) {
	sb, err := fsroot.Open(source)
	if err != nil {
		return nil, nil, fmt.Errorf("docker: the bind-mounted root: %w", err)
	}
	if sb.Dir() != dir {
		sb.Close()
		return nil, nil, fmt.Errorf("docker: the root %s is mounted at %s in the container; helikon needs the same path in both", sb.Dir(), dir)
	}
	return local.NewFS(sb), sb, nil
}

// newIsolatedFS is the file system of an isolated workspace: package
// execfs's scripts, run in the container through w's exec.
func newIsolatedFS(ctx context.Context, w *Workspace, dir string) (workspace.FS, error) {
	f, err := execfs.New(ctx, runner{w}, dir, nil)
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	return f, nil
}

// guardFS is a workspace's file system that fails with ErrGone once the
// workspace is closed: the bind mode's files stay on this machine after
// the container is removed, and must not be reachable through a closed
// workspace.
type guardFS struct {
	fs workspace.FS
	w  *Workspace
}

// enter starts an operation: it fails after Close, and Close waits for
// the operations that entered before it.
func (g guardFS) enter() (func(), error) {
	g.w.ops.RLock()
	if g.w.isClosed() {
		g.w.ops.RUnlock()
		return nil, errClosed
	}
	return g.w.ops.RUnlock, nil
}

func (g guardFS) Dir() string { return g.fs.Dir() }

func (g guardFS) Stat(ctx context.Context, name string) (iofs.FileInfo, error) {
	leave, err := g.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	return g.fs.Stat(ctx, name)
}

func (g guardFS) Open(ctx context.Context, name string) (workspace.File, error) {
	leave, err := g.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	return g.fs.Open(ctx, name)
}

func (g guardFS) ReadDir(ctx context.Context, name string) ([]iofs.DirEntry, error) {
	leave, err := g.enter()
	if err != nil {
		return nil, err
	}
	defer leave()
	return g.fs.ReadDir(ctx, name)
}

func (g guardFS) WriteFile(ctx context.Context, name string, data []byte) (workspace.WriteResult, error) {
	leave, err := g.enter()
	if err != nil {
		return workspace.WriteResult{}, err
	}
	defer leave()
	return g.fs.WriteFile(ctx, name, data)
}

func (g guardFS) UpdateFile(ctx context.Context, name string, maxSize int64, update func(old []byte) ([][]byte, error)) (workspace.WriteResult, error) {
	leave, err := g.enter()
	if err != nil {
		return workspace.WriteResult{}, err
	}
	defer leave()
	return g.fs.UpdateFile(ctx, name, maxSize, update)
}

// WriteFileExpect implements [workspace.ExpectWriter]: one exec in the
// isolated mode.
func (g guardFS) WriteFileExpect(ctx context.Context, name string, data []byte, expect []string) (workspace.WriteResult, error) {
	leave, err := g.enter()
	if err != nil {
		return workspace.WriteResult{}, err
	}
	defer leave()
	return workspace.WriteFileExpect(ctx, g.fs, name, data, expect)
}

// UpdateFileExpect implements [workspace.ExpectWriter]: two execs in the
// isolated mode, as UpdateFile.
func (g guardFS) UpdateFileExpect(ctx context.Context, name string, maxSize int64, expect []string, update func(old []byte) ([][]byte, error)) (workspace.WriteResult, error) {
	leave, err := g.enter()
	if err != nil {
		return workspace.WriteResult{}, err
	}
	defer leave()
	return workspace.UpdateFileExpect(ctx, g.fs, name, maxSize, expect, update)
}

func (g guardFS) Remove(ctx context.Context, name string) error {
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	return g.fs.Remove(ctx, name)
}

func (g guardFS) Rename(ctx context.Context, oldname, newname string) error {
	leave, err := g.enter()
	if err != nil {
		return err
	}
	defer leave()
	return g.fs.Rename(ctx, oldname, newname)
}

// WriteFileExpect implements [workspace.ExpectWriter] with the workspace's
// file system (the Workspace holds it as a [workspace.FS], whose method
// set does not carry it): in the isolated mode the check is made in the
// write's own exec.
func (w *Workspace) WriteFileExpect(ctx context.Context, name string, data []byte, expect []string) (workspace.WriteResult, error) {
	return workspace.WriteFileExpect(ctx, w.FS, name, data, expect)
}

// UpdateFileExpect implements [workspace.ExpectWriter] as WriteFileExpect
// does.
func (w *Workspace) UpdateFileExpect(ctx context.Context, name string, maxSize int64, expect []string, update func(old []byte) ([][]byte, error)) (workspace.WriteResult, error) {
	return workspace.UpdateFileExpect(ctx, w.FS, name, maxSize, expect, update)
}

var (
	_ workspace.ExpectWriter = guardFS{}
	_ workspace.ExpectWriter = (*Workspace)(nil)
)

// guardResolverFS is a guardFS over a file system that resolves links
// without a round trip (the bind mode's): the file tools use it to show the
// permission check where a link leads.
type guardResolverFS struct {
	guardFS
	r workspace.Resolver
}

var _ workspace.Resolver = guardResolverFS{}

func (g guardResolverFS) RealPath(name string) (string, error) {
	leave, err := g.enter()
	if err != nil {
		return "", err
	}
	defer leave()
	return g.r.RealPath(name)
}
