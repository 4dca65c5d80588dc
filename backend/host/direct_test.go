//go:build linux

package host

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/proc"
	"github.com/paigasus/helikon/internal/proctest"
)

// hangBound is how long a test waits before calling a run hung. It is not a
// speed assertion.
const hangBound = 30 * time.Second

// pair returns two backends on one directory: one that takes the direct
// path where it can, one that always runs bash.
func pair(t *testing.T, opts *Options) (direct, bash *Backend, dir string) {
	t.Helper()
	if m, why := proc.Available(); m == proc.TrackReaper {
		t.Skipf("no direct path without cgroup tracking: %s", why)
	}
	dir = t.TempDir()
	direct, err := New(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	bash, err = New(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	bash.noDirect = true
	return direct, bash, dir
}

func mustRun(t *testing.T, b *Backend, req *backend.Request) *backend.Result {
	t.Helper()
	start := time.Now()
	res, err := b.Run(context.Background(), req)
	if err != nil {
		t.Fatalf("Run(%q): %v", req.Command, err)
	}
	if d := time.Since(start); d > hangBound {
		t.Fatalf("Run(%q) took %v", req.Command, d)
	}
	return res
}

func describe(r *backend.Result) string {
	code := "null"
	if r.ExitCode != nil {
		code = strconv.Itoa(*r.ExitCode)
	}
	return "exit " + code + " signal " + strconv.Itoa(r.Signal) + " timed out " + strconv.FormatBool(r.TimedOut) +
		" truncated " + strconv.FormatBool(r.Truncated) + "\nstdout " + strconv.Quote(string(r.Stdout)) + "\nstderr " + strconv.Quote(string(r.Stderr))
}

// TestDirectMatchesBash is the differential test of the direct path: every
// command runs once through the direct path (where it qualifies) and once
// through real bash, and the results (stdout, stderr, exit status, signal,
// truncation) must be identical. direct says whether the command must take
// the direct path, so that the table keeps testing what it means to.
func TestDirectMatchesBash(t *testing.T) {
	d, b, dir := pair(t, &Options{OutputCap: 4096})
	write := func(name, content string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "hello\nworld\n", 0o644)
	write("noshebang", "echo from a script without a shebang\n", 0o755)
	write("notexec", "#!/bin/sh\necho never\n", 0o644)
	write("badinterp", "#!/nonexistent/interpreter\n", 0o755)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// Programs that gain privileges on exec, which a traced exec does
	// not give them: they must take the bash path.
	idProg, err := exec.LookPath("id")
	if err != nil {
		t.Fatal(err)
	}
	idBytes, err := os.ReadFile(idProg)
	if err != nil {
		t.Fatal(err)
	}
	envProg, err := exec.LookPath("env")
	if err != nil {
		t.Fatal(err)
	}
	envBytes, err := os.ReadFile(envProg)
	if err != nil {
		t.Fatal(err)
	}
	write("myenv", string(envBytes), 0o755)
	write("suid-id", string(idBytes), 0o755)
	write("sgid-id", string(idBytes), 0o755)
	write("cap-id", string(idBytes), 0o755)
	if err := os.Chmod(filepath.Join(dir, "suid-id"), 0o755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "sgid-id"), 0o755|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	// A file capability (cap_net_raw+ep) needs CAP_SETFCAP and a file
	// system with security xattrs; without them the case is left out.
	capV3 := []byte{0, 0, 0, 2, 0, 0x20, 0, 0, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	hasCap := syscall.Setxattr(filepath.Join(dir, "cap-id"), "security.capability", capV3, 0) == nil
	dirPath := []string{"PATH=" + dir + ":" + os.Getenv("PATH")}
	// Names under /proc and /dev mean the process that opens them: bash
	// runs itself for /proc/self/exe, the direct path would run helikon.
	if err := os.Symlink("/proc/self/exe", filepath.Join(dir, "selfexe")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/proc/self", filepath.Join(dir, "self")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		command string
		direct  bool
		setEnv  []string
	}{
		// Programs from PATH, with literal words of every quoting form.
		{command: "true", direct: true},
		{command: "false", direct: true},
		{command: "ls", direct: true},
		{command: "ls -a sub", direct: true},
		{command: "ls nonexistent", direct: true},
		{command: "cat a.txt", direct: true},
		{command: "cat 'a.txt' \"a.txt\" a'.'txt", direct: true},
		{command: "  cat\ta.txt  ", direct: true},
		{command: "cat missing.txt", direct: true},
		{command: "head -c 10000 /dev/zero", direct: true}, // truncated at the cap
		{command: "sh -c 'echo \"$0|$1|$#\" >&2; exit 7' zero one", direct: true},
		{command: "sh -c 'kill -SEGV $$'", direct: true},
		{command: "sh -c 'kill -TERM $$'", direct: true},
		{command: `sh -c "echo double-quoted; exit 3"`, direct: true},
		{command: "sh -c ''", direct: true},
		{command: "expr 6 '*' 7", direct: true},
		{command: "expr 1 + 2 = 3", direct: true},
		{command: "/usr/bin/pwd", direct: true},
		{command: "./myenv", direct: true},
		{command: "sub/../myenv", direct: true},
		{command: "myenv", direct: true, setEnv: []string{"PATH=/nonexistent:" + dir + ":/usr/bin:/bin"}},
		{command: "nice", direct: true},
		// What the program inherits: environment (order, PWD, SHLVL, _),
		// limits, signal dispositions and mask, umask, capabilities,
		// session and process group, descriptors.
		{command: "env", direct: true},
		{command: "env", direct: true, setEnv: []string{"ZED=1", "ALPHA=2", "_=inherited", "SHLVL=4", "PWD=/elsewhere", "OLDPWD=/"}},
		{command: "env", direct: true, setEnv: []string{"OLDPWD=" + dir + "/sub", "PWD=" + dir, "LANG=C.UTF-8"}},
		{command: "printenv PATH", direct: true},
		{command: "cat /proc/self/environ", direct: true},
		{command: "cat /proc/self/limits", direct: true},
		{command: "grep -E '^(SigBlk|SigIgn|SigCgt|Cap[A-Za-z]+|NoNewPrivs|Seccomp|Umask)' /proc/self/status", direct: true},
		{command: "awk '{print ($1==$5), ($1==$6)}' /proc/self/stat", direct: true},
		{command: "ls /proc/self/fd", direct: true},
		{command: "readlink /proc/self/fd/0", direct: true},
		{command: "sh -c 'ulimit -t; ulimit -f; ulimit -n; ulimit -v'", direct: true},
		// Set-ID programs and programs with file capabilities, by path
		// and through PATH.
		{command: "./suid-id -un", direct: false},
		{command: "./sgid-id -gn", direct: false},
		{command: "suid-id -un", direct: false, setEnv: dirPath},
		{command: "sgid-id -gn", direct: false, setEnv: dirPath},
		{command: "./cap-id -un", direct: !hasCap},
		{command: "cap-id -un", direct: !hasCap, setEnv: dirPath},
		{command: "id -un", direct: true, setEnv: dirPath},
		// Programs reached through /proc or /dev, by any spelling.
		{command: "/proc/self/exe -c 'echo the shell'", direct: false},
		{command: "/proc/thread-self/exe -c 'echo the shell'", direct: false},
		{command: "/proc/self/root/proc/self/exe -c 'echo the shell'", direct: false},
		{command: "/usr/../proc/self/exe -c 'echo the shell'", direct: false},
		{command: "./selfexe -c 'echo the shell'", direct: false},
		{command: "self/exe -c 'echo the shell'", direct: false},
		{command: "sub/../self/exe -c 'echo the shell'", direct: false},
		{command: "exe -c 'echo the shell'", direct: false, setEnv: []string{"PATH=/proc/self"}},
		{command: "exe -c 'echo the shell'", direct: false, setEnv: []string{"PATH=" + dir + "/self"}},
		// Not found or not executable as a binary: bash reports it.
		{command: "definitely-not-a-program-xyz", direct: false},
		{command: "./noshebang", direct: false},
		{command: "./notexec", direct: false},
		{command: "./badinterp", direct: false},
		{command: "./sub", direct: false},
		{command: "sub", direct: false},
		// Builtins, keywords, assignments and anything bash expands.
		{command: "true x", direct: false},
		{command: "echo hello", direct: false},
		{command: "pwd", direct: false},
		{command: "exit 3", direct: false},
		{command: "FOO=1 env", direct: false},
		{command: "ls *.txt", direct: false},
		{command: "ls ~", direct: false},
		{command: "ls {a,b}.txt", direct: false},
		{command: "cat a.txt # comment", direct: false},
		{command: "cat \\a.txt", direct: false},
		{command: "cat \"$HOME\"", direct: false},
		{command: "cat a.txt; true", direct: false},
		{command: "cat a.txt > out", direct: false},
		{command: "cat a.txt | cat", direct: false},
		{command: "time true", direct: false, setEnv: []string{"TIMEFORMAT=timed"}}, // a keyword; a fixed TIMEFORMAT, as the timings differ between runs
		{command: "if", direct: false},
		{command: "'unterminated", direct: false},
		// An environment that changes how bash starts.
		{command: "env", direct: false, setEnv: []string{"BASH_ENV=" + dir + "/noshebang"}},
		{command: "true", direct: false, setEnv: []string{"SHELLOPTS=xtrace"}},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			req := func() *backend.Request { return &backend.Request{Command: tt.command, SetEnv: tt.setEnv} }
			before := d.directRuns.Load()
			got := mustRun(t, d, req())
			if took := d.directRuns.Load() > before; took != tt.direct {
				t.Errorf("took the direct path: %v, want %v", took, tt.direct)
			}
			want := mustRun(t, b, req())
			got.Duration, want.Duration = 0, 0
			if describe(got) != describe(want) {
				t.Errorf("direct path:\n%s\nbash:\n%s", describe(got), describe(want))
			}
		})
	}
}

// Removing prlimit from the direct path fails this test: the program would
// run without its limits.
func TestDirectAppliesLimits(t *testing.T) {
	t.Parallel()
	d, _, dir := pair(t, &Options{Timeout: 20 * time.Second})
	run := func(command string, l *backend.ResourceLimits) *backend.Result {
		t.Helper()
		before := d.directRuns.Load()
		res := mustRun(t, d, &backend.Request{Command: command, Limits: l})
		if d.directRuns.Load() == before {
			t.Fatalf("%q did not take the direct path", command)
		}
		return res
	}
	res := run("sh -c 'ulimit -H -t; ulimit -t; ulimit -H -f; ulimit -n'", &backend.ResourceLimits{CPUSeconds: 3, FileSize: 10 << 10, OpenFiles: 50})
	if got, want := string(res.Stdout), "3\n3\n20\n50\n"; got != want { // sh counts -f in 512-byte blocks
		t.Errorf("limits seen by the program: %q, want %q", got, want)
	}
	res = run("dd if=/dev/zero of=big bs=1024 count=100", &backend.ResourceLimits{FileSize: 10 << 10})
	if res.Signal != int(syscall.SIGXFSZ) {
		t.Errorf("a write past the file-size limit: %s; want killed by SIGXFSZ", describe(res))
	}
	if fi, err := os.Stat(filepath.Join(dir, "big")); err != nil || fi.Size() > 10<<10 {
		t.Errorf("the file grew past the limit: %v %v", fi, err)
	}
	res = run("sh -c 'while :; do :; done'", &backend.ResourceLimits{CPUSeconds: 1})
	if res.TimedOut || (res.Signal != int(syscall.SIGXCPU) && res.Signal != int(syscall.SIGKILL)) {
		t.Errorf("a CPU spin: %s; want killed by SIGXCPU or SIGKILL before the timeout", describe(res))
	}
}

// A program run directly is tracked like one run through bash: what it
// leaves behind (a background child, a double-forked daemon in its own
// session) is killed before Run returns, and a timeout or a cancellation
// kills it.
func TestDirectLeavesNoSurvivors(t *testing.T) {
	t.Parallel()
	d, _, _ := pair(t, &Options{Timeout: 20 * time.Second})
	for _, tt := range []struct{ command, marker string }{
		{"sh -c 'sleep 9137.101 & echo started'", "9137.101"},
		{"setsid sh -c 'sleep 9137.102 & exit 0'", "9137.102"},
		{"nohup sleep 9137.103", "9137.103"},
	} {
		before := d.directRuns.Load()
		res, err := d.Run(context.Background(), &backend.Request{Command: tt.command, Timeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatalf("%q: %v", tt.command, err)
		}
		if d.directRuns.Load() == before {
			t.Errorf("%q did not take the direct path", tt.command)
		}
		if pids := proctest.PidsWith("sleep " + tt.marker); len(pids) > 0 {
			t.Errorf("%q: processes %v survived (%s)", tt.command, pids, describe(res))
		}
	}
	res := mustRun(t, d, &backend.Request{Command: "sleep 9137.104", Timeout: 200 * time.Millisecond})
	if !res.TimedOut || res.ExitCode != nil || res.Signal != int(syscall.SIGKILL) {
		t.Errorf("timeout: %s", describe(res))
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(proctest.PidsWith("sleep 9137.105")) == 0 {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	res, err := d.Run(ctx, &backend.Request{Command: "sleep 9137.105"})
	if err == nil || res == nil || res.ExitCode != nil {
		t.Errorf("cancellation: %v %+v", err, res)
	}
	if pids := proctest.PidsWith("sleep 9137.10"); len(pids) > 0 {
		t.Errorf("processes %v survived", pids)
	}
}

// The direct path passes the scrubbed environment, never this program's.
func TestDirectEnvironmentIsScrubbed(t *testing.T) {
	t.Setenv("HELIKON_DIRECT_TEST_API_KEY", "secret-value")
	d, _, _ := pair(t, nil)
	before := d.directRuns.Load()
	res := mustRun(t, d, &backend.Request{Command: "env"})
	if d.directRuns.Load() == before {
		t.Fatal("env did not take the direct path")
	}
	if strings.Contains(string(res.Stdout), "secret-value") {
		t.Errorf("the secret reached the program:\n%s", res.Stdout)
	}
}
