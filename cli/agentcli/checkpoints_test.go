package agentcli_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/paigasus/helikon/provider/openai/openaitest"
)

// treeSum hashes every path under dir with its mode, content or link
// target, links not followed.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Lstat(p)
		rel, _ := filepath.Rel(dir, p)
		fmt.Fprintf(h, "%q %v ", rel, fi.Mode())
		if fi.Mode()&fs.ModeSymlink != 0 {
			target, _ := os.Readlink(p)
			fmt.Fprintf(h, "%q", target)
		} else if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			fmt.Fprintf(h, "%x", sha256.Sum256(b))
		}
		h.Write([]byte{0})
		return nil
	})
	return fmt.Sprintf("%x", h.Sum(nil))
}

// In a conversation, /diff shows what the last turn's command changed,
// /undo takes it back byte for byte, and /rewind takes back the turn
// before.
func TestConversationUndoesATurnsCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helikon binary; skipped with -short")
	}
	bin := buildHelikon(t)
	dir, state := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := treeSum(t, dir)
	bash := func(id, cmd string) openaitest.Reply {
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: id, Name: "Bash", Args: `{"command":"` + cmd + `"}`}}}
	}
	srv := openaitest.NewServer(
		bash("c1", `mkdir -p src && echo code > src/a.go && chmod 750 src/a.go && ln -s a.go src/link`), openaitest.Reply{Text: "Made."},
		bash("c2", `rm -rf src && echo x > README.md`), openaitest.Reply{Text: "Cleaned."},
	)
	t.Cleanup(srv.Close)
	env := []string{
		"HOME=" + state, "XDG_CONFIG_HOME=" + filepath.Join(state, "config"), "XDG_STATE_HOME=" + state,
		"PATH=" + os.Getenv("PATH"), "TERM=xterm", "NO_COLOR=1",
		"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + srv.BaseURL(), "HELIKON_MODEL=openai:gpt-test",
		"HELIKON_SESSION_DB=" + filepath.Join(state, "sessions.db"),
	}
	cmd, s := startOnTerminal(t, bin, env, "run", "--root", dir, "--backend", "host", "--mode", "bypass")
	s.expect("Ctrl-D to leave")
	s.expect("› ")
	s.typeIn("make files\r")
	s.expect("Made.")
	made := treeSum(t, dir)
	s.expect("› ")
	s.typeIn("clean up\r")
	s.expect("Cleaned.")
	s.expect("› ")
	s.typeIn("/diff\r")
	s.expect("modified README.md")
	s.expect("-old")
	s.expect("+x")
	s.expect("deleted  src/a.go")
	s.expect("deleted  src/link (link \"a.go\" → \"\")")
	s.expect("› ")
	s.typeIn("/checkpoints\r")
	s.expect("2  ")
	s.expect("make files")
	s.expect("1  ")
	s.expect("clean up")
	s.expect("› ")
	s.typeIn("/undo\r")
	s.expect(`back to where they were before "clean up"`)
	if got := treeSum(t, dir); got != made {
		t.Error("after /undo the tree is not what it was before the last turn")
	}
	s.expect("› ")
	s.typeIn("/rewind 1\r")
	s.expect(`back to where they were before "make files"`)
	if got := treeSum(t, dir); got != start {
		t.Error("after /rewind 1 the tree is not what it was before the first turn")
	}
	s.expect("› ")
	s.typeIn("/undo\r")
	s.expect("no such checkpoint")
	s.expect("› ")
	s.typeIn("\x04")
	if err := waitExit(t, cmd); err != nil {
		t.Fatalf("helikon exited with %v", err)
	}
}
