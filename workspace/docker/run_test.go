package docker

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
)

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
// background subshell, in a process group of its own (newpgrp, see
// withNewpgrp), and in the foreground.
const chain = `sleep 1001 & (sleep 1002 &) ; ./newpgrp /bin/sleep 1003 & echo started; sleep 1004`

// withNewpgrp builds testdata/newpgrp for Linux and puts it into ws's root.
func withNewpgrp(t *testing.T, ws *Workspace) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "newpgrp")
	cmd := exec.Command("go", "build", "-o", bin, "./testdata/newpgrp")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build newpgrp: %v\n%s", err, out)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.WriteFile(t.Context(), "newpgrp", data); err != nil {
		t.Fatal(err)
	}
	sh(t, ws, "chmod +x newpgrp")
}

func TestCancelKillsTheBackgroundChain(t *testing.T) {
	ws := create(t, newEngine(t, Options{Isolate: true}))
	withNewpgrp(t, ws)
	m := newMarker("started")
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := ws.Run(ctx, &backend.Request{Command: chain, Stdout: m})
		done <- err
	}()
	<-m.seen
	// newpgrp has left the group once it runs sleep under its own name.
	for i := 0; !slices.ContainsFunc(strings.Split(sleepers(t, ws, "sleep 100"), "\n"), func(l string) bool { return strings.HasPrefix(l, "/bin/sleep 1003") }); i++ {
		if i == 100 {
			t.Fatal("newpgrp never ran sleep 1003")
		}
	}
	if got := sleepers(t, ws, "sleep 100"); strings.Count(got, "sleep 100") != 4 {
		t.Fatalf("before the cancellation, the chain's sleeps are %q, want 4", got)
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
	ws := create(t, newEngine(t, Options{Isolate: true}))
	withNewpgrp(t, ws)
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
	ws := create(t, newEngine(t, Options{Isolate: true}))
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
	ws := create(t, newEngine(t, Options{Isolate: true}))
	res := run(t, ws, &backend.Request{Command: "exec >/dev/null 2>&1; sleep 0.3; echo done > marker; exit 4"})
	if res.ExitCode == nil || *res.ExitCode != 4 {
		t.Fatalf("exit %v, want 4", res.ExitCode)
	}
	if got := sh(t, ws, "cat marker"); got != "done\n" {
		t.Errorf("Run returned before the command ended: marker %q", got)
	}
}
