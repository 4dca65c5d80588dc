//go:build linux

package ossandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paigasus/helikon/internal/proctest"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
	"github.com/paigasus/helikon/internal/landlock"
)

// TestNoSurvivors starts background children that try to outlive the call
// (plain background, double fork, a new session) and checks that none is
// left when Run returns.
func TestNoSurvivors(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	marker := fmt.Sprintf("4%d.5", time.Now().UnixNano()%1_000_000)
	cmd := fmt.Sprintf("sleep %[1]s & (sleep %[1]s &) ; setsid sleep %[1]s & nohup sleep %[1]s >/dev/null 2>&1 & echo started", marker)
	res, err := b.Run(context.Background(), &backend.Request{Command: cmd})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Stdout), "started") {
		t.Fatalf("command did not run: %s %s", res.Stdout, res.Stderr)
	}
	if left := proctest.PidsWith(marker); len(left) > 0 {
		t.Fatalf("processes outlived the call: %v", left)
	}
	// Control: the same command unconfined leaves them behind.
	ctl := exec.Command("bash", "-c", cmd)
	ctl.Stdout, ctl.Stderr = nil, nil
	if err := ctl.Run(); err != nil {
		t.Fatal(err)
	}
	left := proctest.PidsWith(marker)
	for _, pid := range left {
		var p int
		fmt.Sscan(pid, &p)
		if proc, err := os.FindProcess(p); err == nil {
			proc.Kill()
		}
	}
	if len(left) == 0 {
		t.Error("control: unconfined background children did not survive; the test proves nothing")
	}
}

// TestForkBombIsContained runs a fork bomb under a short timeout: it must be
// stopped, leave nothing behind, and not exhaust the machine's processes.
func TestForkBombIsContained(t *testing.T) {
	b, _ := newTestBackend(t, Options{Limits: backend.ResourceLimits{Processes: 64}})
	marker := fmt.Sprintf("bomb%d", time.Now().UnixNano()%1_000_000)
	// Each process is a bash running the function; the marker names them.
	cmd := marker + "() { " + marker + " | " + marker + " & }; " + marker + "; sleep 30"
	res, err := b.Run(context.Background(), &backend.Request{Command: cmd, Timeout: 2 * time.Second})
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	if !res.TimedOut {
		t.Errorf("fork bomb ended before the timeout: exit %v %s", res.ExitCode, res.Stderr)
	}
	time.Sleep(50 * time.Millisecond)
	if left := proctest.PidsWith(marker); len(left) > 0 {
		t.Fatalf("%d fork bomb processes left", len(left))
	}
	// The machine still forks.
	if err := exec.Command("true").Run(); err != nil {
		t.Fatalf("machine cannot fork after the bomb: %v", err)
	}
}

// TestFailClosedWithoutLandlock forces Landlock to look unavailable, then
// too old: construction must fail with ErrUnavailable.
func TestFailClosedWithoutLandlock(t *testing.T) {
	saved := landlockABI
	t.Cleanup(func() { landlockABI = saved })
	for _, tc := range []struct {
		name string
		abi  func() (int, error)
	}{
		{"no landlock", func() (int, error) { return 0, fmt.Errorf("%w: forced by the test", landlock.ErrUnavailable) }},
		{"abi 2", func() (int, error) { return 2, nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			landlockABI = tc.abi
			b, err := New(t.TempDir(), nil)
			if !errors.Is(err, backend.ErrUnavailable) || b != nil {
				t.Fatalf("New = %v, %v; want ErrUnavailable", b, err)
			}
			t.Log(err)
		})
	}
}

