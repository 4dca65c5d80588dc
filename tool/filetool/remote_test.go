package filetool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/filetool"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/execfs"
	"github.com/paigasus/helikon/workspace/local"
)

// remoteFS is a file system that cannot resolve links without a round
// trip, as a container's or a microVM's: the local FS with its
// workspace.Resolver hidden. The tools' targets then hold the path as
// written, and only the FS knows where a link leads. It is no
// workspace.ExpectWriter either: the tools go through the fallback of
// workspace.WriteFileExpect (open first, then write).
type remoteFS struct{ workspace.FS }

// execRunner is an execfs.Runner that runs each exec as a process on this
// machine, as a container's exec runs it inside the container; it counts
// the execs (the round trips a remote workspace pays).
type execRunner struct{ execs atomic.Int64 }

func (r *execRunner) Exec(ctx context.Context, argv []string, stdin []byte, maxStdout int64) ([]byte, []byte, int, error) {
	r.execs.Add(1)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return stdout.Bytes(), stderr.Bytes(), ee.ExitCode(), nil
	}
	if err != nil {
		return nil, nil, 0, err
	}
	return stdout.Bytes(), stderr.Bytes(), 0, nil
}

// remoteKinds are the file systems without a resolver the remote tests
// run on: the local FS with its resolver hidden, and package execfs over
// execRunner, whose writes check in their own exec where a path leads
// (workspace.ExpectWriter). runner is nil for the first.
var remoteKinds = []struct {
	name string
	fs   func(t *testing.T, e *env) (workspace.FS, *execRunner)
}{
	{"HiddenResolver", func(t *testing.T, e *env) (workspace.FS, *execRunner) {
		return remoteFS{local.NewFS(e.sb)}, nil
	}},
	{"Execfs", func(t *testing.T, e *env) (workspace.FS, *execRunner) {
		r := &execRunner{}
		f, err := execfs.New(context.Background(), r, e.root, nil)
		if err != nil {
			t.Fatal(err)
		}
		return f, r
	}},
}

// remoteEnv is env with the tools built on a file system of kind k, and a
// policy that refuses reading or writing .env and writing under secret/.
// The links are made by a command in the workspace, as an agent's Bash
// call would make them.
func remoteEnv(t *testing.T, k int) (*env, *helikon.Permissions, *execRunner) {
	e := newEnv(t)
	fsys, r := remoteKinds[k].fs(t, e)
	if _, ok := fsys.(workspace.Resolver); ok {
		t.Fatal("the remote FS resolves links: the test would not test the remote path")
	}
	if _, ok := fsys.(workspace.ExpectWriter); ok != (r != nil) {
		t.Fatalf("%s: ExpectWriter %v", remoteKinds[k].name, ok)
	}
	e.read = filetool.NewRead[app](fsys, nil)
	e.write = filetool.NewWrite[app](fsys, nil)
	e.edit = filetool.NewEdit[app](fsys, nil)
	e.file(t, ".env", "API_KEY=hunter2\n")
	e.file(t, "secret/keep.txt", "kept\n")
	e.file(t, "src/main.go", "package main\n")
	cmd := exec.Command("sh", "-c", "ln -s .env innocent.txt && ln -s ../.env src/config && ln -s secret box")
	cmd.Dir = e.root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("making the links: %v: %s", err, out)
	}
	perms := &helikon.Permissions{
		Deny: []helikon.Rule{
			helikon.MustParseRule("Read(.env)"), helikon.MustParseRule("Edit(.env)"), helikon.MustParseRule("Write(.env)"),
			helikon.MustParseRule("Write(secret/**)"),
		},
		NoGuards: true, // the rules alone must hold
	}
	return e, perms, r
}

// On a file system whose targets cannot see through links, a link must
// still not sidestep a rule: the tool compares the file it opened or wrote
// with what the permission check saw, refuses the call naming the real
// path, and leaves the files as they were.
func TestRemoteFSLinksDoNotSidestepRules(t *testing.T) {
	for k, kind := range remoteKinds {
		t.Run(kind.name, func(t *testing.T) { testRemoteLinks(t, k) })
	}
}

