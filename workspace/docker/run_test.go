package docker

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/backendtest"
)

func TestBackendConformanceBind(t *testing.T) {
	e := newEngine(t, Options{Root: bindRoot(t)})
	backendtest.Run(t, create(t, e), nil)
}

// sleepers lists the processes of the container whose command line holds
// tag, read from /proc by a command of its own.
func sleepers(t *testing.T, ws *Workspace, tag string) string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(sh(t, ws, `for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' <"$f"; echo; done 2>/dev/null`), "\n") {
		if strings.Contains(line, tag) && !strings.Contains(line, "for f in") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// chain is a command that leaves sleeping processes behind in the ways a
// command can while staying in its session: in the background, in a
// background subshell, in a subshell that started its own process group
// (set -m), and in the foreground.
const chain = `sleep 1001 & (sleep 1002 &) ; sh -c 'set -m; sleep 1003 & wait' & echo started; sleep 1004`

func TestCancelKillsTheBackgroundChain(t *testing.T) {
	e := newEngine(t, Options{Root: bindRoot(t)})
	ws := create(t, e)
	m := newMarker("started")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := ws.Run(ctx, &backend.Request{Command: chain, Stdout: m})
		done <- err
	}()
	<-m.seen
	if got := sleepers(t, ws, "sleep 100"); strings.Count(got, "sleep 100") != 5 {
		t.Fatalf("before the cancellation, the chain's sleeps are %q, want 4 and the set -m shell", got)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run after cancel: %v, want context.Canceled", err)
	}
	if got := sleepers(t, ws, "sleep 100"); got != "" {
		t.Errorf("processes of the cancelled command still run: %q", got)
	}
}

func TestTimeoutKillsTheBackgroundChainAndIsAResult(t *testing.T) {
	e := newEngine(t, Options{Root: bindRoot(t)})
	ws := create(t, e)
	res, err := ws.Run(t.Context(), &backend.Request{Command: chain, Timeout: 500e6})
	if err != nil {
		t.Fatalf("a timeout is an error: %v", err)
	}
	if !res.TimedOut || res.ExitCode != nil || !strings.Contains(string(res.Stdout), "started") {
		t.Errorf("TimedOut %v, exit %v, stdout %q; want true, nil, started", res.TimedOut, res.ExitCode, res.Stdout)
	}
	if got := sleepers(t, ws, "sleep 100"); got != "" {
		t.Errorf("processes of the timed-out command still run: %q", got)
	}
}

func TestPidLineIsNotOutput(t *testing.T) {
	e := newEngine(t, Options{Root: bindRoot(t)})
	ws := create(t, e)
	for _, c := range []struct{ cmd, want string }{
		{"printf ''", ""},
		{"printf x", "x"},
		{"echo; echo", "\n\n"},
		{"printf '%05000d' 0", strings.Repeat("0", 5000)},
	} {
		if got := sh(t, ws, c.cmd); got != c.want {
			t.Errorf("%q: stdout %.40q (%d bytes), want %.40q", c.cmd, got, len(got), c.want)
		}
	}
}

func TestCommandThatClosesItsOutputIsWaitedFor(t *testing.T) {
	e := newEngine(t, Options{Root: bindRoot(t)})
	ws := create(t, e)
	res := run(t, ws, &backend.Request{Command: "exec >/dev/null 2>&1; sleep 0.3; echo done > marker; exit 4"})
	if res.ExitCode == nil || *res.ExitCode != 4 {
		t.Fatalf("exit %v, want 4", res.ExitCode)
	}
	if got := sh(t, ws, "cat marker"); got != "done\n" {
		t.Errorf("Run returned before the command ended: marker %q", got)
	}
}