// TestParentStaysUnrestricted runs many sandboxed commands concurrently with
// unconfined work in this program: every command must be confined and this
// program must not be.
func TestParentStaysUnrestricted(t *testing.T) {
	b, root := newTestBackend(t, Options{})
	outside := t.TempDir()
	const n = 24
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	for i := range n {
		wg.Go(func() {
			target := filepath.Join(outside, fmt.Sprintf("sb%d", i))
			res, err := b.Run(context.Background(), &backend.Request{Command: fmt.Sprintf("echo x > %s; echo ok > f%d", target, i)})
			if err != nil {
				errs <- err
				return
			}
			if _, err := os.Stat(target); err == nil {
				errs <- fmt.Errorf("command %d wrote outside the root", i)
			}
			if _, err := os.Stat(filepath.Join(root, fmt.Sprintf("f%d", i))); err != nil {
				errs <- fmt.Errorf("command %d could not write inside the root: %s", i, res.Stderr)
			}
		})
		wg.Go(func() {
			// Unconfined work: a goroutine of this program and a child
			// started the ordinary way.
			p := filepath.Join(outside, fmt.Sprintf("parent%d", i))
			if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
				errs <- fmt.Errorf("this program lost write access: %w", err)
			}
			if err := exec.Command("sh", "-c", "echo y > "+p+".child").Run(); err != nil {
				errs <- fmt.Errorf("an ordinary child lost write access: %w", err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// No thread of this program carries a filter or no_new_privs once the
	// confining threads (which the runtime terminates asynchronously) are
	// gone. A confining thread reused by the scheduler would stay.
	deadline := time.Now().Add(5 * time.Second)
	for {
		restricted := restrictedThreads()
		if len(restricted) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("threads of this program are restricted: %v", restricted)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func restrictedThreads() []string {
	var out []string
	tasks, _ := os.ReadDir("/proc/self/task")
	for _, task := range tasks {
		if tid, err := strconv.Atoi(task.Name()); err == nil {
			if launcher.IsWorkerThread(tid) {
				continue // confined ahead for a command, locked to its goroutine
			}
		}
		st, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "status"))
		if err != nil {
			continue // the thread exited meanwhile
		}
		for line := range strings.Lines(string(st)) {
			if (strings.HasPrefix(line, "Seccomp:") || strings.HasPrefix(line, "NoNewPrivs:")) && !strings.HasSuffix(strings.TrimSpace(line), "0") {
				out = append(out, task.Name()+" "+strings.TrimSpace(line))
			}
		}
	}
	return out
}

// TestCompatibility runs ordinary developer commands inside the sandbox.
func TestCompatibility(t *testing.T) {
	goroot := strings.TrimSpace(string(must(exec.Command("go", "env", "GOROOT").Output())))
	b, root := newTestBackend(t, Options{ReadPaths: []string{goroot}, EnvAllowlist: []string{"PATH", "LANG"}})
	gobin := filepath.Join(goroot, "bin", "go")
	for _, tc := range []struct{ name, cmd, want string }{
		{"ls -la", "ls -la /usr | head -3", "total"},
		{"pipes", "printf 'b\\na\\n' | sort | tr a-z A-Z | head -1", "A"},
		{"stderr to /dev/null", "ls /nonexistent 2>/dev/null; echo done", "done"},
		{"redirect to /dev/null", "echo hidden >/dev/null; echo shown", "shown"},
		{"go version", gobin + " version", "go version go"},
		{"git init add commit", "git init -q repo && cd repo && echo hi > a && git add a && git -c user.name=t -c user.email=t@e commit -qm init && git log --oneline | wc -l", "1"},
		{"sort with a temporary file", "seq 200000 | sort -rn -S 64K -T \"$TMPDIR\" | head -1", "200000"},
		{"mv across directories", "mkdir -p d1 d2 && echo x > d1/f && mv d1/f d2/f && cat d2/f", "x"},
		{"cross-directory rename of a directory", "mkdir -p a/b c && mv a/b c/b && ls c", "b"},
		{"temporary directory", "mktemp -p \"$TMPDIR\" >/dev/null && echo $TMPDIR", "helikon-os-"},
		{"proc self", "cat /proc/self/status | grep -c Seccomp", "2"},
		{"urandom", "head -c 4 /dev/urandom | wc -c", "4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := b.Run(context.Background(), &backend.Request{Command: tc.cmd})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode == nil || *res.ExitCode != 0 || !strings.Contains(string(res.Stdout), tc.want) {
				t.Errorf("%s: exit %v stdout %q stderr %q; want %q", tc.cmd, res.ExitCode, res.Stdout, res.Stderr, tc.want)
			}
		})
	}
	_ = root
}

// TestLimitsApply checks the default and requested resource limits inside
// the command.
func TestLimitsApply(t *testing.T) {
	b, _ := newTestBackend(t, Options{Timeout: 10 * time.Second})
	res, err := b.Run(context.Background(), &backend.Request{
		Command: "ulimit -c; ulimit -t; ulimit -f; ulimit -n; ulimit -Ht",
		Limits:  &backend.ResourceLimits{OpenFiles: 100, CPUSeconds: 1 << 30},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Fields(string(res.Stdout))
	want := []string{"0", "15", fmt.Sprint(backend.DefaultFileSize / 1024), "100", "15"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("limits = %v, want %v (core, cpu, fsize KiB, nofile, hard cpu); stderr %s", got, want, res.Stderr)
	}
	// A file larger than the limit cannot be written.
	res, err = b.Run(context.Background(), &backend.Request{
		Command: "head -c 200000 /dev/zero > big; echo $?; stat -c %s big",
		Limits:  &backend.ResourceLimits{FileSize: 100 << 10},
	})
	if err != nil {
		t.Fatal(err)
	}
	if f := strings.Fields(string(res.Stdout)); len(f) != 2 || f[0] == "0" || f[1] != fmt.Sprint(100<<10) {
		t.Errorf("file size limit: %q %q", res.Stdout, res.Stderr)
	}
}

// TestLimitsApplyToPrograms checks that a program run without a shell
// starts with its limits, soft and hard, including the address space, and
// that the limits hold for what it starts.
func TestLimitsApplyToPrograms(t *testing.T) {
	b, _ := newTestBackend(t, Options{Timeout: 10 * time.Second, Limits: backend.ResourceLimits{AddressSpace: 8 << 30}})
	res, err := b.Run(context.Background(), &backend.Request{
		Argv:   []string{attackBin(t), "rlimits"},
		SetEnv: []string{attackEnv + "=1"},
		Limits: &backend.ResourceLimits{OpenFiles: 100, CPUSeconds: 1 << 30, FileSize: 1 << 20},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("core 0/0 cpu 15/15 fsize %d/%d as %d/%d nofile 100/100", 1<<20, 1<<20, 8<<30, 8<<30)
	if got := strings.TrimSpace(string(res.Stdout)); got != want {
		t.Errorf("limits = %q\nwant     %q\nstderr %s", got, want, res.Stderr)
	}
	// What the program starts inherits them.
	res, err = b.Run(context.Background(), &backend.Request{Argv: []string{"/bin/sh", "-c", "ulimit -n; ulimit -Hc"}, Limits: &backend.ResourceLimits{OpenFiles: 77}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(res.Stdout)); strings.Join(got, " ") != "77 0" {
		t.Errorf("inherited limits = %v; want [77 0]; stderr %s", got, res.Stderr)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// TestPidsCgroupEntered checks that a root caller's command starts inside
// its own pids cgroup (the confining thread enters it before the fork).
func TestPidsCgroupEntered(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	if b.pids == "" {
		t.Skip("no writable cgroup v1 pids hierarchy here (or not root): commands get no pids cgroup")
	}
	res, err := b.Run(context.Background(), &backend.Request{Command: "cat /proc/self/cgroup"})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("/helikon-%d-", os.Getpid())
	found := false
	for line := range strings.Lines(string(res.Stdout)) {
		if strings.Contains(line, ":pids:") && strings.Contains(line, want) {
			found = true
		}
	}
	if !found {
		t.Errorf("/proc/self/cgroup in the command:\n%s\nwant a pids line with %q; stderr %s", res.Stdout, want, res.Stderr)
	}
}

// TestTraceMeStopLeavesNothing: a root caller's command may call
// PTRACE_TRACEME (the filter allows it for the limits at exec), making
// this program its tracer again once the confining thread is gone; its
// ptrace stops are then reported to this program's wait. A command that
// stops that way must neither end the call while its namespace lives on
// nor leave anything behind.
func TestTraceMeStopLeavesNothing(t *testing.T) {
	b, _ := newTestBackend(t, Options{Timeout: 5 * time.Second})
	marker := fmt.Sprintf("5%d.25", time.Now().UnixNano()%1_000_000)
	res, err := b.Run(context.Background(), &backend.Request{
		Argv:   []string{attackBin(t), "traceme-stop", marker},
		SetEnv: []string{attackEnv + "=1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Stdout), "traced; stopping") {
		t.Skipf("the command could not become traced here: %s %s", res.Stdout, res.Stderr)
	}
	if left := proctest.PidsWith(marker); len(left) > 0 {
		t.Fatalf("processes outlived the call: %v", left)
	}
}

// TestTraceMeThreadDoesNotHang: a command whose second thread asks to be
// traced, then stops, must still end at its timeout, leave nothing behind,
// and let Run return (without the janitor, Run waits forever for a
// namespace init that cannot finish exiting).
func TestTraceMeThreadDoesNotHang(t *testing.T) {
	b, _ := newTestBackend(t, Options{Timeout: 2 * time.Second})
	if !b.traceMe && !(b.server && b.serverTraceMe) {
		t.Skip("commands are not started traced here (limits by prologue)")
	}
	marker := fmt.Sprintf("5%d.125", time.Now().UnixNano()%1_000_000)
	type result struct {
		res *backend.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := b.Run(context.Background(), &backend.Request{
			Argv:   []string{attackBin(t), "traceme-thread-stop", marker},
			SetEnv: []string{attackEnv + "=1"},
		})
		done <- result{res, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(time.Minute): // a hang, not a speed bound: the timeout is 2 s
		t.Fatal("Run still waiting a minute after a 2 s timeout")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.Contains(string(r.res.Stdout), "traced; stopping") {
		t.Skipf("the command could not become traced here: %s %s", r.res.Stdout, r.res.Stderr)
	}
	if left := proctest.PidsWith(marker); len(left) > 0 {
		t.Fatalf("processes outlived the call: %v", left)
	}
}

// A request may lower the backend's output cap, never raise it: the cap is
// the operator's bound on what a command can make the caller hold.
func TestRequestCannotRaiseTheOutputCap(t *testing.T) {
	b, _ := newTestBackend(t, Options{OutputCap: 1000})
	for _, requested := range []int64{0, 500, 1 << 30} {
		res, err := b.Run(context.Background(), &backend.Request{Command: "head -c 5000 /dev/zero", OutputCap: requested})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(1000)
		if requested > 0 && requested < want {
			want = requested
		}
		if !res.Truncated || int64(len(res.Stdout)) != want {
			t.Errorf("request cap %d: Truncated %v with %d bytes, want true and %d", requested, res.Truncated, len(res.Stdout), want)
		}
	}
}