func testRemoteLinks(t *testing.T, k int) {
	e, perms, _ := remoteEnv(t, k)
	tc := helikon.NewToolContext(context.Background(), app{}, &helikon.RunConfig{Mode: helikon.ModeBypass})
	for _, c := range []struct {
		name, real string
		tool       helikon.Tool[app]
		args       string
	}{
		{"Read", ".env", e.read, `{"path":"innocent.txt"}`},
		{"ReadThroughADirectory", ".env", e.read, `{"path":"src/config"}`},
		{"WriteExisting", ".env", e.write, `{"path":"innocent.txt","content":"API_KEY=stolen\n"}`},
		{"WriteNewThroughALinkedDirectory", "secret/planted.txt", e.write, `{"path":"box/planted.txt","content":"planted\n"}`},
		{"WriteNewDirectoryThroughALinkedDirectory", "secret/sub/planted.txt", e.write, `{"path":"box/sub/planted.txt","content":"planted\n"}`},
		{"EditThroughAFileLink", ".env", e.edit, `{"path":"innocent.txt","old_string":"hunter2","new_string":"stolen"}`},
		{"Edit", ".env", e.edit, `{"path":"src/config","old_string":"hunter2","new_string":"stolen"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := helikon.CallTool(tc, perms, c.tool, json.RawMessage(c.args))
			if !errors.Is(err, helikon.ErrDenied) || !strings.Contains(err.Error(), filepath.Join(e.root, c.real)) {
				t.Errorf("%s: %v, want denied naming %s", c.args, err, filepath.Join(e.root, c.real))
			}
		})
	}
	if got := e.content(t, ".env"); got != "API_KEY=hunter2\n" {
		t.Errorf(".env was changed through a link: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(e.root, "secret/planted.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file created through a linked directory was left in secret/: %v", err)
	}
	if k > 0 {
		// The check is made before anything is written: no directory
		// either (the fallback's mkdir happens before its check).
		if _, err := os.Lstat(filepath.Join(e.root, "secret/sub")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a directory was created through a linked directory in secret/: %v", err)
		}
	}
	// The same calls by the real names are refused by the rules, and calls
	// the rules allow still work through links.
	for _, args := range []string{`{"path":".env"}`} {
		if _, err := helikon.CallTool(tc, perms, e.read, json.RawMessage(args)); !errors.Is(err, helikon.ErrDenied) {
			t.Errorf("Read %s: %v, want denied by the rule", args, err)
		}
	}
	if _, err := helikon.CallTool(tc, perms, e.write, json.RawMessage(`{"path":"src/new.go","content":"package main\n"}`)); err != nil {
		t.Errorf("an allowed Write failed: %v", err)
	}
	if _, err := helikon.CallTool(tc, perms, e.edit, json.RawMessage(`{"path":"src/main.go","old_string":"main","new_string":"app"}`)); err != nil {
		t.Errorf("an allowed Edit failed: %v", err)
	}
	if out, err := helikon.CallTool(tc, perms, e.read, json.RawMessage(`{"path":"src/main.go"}`)); err != nil || !strings.Contains(string(out), "package app") {
		t.Errorf("an allowed Read: %s, %v", out, err)
	}
}

// A call that did not come through the permission check was checked
// against nothing: the tool follows the link as the file system does.
func TestRemoteFSDirectCallFollowsLinks(t *testing.T) {
	for k, kind := range remoteKinds {
		t.Run(kind.name, func(t *testing.T) {
			e, _, _ := remoteEnv(t, k)
			got, err := call[filetool.ReadResult](t, e.read, filetool.ReadArgs{Path: "innocent.txt"})
			if err != nil || got.Path != ".env" {
				t.Errorf("direct Read through a link: %+v, %v", got, err)
			}
		})
	}
}

// On an FS that checks where a path leads in the write itself
// (workspace.ExpectWriter, package execfs), a Write that came through the
// permission check costs one exec and an Edit two, refused or not: the
// round trip an open before the write cost is gone.
func TestRemoteWriteCostsOneExec(t *testing.T) {
	e, perms, r := remoteEnv(t, 1)
	tc := helikon.NewToolContext(context.Background(), app{}, &helikon.RunConfig{Mode: helikon.ModeBypass})
	for _, c := range []struct {
		name   string
		tool   helikon.Tool[app]
		args   string
		denied bool
		execs  int64
	}{
		{"WriteNew", e.write, `{"path":"src/new.go","content":"package main\n"}`, false, 1},
		{"WriteExisting", e.write, `{"path":"src/new.go","content":"package app\n"}`, false, 1},
		{"WriteThroughALink", e.write, `{"path":"innocent.txt","content":"x"}`, true, 1},
		{"Edit", e.edit, `{"path":"src/main.go","old_string":"main","new_string":"app"}`, false, 2},
		{"EditThroughALink", e.edit, `{"path":"src/config","old_string":"hunter2","new_string":"x"}`, true, 1},
	} {
		before := r.execs.Load()
		_, err := helikon.CallTool(tc, perms, c.tool, json.RawMessage(c.args))
		if errors.Is(err, helikon.ErrDenied) != c.denied || (!c.denied && err != nil) {
			t.Errorf("%s: %v, want denied %v", c.name, err, c.denied)
		}
		if n := r.execs.Load() - before; n != c.execs {
			t.Errorf("%s cost %d execs, want %d", c.name, n, c.execs)
		}
	}
}
