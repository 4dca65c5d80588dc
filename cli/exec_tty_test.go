//go:build unix

package cli_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/cli"
)

// TestRunOnTerminalFollowsTheCallersTerminal: with a terminal as stdin, the
// program's terminal has its size, a key typed into it reaches the
// program, and the caller's terminal (put in raw mode meanwhile) is
// restored afterwards.
func TestRunOnTerminalFollowsTheCallersTerminal(t *testing.T) {
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	defer tty.Close()
	if err := pty.Setsize(master, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	before, err := term.GetState(int(tty.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := host.New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	env := &cli.Env{Stdin: tty, Stdout: &out}
	go func() {
		time.Sleep(100 * time.Millisecond)
		master.Write([]byte("typed\r")) // a raw caller's terminal passes the key on as it is
	}()
	// Whatever the caller's terminal echoes goes to its master, unread
	// here; what the program's terminal shows is in out.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := cli.RunOnTerminal(ctx, env, b, &backend.Request{Command: `stty size; read x; echo "got $x"; exit 4`}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == nil || *res.ExitCode != 4 || !strings.Contains(out.String(), "30 100") || !strings.Contains(out.String(), "got typed") {
		t.Errorf("exit %v, output %q; want 4, the caller's size and the line typed", res.ExitCode, out.String())
	}
	after, err := term.GetState(int(tty.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	if *after != *before {
		t.Errorf("the caller's terminal was not restored")
	}
}
