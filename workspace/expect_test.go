package workspace_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/fsroot"
	"github.com/paigasus/helikon/workspace/local"
)

// linkedRoot is a root holding .env, secret/keep and links to them made
// as a command would make them, opened as a local FS.
func linkedRoot(t *testing.T) (workspace.FS, string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{".env": "API_KEY=hunter2\n", "secret/keep": "kept"} {
		os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755)
		if err := os.WriteFile(filepath.Join(root, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"innocent.txt": ".env", "box": "secret"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	sb, err := fsroot.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return local.NewFS(sb), root
}

// plainFS hides every method of an FS but the contract's: the local FS
// behind it is no ExpectWriter, and the helpers take their fallback.
type plainFS struct{ workspace.FS }

// On a file system that cannot check in the write itself, the helpers
// open first: a path that a link leads to another file is refused naming
// it, and a new file made through a linked directory is taken back. The
// local FS, which checks in the write itself, refuses the same writes.
func TestExpectFallbackRefusesLinksToOtherFiles(t *testing.T) {
	t.Run("fallback", func(t *testing.T) {
		fsys, root := linkedRoot(t)
		testExpectRefusesLinks(t, plainFS{fsys}, root)
	})
	t.Run("local", func(t *testing.T) {
		fsys, root := linkedRoot(t)
		if _, ok := fsys.(workspace.ExpectWriter); !ok {
			t.Fatal("the local FS is no ExpectWriter")
		}
		testExpectRefusesLinks(t, fsys, root)
	})
}

func testExpectRefusesLinks(t *testing.T, fsys workspace.FS, root string) {
	ctx := context.Background()
	for _, c := range []struct{ name, real string }{{"innocent.txt", ".env"}, {"box/planted", "secret/planted"}} {
		_, err := workspace.WriteFileExpect(ctx, fsys, c.name, []byte("PWNED"), []string{c.name})
		if ue := (*workspace.UnexpectedPathError)(nil); !errors.As(err, &ue) || ue.Path != c.real {
			t.Errorf("WriteFileExpect(%q) = %v, want refused naming %s", c.name, err, c.real)
		}
	}
	called := false
	_, err := workspace.UpdateFileExpect(ctx, fsys, "innocent.txt", 0, []string{"innocent.txt"}, func(b []byte) ([][]byte, error) {
		called = true
		return [][]byte{[]byte("PWNED")}, nil
	})
	if ue := (*workspace.UnexpectedPathError)(nil); !errors.As(err, &ue) || ue.Path != ".env" || called {
		t.Errorf("UpdateFileExpect through a link = %v (update called: %v), want refused naming .env", err, called)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".env")); string(b) != "API_KEY=hunter2\n" {
		t.Errorf(".env holds %q", b)
	}
	if _, err := os.Lstat(filepath.Join(root, "secret/planted")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file made through a linked directory was left: %v", err)
	}
	// The real path expected: the write goes through the link.
	if res, err := workspace.WriteFileExpect(ctx, fsys, "innocent.txt", []byte("new"), []string{".env"}); err != nil || res.Path != ".env" {
		t.Errorf("WriteFileExpect expecting the real path = %+v, %v", res, err)
	}
	if res, err := workspace.UpdateFileExpect(ctx, fsys, "innocent.txt", 0, []string{".env"}, func(b []byte) ([][]byte, error) { return [][]byte{b, b}, nil }); err != nil || res.Path != ".env" {
		t.Errorf("UpdateFileExpect expecting the real path = %+v, %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".env")); string(b) != "newnew" {
		t.Errorf(".env holds %q", b)
	}
}

// expectFS is an ExpectWriter that records the calls it gets.
type expectFS struct {
	workspace.FS
	calls []string
}

func (f *expectFS) WriteFileExpect(ctx context.Context, name string, data []byte, expect []string) (workspace.WriteResult, error) {
	f.calls = append(f.calls, "write "+name)
	return workspace.WriteResult{Path: name}, nil
}

func (f *expectFS) UpdateFileExpect(ctx context.Context, name string, maxSize int64, expect []string, update func([]byte) ([][]byte, error)) (workspace.WriteResult, error) {
	f.calls = append(f.calls, "update "+name)
	return workspace.WriteResult{Path: name}, nil
}

// A file system that checks in the write itself is left to do so: the
// helpers make no call of their own (no open first).
func TestExpectHelpersUseTheFileSystemsOwnCheck(t *testing.T) {
	f := &expectFS{} // a nil FS: any other call panics
	ctx := context.Background()
	workspace.WriteFileExpect(ctx, f, "a", nil, []string{"a"})
	workspace.UpdateFileExpect(ctx, f, "b", 0, []string{"b"}, nil)
	if len(f.calls) != 2 || f.calls[0] != "write a" || f.calls[1] != "update b" {
		t.Errorf("calls %q", f.calls)
	}
}

// expectEngine's workspaces check where a write leads themselves
// (ExpectWriter), and record the calls.
type expectEngine struct {
	describingEngine
	calls []string
}

func (e *expectEngine) Create(ctx context.Context, session string) (workspace.Workspace, error) {
	ws, err := e.describingEngine.Create(ctx, session)
	if err != nil {
		return nil, err
	}
	return &expectWorkspace{countingWS: ws.(*countingWS), e: e}, nil
}

type expectWorkspace struct {
	*countingWS
	e *expectEngine
}

func (w *expectWorkspace) WriteFileExpect(ctx context.Context, name string, data []byte, expect []string) (workspace.WriteResult, error) {
	w.e.calls = append(w.e.calls, w.session+": write "+name)
	return workspace.WriteResult{Path: name}, nil
}

func (w *expectWorkspace) UpdateFileExpect(ctx context.Context, name string, maxSize int64, expect []string, update func([]byte) ([][]byte, error)) (workspace.WriteResult, error) {
	w.e.calls = append(w.e.calls, w.session+": update "+name)
	return workspace.WriteResult{Path: name}, nil
}

// The workspaces Sessions hands out (one session's, and ByContext's) are
// ExpectWriters that pass the call to the session's workspace's own check,
// so a remote workspace keeps its one-exec write behind them.
func TestSessionsPassExpectWritesToTheWorkspace(t *testing.T) {
	ctx := context.Background()
	e := &expectEngine{}
	s := &workspace.Sessions{Engine: e}
	one, err := s.Open(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	routed, err := s.ByContext("main")
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range []workspace.Workspace{one, routed} {
		w, ok := ws.(workspace.ExpectWriter)
		if !ok {
			t.Fatalf("%T is no ExpectWriter", ws)
		}
		w.WriteFileExpect(ctx, "x", nil, []string{"x"})
		w.UpdateFileExpect(workspace.WithSession(ctx, "b"), "y", 0, []string{"y"}, nil)
	}
	want := []string{"a: write x", "a: update y", "main: write x", "b: update y"}
	if len(e.calls) != len(want) {
		t.Fatalf("calls %q, want %q", e.calls, want)
	}
	for i := range want {
		if e.calls[i] != want[i] {
			t.Errorf("calls %q, want %q", e.calls, want)
		}
	}
}
