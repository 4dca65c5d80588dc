package agentcli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/provider/openai/openaitest"
)

// reviewProject makes a project with a file, a directory, an executable
// and a link, and returns it with its tree hash.
func reviewProject(t *testing.T) (dir, sum string) {
	t.Helper()
	dir = t.TempDir()
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("old\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "src", "a.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.Symlink("src/a.go", filepath.Join(dir, "link"))
	return dir, treeSum(t, dir)
}

// scriptedAgent answers with a Write of a new file, then a Bash command
// that destroys the tree, then a final text.
func scriptedAgent(t *testing.T) *openaitest.Server {
	srv := openaitest.NewServer(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "Write", Args: `{"path":"notes/new.txt","content":"written by the tool\n"}`}}},
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c2", Name: "Bash", Args: `{"command":"rm -rf src && echo x > README.md && chmod 700 run.sh"}`}}},
		openaitest.Reply{Text: "Done."},
	)
	t.Cleanup(srv.Close)
	return srv
}

func reviewEnv(state string, srv *openaitest.Server) []string {
	return []string{
		"HOME=" + state, "XDG_CONFIG_HOME=" + filepath.Join(state, "config"), "XDG_STATE_HOME=" + state,
		"PATH=" + os.Getenv("PATH"), "TERM=xterm", "NO_COLOR=1",
		"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + srv.BaseURL(), "HELIKON_MODEL=openai:gpt-test",
		"HELIKON_SESSION_DB=" + filepath.Join(state, "sessions.db"),
	}
}

// helikonCmd runs the helikon binary and returns its exit code, stdout and
// stderr.
func helikonCmd(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("%s %v: %v", bin, args, err)
	return 0, "", ""
}

// reviewTree returns the review's copy under the state directory.
func reviewTree(t *testing.T, state string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(state, "helikon", "reviews", "*", "tree"))
	if len(m) != 1 {
		t.Fatalf("want one review under %s, have %v", state, m)
	}
	return m[0]
}

// helikon run --review leaves the project untouched, by the file tools and
// by commands in the OS sandbox; helikon diff shows the changes, helikon
// apply PATH applies part of them, a change made in the project meanwhile
// is a conflict, and helikon apply then applies the rest, after which the
// project is what the agent saw.
func TestRunReviewThenDiffApply(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helikon binary; skipped with -short")
	}
	bin := buildHelikon(t)
	dir, start := reviewProject(t)
	state := t.TempDir()
	env := reviewEnv(state, scriptedAgent(t))

	code, _, stderr := helikonCmd(t, bin, env, "run", "--review", "--root", dir, "--mode", "bypass", "tidy up")
	if code != 0 {
		t.Fatalf("run --review: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "kept for review") || !strings.Contains(stderr, "modified README.md") {
		t.Fatalf("run --review did not show the diff and keep it:\n%s", stderr)
	}
	if got := treeSum(t, dir); got != start {
		t.Fatal("the project changed during a review")
	}
	seen := treeSum(t, reviewTree(t, state))

	code, stdout, stderr := helikonCmd(t, bin, env, "diff", "--root", dir)
	for _, want := range []string{"modified README.md", "-old", "+x", "deleted  src/a.go", "added    notes/new.txt", "mode     run.sh"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("helikon diff (exit %d) lacks %q:\n%s%s", code, want, stdout, stderr)
		}
	}
	if code, _, stderr = helikonCmd(t, bin, env, "apply", "--root", dir, "notes"); code != 0 {
		t.Fatalf("apply notes: exit %d\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes", "new.txt")); string(b) != "written by the tool\n" {
		t.Fatalf("notes/new.txt not applied: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) != "old\n" {
		t.Fatal("README.md applied without being chosen")
	}
	// The user edits README.md meanwhile: applying the rest is refused.
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("mine\n"), 0o644)
	code, _, stderr = helikonCmd(t, bin, env, "apply", "--root", dir)
	if code == 0 || !strings.Contains(stderr, `"README.md"`) || !strings.Contains(stderr, "changed in the project") {
		t.Fatalf("apply over a changed README.md: exit %d\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) != "mine\n" {
		t.Fatalf("a conflicting apply overwrote the user's README.md: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "src", "a.go")); err != nil {
		t.Fatal("a refused apply applied other paths")
	}
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("old\n"), 0o644) // the user takes it back
	if code, _, stderr = helikonCmd(t, bin, env, "apply", "--root", dir); code != 0 {
		t.Fatalf("apply: exit %d\n%s", code, stderr)
	}
	if got := treeSum(t, dir); got != seen {
		t.Fatal("after apply the project is not what the agent saw")
	}
	if code, _, stderr = helikonCmd(t, bin, env, "diff", "--root", dir); code == 0 || !strings.Contains(stderr, "no pending review") {
		t.Fatalf("diff after a whole apply: exit %d\n%s", code, stderr)
	}

	// A second review, discarded: the project stays as it is.
	env = reviewEnv(state, scriptedAgent(t))
	os.MkdirAll(filepath.Join(dir, "src"), 0o755)
	now := treeSum(t, dir)
	if code, _, stderr = helikonCmd(t, bin, env, "run", "--review", "--root", dir, "--mode", "bypass", "again"); code != 0 {
		t.Fatalf("run --review: exit %d\n%s", code, stderr)
	}
	if code, _, stderr = helikonCmd(t, bin, env, "discard", "--root", dir); code != 0 {
		t.Fatalf("discard: exit %d\n%s", code, stderr)
	}
	if got := treeSum(t, dir); got != now {
		t.Fatal("a discarded review changed the project")
	}
	if m, _ := filepath.Glob(filepath.Join(state, "helikon", "reviews", "*")); len(m) != 0 {
		t.Fatalf("discard left %v", m)
	}

	// A backend that confines nothing is refused: its commands could
	// write the project beneath the copy.
	code, _, stderr = helikonCmd(t, bin, env, "run", "--review", "--backend", "host", "--root", dir, "--mode", "bypass", "x")
	if code != 125 || !strings.Contains(stderr, "--review needs the OS sandbox") {
		t.Fatalf("run --review --backend host: exit %d\n%s", code, stderr)
	}
}

