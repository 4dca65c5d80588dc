package runner_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/agenttest"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
)

// treeHash hashes the whole tree under dir: every path, its type,
// permission bits, and its content or link target, links not followed.
func treeHash(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%q %v ", rel, fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(h, "-> %q", target)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "%x", sha256.Sum256(b))
		}
		h.Write([]byte{0})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// bashTurns is a model that runs, in each turn, the next of cmds through
// Bash, then answers "done".
func bashTurns(cmds ...string) *agenttest.Model {
	next := 0
	return &agenttest.Model{Func: func(req *model.Request) agenttest.Reply {
		if agenttest.LastToolResults(req) != nil || next == len(cmds) {
			return agenttest.Reply{Text: "done"}
		}
		args, _ := json.Marshal(map[string]string{"command": cmds[next]})
		next++
		return agenttest.Reply{ToolCalls: []model.ToolCall{{ID: fmt.Sprint("c", next), Name: "Bash", Args: args}}}
	}}
}

// A scripted agent edits files, then destroys them through Bash; Undo
// brings the tree back byte for byte (modes and links included) to where
// it was before that turn, and a second Undo to before the first.
func TestUndoRestoresWhatABashCommandDestroyed(t *testing.T) {
	dir := t.TempDir()
	b, err := host.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	e, err := local.NewWithOptions(dir, b, &local.Options{Checkpoints: local.CheckpointOptions{Dir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := e.Create(t.Context(), "undo")
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close(context.Background())
	root := ws.Dir()
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("# project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := treeHash(t, root)
	bash, err := bashtool.New[struct{}](ws, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := bashTurns(
		`mkdir -p src/pkg && printf 'package pkg\n' > src/pkg/a.go && printf '#!/bin/sh\n' > src/run.sh && chmod 755 src/run.sh && ln -s pkg/a.go src/link && echo more >> README.md`,
		`rm -rf src && echo x > README.md`,
	)
	a := llmagent.Must(llmagent.New(llmagent.Config[struct{}]{Name: "c", Model: m, Tools: []helikon.Tool[struct{}]{bash}}))
	r, err := runner.New(runner.Config[struct{}]{Agent: a, Mode: helikon.ModeBypass, Checkpoints: ws.(workspace.Checkpointer)})
	if err != nil {
		t.Fatal(err)
	}
	const id = "s1"
	run := func(prompt string) {
		t.Helper()
		if _, err := agent.Collect(r.Run(t.Context(), id, prompt)); err != nil {
			t.Fatal(err)
		}
	}
	run("make the files")
	edited := treeHash(t, root)
	if edited == start {
		t.Fatal("the first turn changed nothing")
	}
	run("clean up")
	if _, err := os.Stat(filepath.Join(root, "src")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatal("the second turn did not remove src")
	}
	changes, err := r.Diff(t.Context(), id, 1)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range changes {
		paths = append(paths, string(c.Kind)+" "+c.Path)
	}
	if got := strings.Join(paths, ", "); got != "modified README.md, deleted src, deleted src/link, deleted src/pkg, deleted src/pkg/a.go, deleted src/run.sh" {
		t.Errorf("the last turn's diff is %s", got)
	}
	if _, err := r.Undo(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if got := treeHash(t, root); got != edited {
		t.Fatal("after Undo the tree is not what it was before the last turn")
	}
	if _, err := r.Undo(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if got := treeHash(t, root); got != start {
		t.Fatal("after a second Undo the tree is not what it was before the first turn")
	}
	if _, err := r.Undo(t.Context(), id); !errors.Is(err, workspace.ErrNoCheckpoint) {
		t.Fatalf("a third Undo: %v, want ErrNoCheckpoint", err)
	}
	if list, _ := r.Checkpoints(t.Context(), "other"); len(list) != 0 {
		t.Errorf("another session sees this one's checkpoints: %v", list)
	}
}

func TestCheckpointMethodsWithoutCheckpoints(t *testing.T) {
	r, _ := runner.New(runner.Config[struct{}]{Agent: countingAgent()})
	if _, err := r.Undo(t.Context(), "s"); !errors.Is(err, runner.ErrNoCheckpoints) {
		t.Fatalf("Undo without Config.Checkpoints: %v", err)
	}
}
