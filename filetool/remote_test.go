package filetool_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/filetool"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
)

// remoteFS is a file system that cannot resolve links without a round
// trip, as a container's or a microVM's: the local FS with its
// workspace.Resolver hidden. The tools' targets then hold the path as
// written, and only the FS knows where a link leads.
type remoteFS struct{ workspace.FS }

// remoteEnv is env with the tools built on a remoteFS, and a policy that
// refuses reading or writing .env and writing under secret/.
func remoteEnv(t *testing.T) (*env, *helikon.Permissions) {
	e := newEnv(t)
	fsys := remoteFS{local.NewFS(e.sb)}
	if _, ok := any(fsys).(workspace.Resolver); ok {
		t.Fatal("remoteFS resolves links: the test would not test the remote path")
	}
	e.read = filetool.NewRead[app](fsys, nil)
	e.write = filetool.NewWrite[app](fsys, nil)
	e.edit = filetool.NewEdit[app](fsys, nil)
	e.file(t, ".env", "API_KEY=hunter2\n")
	e.file(t, "secret/keep.txt", "kept\n")
	e.file(t, "src/main.go", "package main\n")
	for link, target := range map[string]string{"innocent.txt": ".env", "src/config": "../.env", "box": "secret"} {
		if err := os.Symlink(target, filepath.Join(e.root, link)); err != nil {
			t.Fatal(err)
		}
	}
	perms := &helikon.Permissions{
		Deny: []helikon.Rule{
			helikon.MustParseRule("Read(.env)"), helikon.MustParseRule("Edit(.env)"), helikon.MustParseRule("Write(.env)"),
			helikon.MustParseRule("Write(secret/**)"),
		},
		NoGuards: true, // the rules alone must hold
	}
	return e, perms
}

// On a file system whose targets cannot see through links, a link must
// still not sidestep a rule: the tool compares the file it opened or wrote
// with what the permission check saw, refuses the call naming the real
// path, and leaves the files as they were.
func TestRemoteFSLinksDoNotSidestepRules(t *testing.T) {
	e, perms := remoteEnv(t)
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
	e, _ := remoteEnv(t)
	got, err := call[filetool.ReadResult](t, e.read, filetool.ReadArgs{Path: "innocent.txt"})
	if err != nil || got.Path != ".env" {
		t.Errorf("direct Read through a link: %+v, %v", got, err)
	}
}