// In a conversation in review mode, /review shows the changes, /apply PATH
// applies part of them, and /discard throws the rest away and ends it.
func TestConversationReview(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helikon binary; skipped with -short")
	}
	bin := buildHelikon(t)
	dir, start := reviewProject(t)
	state := t.TempDir()
	env := reviewEnv(state, scriptedAgent(t))
	cmd, s := startOnTerminal(t, bin, env, "run", "--review", "--root", dir, "--mode", "bypass")
	s.expect("review mode")
	s.expect("› ")
	s.typeIn("tidy up\r")
	s.expect("Done.")
	s.expect("› ")
	if got := treeSum(t, dir); got != start {
		t.Fatal("the project changed during a review")
	}
	s.typeIn("/review\r")
	s.expect("modified README.md")
	s.expect("+x")
	s.expect("› ")
	s.typeIn("/apply README.md\r")
	s.expect("applied 1 changes")
	s.expect("› ")
	if b, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(b) != "x\n" {
		t.Fatalf("README.md not applied: %q", b)
	}
	s.typeIn("/discard\r")
	s.expect("discarded the review")
	if err := waitExit(t, cmd); err != nil {
		t.Fatalf("helikon exited with %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "src", "a.go")); err != nil {
		t.Fatal("discarded changes reached the project")
	}
}

// A single-prompt run in review mode on a terminal shows the diff and
// asks; "y" applies it.
func TestRunReviewAsksToApply(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helikon binary; skipped with -short")
	}
	bin := buildHelikon(t)
	dir, start := reviewProject(t)
	state := t.TempDir()
	cmd, s := startOnTerminal(t, bin, reviewEnv(state, scriptedAgent(t)), "run", "--review", "--root", dir, "--mode", "bypass", "tidy up")
	s.expect("modified README.md")
	s.expect("apply these")
	if got := treeSum(t, dir); got != start {
		t.Fatal("the project changed before the answer")
	}
	seen := treeSum(t, reviewTree(t, state))
	s.typeIn("y\r")
	s.expect("applied")
	if err := waitExit(t, cmd); err != nil {
		t.Fatalf("helikon exited with %v", err)
	}
	if got := treeSum(t, dir); got != seen {
		t.Fatal("after the answer y the project is not what the agent saw")
	}
}
