package agentcli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/provider/openai/openaitest"
	"github.com/paigasus/helikon/session/sqlitestore"
)

// screen is what a program wrote to its pseudo-terminal, read as it comes.
type screen struct {
	t    *testing.T
	tty  *os.File
	mu   sync.Mutex
	text strings.Builder
	seen int // where the next expect starts looking
	more chan struct{}
	eof  chan struct{}
}

// startOnTerminal starts bin with args on a new pseudo-terminal.
func startOnTerminal(t *testing.T, bin string, env []string, args ...string) (*exec.Cmd, *screen) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 220})
	if err != nil {
		t.Fatal(err)
	}
	s := &screen{t: t, tty: tty, more: make(chan struct{}, 1), eof: make(chan struct{})}
	t.Cleanup(func() {
		cmd.Process.Kill()
		tty.Close()
	})
	go func() {
		defer close(s.eof)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			s.mu.Lock()
			s.text.Write(buf[:n])
			s.mu.Unlock()
			select {
			case s.more <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	return cmd, s
}

// expect waits, for a bounded time, for want to appear on the screen after
// what the last expect matched, and returns the screen from there to the end
// of the match.
func (s *screen) expect(want string) string {
	s.t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		all := s.text.String()
		s.mu.Unlock()
		if i := strings.Index(all[s.seen:], want); i >= 0 {
			got := all[s.seen : s.seen+i+len(want)]
			s.seen += i + len(want)
			return got
		}
		select {
		case <-s.more:
		case <-s.eof:
			s.mu.Lock()
			done := s.text.String()
			s.mu.Unlock()
			if !strings.Contains(done[s.seen:], want) {
				s.t.Fatalf("the program ended without showing %q; after the last match the screen has:\n%s", want, done[s.seen:])
			}
		case <-deadline.C:
			s.t.Fatalf("%q not shown in 30s; after the last match the screen has:\n%s", want, all[s.seen:])
		}
	}
}

// typeIn sends keys to the terminal.
func (s *screen) typeIn(keys string) {
	s.t.Helper()
	if _, err := s.tty.WriteString(keys); err != nil {
		s.t.Fatal(err)
	}
}

// waitExit waits, for a bounded time, for cmd to end and returns its error.
func waitExit(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("helikon did not exit in 30s")
		return nil
	}
}

func TestRunConversationOnATerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helikon binary; skipped with -short")
	}
	bin := buildHelikon(t)
	dir, state := t.TempDir(), t.TempDir()
	bash := func(id, cmd string) openaitest.Reply {
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: id, Name: "Bash", Args: `{"command":"` + cmd + `"}`}}}
	}
	srv := openaitest.NewServer(
		bash("c1", `echo one >> marker; printf 'a\\nb\\nc\\n'`), openaitest.Reply{Text: "Did one."},
		bash("c2", "echo two >> marker"), openaitest.Reply{Text: "Could not do two."},
		openaitest.Reply{Text: "Workin", Hang: true}, // streams "Wo", then hangs
		bash("c4", "echo four >> marker"),
	)
	t.Cleanup(srv.Close) // after the processes are killed: the hanging reply waits for its client
	db := filepath.Join(state, "sessions.db")
	env := []string{
		"HOME=" + state, "XDG_CONFIG_HOME=" + filepath.Join(state, "config"), "XDG_STATE_HOME=" + state,
		"PATH=" + os.Getenv("PATH"), "TERM=xterm", "NO_COLOR=1",
		"OPENAI_API_KEY=sk-test", "OPENAI_BASE_URL=" + srv.BaseURL(), "HELIKON_MODEL=openai:gpt-test", "HELIKON_SESSION_DB=" + db,
	}
	cmd, s := startOnTerminal(t, bin, env, "run", "--root", dir, "--backend", "host")
	banner := s.expect("Ctrl-D to leave")
	m := regexp.MustCompile(`session ([0-9a-f]{32}) in default mode`).FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("no session id in the banner %q", banner)
	}
	id := m[1]

	// Turn 1: the call is approved, runs, and is shown on one line.
	s.expect("› ")
	s.typeIn("first prompt\r")
	s.expect("helikon: Bash wants to run")
	s.expect("[y]es, [n]o")
	s.expect("allow? ")
	s.typeIn("y\r")
	s.expect("✓ Bash echo one >> marker; printf ")
	if line := s.expect("\n"); !strings.HasSuffix(strings.TrimSpace(line), "· a (+2 lines)") {
		t.Errorf("the output is not folded to its first line: %q", line)
	}
	s.expect("Did one.")

	// Turn 2: the call is denied.
	s.expect("› ")
	s.typeIn("second prompt\r")
	s.expect("allow? ")
	s.typeIn("n\r")
	s.expect("✗ Bash echo two >> marker · denied")
	s.expect("Could not do two.")

	// Turn 3 hangs until Ctrl-C cancels it; the conversation goes on.
	s.expect("› ")
	s.typeIn("third prompt\r")
	s.expect("Wo")
	s.typeIn("\x03")
	s.expect("helikon: turn cancelled")
	s.expect("› ")
	s.typeIn("/session\r")
	s.expect("resume with --session " + id)
	s.expect("› ")
	s.typeIn("\x04") // Ctrl-D leaves
	s.expect("helikon: session " + id + " (resume with --session " + id + ")")
	if err := waitExit(t, cmd); err != nil {
		t.Fatalf("helikon exited with %v", err)
	}
	s.mu.Lock()
	shown := s.text.String()
	s.mu.Unlock()
	if strings.Contains(shown, "\033[31m") || strings.Contains(shown, "\033[32m") {
		t.Errorf("colours with NO_COLOR set:\n%q", shown)
	}

	if b, _ := os.ReadFile(filepath.Join(dir, "marker")); string(b) != "one\n" {
		t.Errorf("marker = %q, want only the approved call's line", b)
	}
	store, err := sqlitestore.Open(context.Background(), db, nil)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := store.Get(context.Background(), id)
	store.Close()
	if err != nil {
		t.Fatal(err)
	}
	var prompts, answers []string
	denied := false
	for _, msg := range sess.Messages {
		switch msg.Role {
		case model.RoleUser:
			prompts = append(prompts, msg.Text)
		case model.RoleAssistant:
			if msg.Text != "" {
				answers = append(answers, msg.Text)
			}
		case model.RoleTool:
			for _, r := range msg.ToolResults {
				denied = denied || r.CallID == "c2" && r.IsError
			}
		}
	}
	if strings.Join(prompts, "|") != "first prompt|second prompt|third prompt" {
		t.Errorf("stored prompts %q", prompts)
	}
	if strings.Join(answers, "|") != "Did one.|Could not do two." {
		t.Errorf("stored answers %q", answers)
	}
	if !denied {
		t.Errorf("the denied call's result is not stored as an error: %+v", sess.Messages)
	}

	// Resuming shows the earlier turns, in colour without NO_COLOR; /mode
	// only tightens.
	env = slices.DeleteFunc(env, func(v string) bool { return strings.HasPrefix(v, "NO_COLOR=") })
	cmd, s = startOnTerminal(t, bin, env, "run", "--root", dir, "--backend", "host", "--session", id)
	s.expect("\033[1m›\033[0m first prompt")
	s.expect("\033[2m·\033[0m Bash echo one >> marker")
	s.expect("Did one.")
	s.expect("\033[1m›\033[0m second prompt")
	s.expect("Could not do two.")
	s.expect("\033[1m›\033[0m third prompt")
	s.expect("earlier messages of session " + id)
	s.expect("› ")
	// Ctrl-C at an approval's prompt cancels the turn too.
	s.typeIn("fourth prompt\r")
	s.expect("allow? ")
	s.typeIn("\x03")
	s.expect("helikon: turn cancelled")
	s.expect("› ")
	s.typeIn("/mode bypass\r")
	s.expect("cannot change permission mode from default to bypass")
	s.expect("› ")
	s.typeIn("/mode plan\r")
	s.expect("mode plan from the next turn on")
	s.expect("› ")
	s.typeIn("/exit\r")
	if err := waitExit(t, cmd); err != nil {
		t.Fatalf("helikon exited with %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "marker")); string(b) != "one\n" {
		t.Errorf("marker = %q after a cancelled approval", b)
	}
}

func TestRunConversationNeedsATerminal(t *testing.T) {
	code, _, stderr := runAgentCLI(t, runEnv{}, "-i")
	if code != 125 || !strings.Contains(stderr, "needs a terminal") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runAgentCLI(t, runEnv{})
	if code != 125 || !strings.Contains(stderr, "want a PROMPT") {
		t.Errorf("without a terminal or a PROMPT: exit %d, stderr %q", code, stderr)
	}
}
