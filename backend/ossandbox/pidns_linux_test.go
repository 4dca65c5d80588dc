//go:build linux

package ossandbox

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/proctest"
)

// callerEnv makes this test binary a program that runs one command through
// the backend (runCaller), to be killed while the command runs.
const callerEnv = "HELIKON_OSSANDBOX_CALLER"

// runCaller runs args[1] as a shell command in a backend over root args[0],
// its output on this program's stdout, and returns its exit code.
func runCaller(args []string) int {
	b, err := New(args[0], nil)
	if err != nil {
		fmt.Println("caller:", err)
		return 4
	}
	res, err := b.Run(context.Background(), &backend.Request{Command: args[1], Stdout: os.Stdout, Stderr: os.Stderr})
	if err != nil || res.ExitCode == nil {
		fmt.Println("caller:", err)
		return 4
	}
	return *res.ExitCode
}

// TestCommandDiesWithCaller kills (SIGKILL, no chance to clean up) a
// program while its sandboxed command runs: the command must not outlive
// it. Unprivileged callers' launchers watch the caller from their pid
// namespace; root callers have no such watch (the command is the first
// process of its own pid namespace, started by a thread that is gone).
func TestCommandDiesWithCaller(t *testing.T) {
	b, root := newTestBackend(t, Options{})
	if !b.pidNS {
		t.Skip("only an unprivileged caller's launcher in a pid namespace watches the caller")
	}
	marker := fmt.Sprintf("6%d.25", time.Now().UnixNano()%1_000_000)
	caller := exec.Command(attackBin(t), root, "echo started; sleep "+marker+"; echo survived > survived")
	caller.Env = append(os.Environ(), callerEnv+"=1")
	out, err := caller.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := caller.Start(); err != nil {
		t.Fatal(err)
	}
	defer caller.Wait()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "started" {
		caller.Process.Kill()
		t.Fatalf("the command did not start: %q %v", line, err)
	}
	if len(proctest.PidsWith(marker)) == 0 {
		caller.Process.Kill()
		t.Fatal("no process of the command found: the test proves nothing")
	}
	if err := caller.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(proctest.PidsWith(marker)) > 0 {
		if time.Now().After(deadline) {
			for _, pid := range proctest.PidsWith(marker) {
				if p, err := strconv.Atoi(pid); err == nil {
					if proc, err := os.FindProcess(p); err == nil {
						proc.Kill()
					}
				}
			}
			t.Fatal("the command outlived its caller by 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPidNamespaceHidesProcesses: an unprivileged caller's command sees the
// processes of its own pid namespace only; this program is not among them.
func TestPidNamespaceHidesProcesses(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	if !b.pidNS {
		t.Skip("only an unprivileged caller's launcher has a pid namespace and /proc of its own")
	}
	got := runOK(t, b, `ls /proc | grep -c '^[0-9]'; test -e /proc/`+strconv.Itoa(os.Getpid())+` && echo visible || echo hidden`)
	f := strings.Fields(got)
	if len(f) != 2 || f[1] != "hidden" {
		t.Fatalf("command's /proc: %q; want this program hidden", got)
	}
	if n, _ := strconv.Atoi(f[0]); n > 10 {
		t.Errorf("the command sees %d processes; want only its namespace's few", n)
	}
}

// TestLauncherWithoutPidNamespace runs the launcher as New falls back to
// where a /proc of its own cannot be mounted: commands still run, and
// their background children still do not outlive them.
func TestLauncherWithoutPidNamespace(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	if !b.userns {
		t.Skip("root callers and callers without user namespaces use no launcher")
	}
	b.pidNS = false
	marker := fmt.Sprintf("5%d.75", time.Now().UnixNano()%1_000_000)
	if got := runOK(t, b, "(sleep "+marker+" &) ; setsid sleep "+marker+" & echo ok"); got != "ok" {
		t.Fatalf("got %q", got)
	}
	if left := proctest.PidsWith(marker); len(left) > 0 {
		t.Fatalf("processes outlived the call: %v", left)
	}
}
