//go:build linux

package host_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/workspace/fsroot"
)

// hangBound is how long a test waits before calling a run hung. It is not a
// speed assertion: the commands it guards would otherwise run for minutes.
const hangBound = 30 * time.Second

func newBackend(t *testing.T, opts *host.Options) (*host.Backend, string) {
	t.Helper()
	sb, err := fsroot.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	b, err := host.New(sb.Dir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return b, sb.Dir()
}

func run(t *testing.T, b *host.Backend, req *backend.Request) *backend.Result {
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

func exitCode(r *backend.Result) string {
	if r.ExitCode == nil {
		return "null"
	}
	return strconv.Itoa(*r.ExitCode)
}

func TestRunExitCodes(t *testing.T) {
	t.Parallel()
	b, _ := newBackend(t, nil)
	tests := []struct {
		command string
		want    string
		stdout  string
		stderr  string
	}{
		{"echo hello", "0", "hello\n", ""},
		{"echo oops >&2; exit 3", "3", "", "oops\n"},
		{"false", "1", "", ""},
		{"exit 255", "255", "", ""},
		{"", "0", "", ""},
		{"definitely-not-a-program-xyz", "127", "", "not found"},
		{"if then fi (", "2", "", "syntax error"},
		{"printf 'a\\0b'", "0", "a\x00b", ""},
	}
	for _, tt := range tests {
		res := run(t, b, &backend.Request{Command: tt.command})
		if got := exitCode(res); got != tt.want {
			t.Errorf("%q: exit code %s, want %s (stderr %q)", tt.command, got, tt.want, res.Stderr)
		}
		if tt.stdout != string(res.Stdout) {
			t.Errorf("%q: stdout %q, want %q", tt.command, res.Stdout, tt.stdout)
		}
		if !strings.Contains(string(res.Stderr), tt.stderr) {
			t.Errorf("%q: stderr %q, want it to contain %q", tt.command, res.Stderr, tt.stderr)
		}
		if res.TimedOut || res.Truncated || res.Signal != 0 {
			t.Errorf("%q: unexpected %+v", tt.command, res)
		}
	}
}

func TestRunSignals(t *testing.T) {
	t.Parallel()
	b, _ := newBackend(t, nil)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL, syscall.SIGSEGV, syscall.SIGPIPE} {
		res := run(t, b, &backend.Request{Command: "kill -" + strconv.Itoa(int(sig)) + " $$"})
		if res.ExitCode != nil || res.Signal != int(sig) || res.TimedOut {
			t.Errorf("kill -%d $$: exit %s signal %d timed out %v, want null, %d, false", sig, exitCode(res), res.Signal, res.TimedOut, sig)
		}
	}
}

func TestRunWorkingDirectoryAndStdin(t *testing.T) {
	t.Parallel()
	b, dir := newBackend(t, nil)
	res := run(t, b, &backend.Request{Command: "pwd; cat; echo end"})
	if got := string(res.Stdout); got != dir+"\n"+"end\n" {
		t.Errorf("stdout %q, want the sandbox root then end (stdin must be empty)", got)
	}
}

func TestRunArgvIsNotInterpreted(t *testing.T) {
	t.Parallel()
	b, _ := newBackend(t, nil)
	res := run(t, b, &backend.Request{Argv: []string{"printf", "%s|", "a b", "$HOME", ";rm -rf x", "`id`"}})
	if got, want := string(res.Stdout), "a b|$HOME|;rm -rf x|`id`|"; got != want || exitCode(res) != "0" {
		t.Errorf("argv run: stdout %q exit %s, want %q and 0", got, exitCode(res), want)
	}
	if _, err := b.Run(context.Background(), &backend.Request{Command: "true", Argv: []string{"true"}}); err == nil {
		t.Error("a request with both Command and Argv ran")
	}
}

func TestRunEnvironmentIsScrubbed(t *testing.T) {
	// t.Setenv forbids t.Parallel.
	secrets := map[string]string{
		"OPENAI_API_KEY":           "sk-secret",
		"GH_TOKEN":                 "ghp-secret",
		"SSH_AUTH_SOCK":            "/tmp/agent.sock",
		"DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/bus",
		"DOCKER_HOST":              "unix:///var/run/docker.sock",
		"AWS_SECRET_ACCESS_KEY":    "aws-secret",
		"HELIKON_TEST_PLAIN":       "plain",
		"GH_REPO":                  "owner/repo",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	names := func(r *backend.Result) []string {
		var out []string
		for line := range strings.Lines(string(r.Stdout)) {
			name, _, _ := strings.Cut(line, "=")
			switch name {
			case "PWD", "SHLVL", "_", "OLDPWD": // set by the shell itself
				continue
			}
			out = append(out, name)
		}
		slices.Sort(out)
		return out
	}
	tests := []struct {
		name  string
		allow []string
		extra []string
		want  []string
	}{
		{"default allowlist", nil, nil, []string{"HOME", "PATH"}},
		{"a pattern does not let secrets through", []string{"PATH", "GH_*", "HELIKON_TEST_*", "*_KEY", "SSH_*", "DOCKER*"}, nil,
			[]string{"GH_REPO", "HELIKON_TEST_PLAIN", "PATH"}},
		{"an exact name does", []string{"PATH", "GH_TOKEN", "SSH_AUTH_SOCK"}, nil, []string{"GH_TOKEN", "PATH", "SSH_AUTH_SOCK"}},
		{"the request extends the allowlist", nil, []string{"HELIKON_TEST_PLAIN", "OPENAI_API_KEY"},
			[]string{"HELIKON_TEST_PLAIN", "HOME", "OPENAI_API_KEY", "PATH"}},
		{"an empty allowlist passes nothing", []string{}, nil, nil},
	}
	for _, tt := range tests {
		b, _ := newBackend(t, &host.Options{EnvAllowlist: tt.allow})
		res := run(t, b, &backend.Request{Argv: []string{"/usr/bin/env"}, Env: tt.extra})
		if got := names(res); !slices.Equal(got, tt.want) {
			t.Errorf("%s: environment %v, want %v", tt.name, got, tt.want)
		}
		for k, v := range secrets {
			if strings.Contains(string(res.Stdout), v) && !slices.Contains(tt.want, k) {
				t.Errorf("%s: the value of %s leaked", tt.name, k)
			}
		}
	}
	b, _ := newBackend(t, nil)
	res := run(t, b, &backend.Request{Command: `echo "$X"`, SetEnv: []string{"X=set value"}})
	if string(res.Stdout) != "set value\n" {
		t.Errorf("SetEnv: stdout %q", res.Stdout)
	}
}

func TestRunTimeout(t *testing.T) {
	t.Parallel()
	b, dir := newBackend(t, &host.Options{Timeout: 300 * time.Millisecond})
	tests := []struct {
		name, command string
	}{
		{"foreground sleep", "sleep 60"},
		{"background child holding stdout", "sleep 60 & sleep 60"},
		{"grandchild holding stdout and stderr", "(sleep 60 2>&1 &) ; exec sleep 60"},
		{"double-forked daemon in its own session", `( setsid sh -c 'echo $$ > daemon.pid; exec sleep 60' & ) ; sleep 60`},
		{"ignores SIGTERM", "trap '' TERM; sleep 60"},
	}
	for _, tt := range tests {
		os.Remove(filepath.Join(dir, "daemon.pid"))
		// The request asks for an hour: it may only shorten the timeout.
		res := run(t, b, &backend.Request{Command: tt.command, Timeout: time.Hour})
		if !res.TimedOut || res.ExitCode != nil {
			t.Errorf("%s: timed out %v exit %s, want true and null", tt.name, res.TimedOut, exitCode(res))
		}
		if b, err := os.ReadFile(filepath.Join(dir, "daemon.pid")); err == nil {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if alive(pid) {
				t.Errorf("%s: the double-forked daemon %d survived", tt.name, pid)
			}
		}
	}
}

// TestRunKillsBackgroundChildrenAfterExit checks that a command that exits
// normally does not leave its background processes behind, and that Run
// returns although they held its output open.
func TestRunKillsBackgroundChildrenAfterExit(t *testing.T) {
	t.Parallel()
	b, dir := newBackend(t, nil)
	res := run(t, b, &backend.Request{Command: `
		sleep 60 & echo $! > bg.pid
		( setsid sh -c 'echo $$ > daemon.pid; exec sleep 60' & )
		nohup sleep 60 >/dev/null 2>&1 & echo $! > nohup.pid
		while [ ! -s daemon.pid ]; do sleep 0.01; done
		echo done`})
	if string(res.Stdout) != "done\n" || exitCode(res) != "0" {
		t.Fatalf("stdout %q exit %s stderr %q", res.Stdout, exitCode(res), res.Stderr)
	}
	for _, f := range []string{"bg.pid", "daemon.pid", "nohup.pid"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid <= 1 || alive(pid) {
			t.Errorf("%s: process %d survived the command", f, pid)
		}
	}
}

func TestRunCancel(t *testing.T) {
	t.Parallel()
	b, dir := newBackend(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		// Cancel once the command is demonstrably running.
		for {
			if _, err := os.Stat(filepath.Join(dir, "started")); err == nil {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	start := time.Now()
	res, err := b.Run(ctx, &backend.Request{Command: "sleep 60 & echo $! > bg.pid; touch started; sleep 60"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if time.Since(start) > hangBound {
		t.Fatal("cancellation did not stop the command")
	}
	if res == nil || res.ExitCode != nil || res.TimedOut {
		t.Errorf("result %+v, want a killed, not timed-out command", res)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "bg.pid"))
	if pid, _ := strconv.Atoi(strings.TrimSpace(string(data))); pid <= 1 || alive(pid) {
		t.Errorf("background process %d survived the cancellation", pid)
	}
}

func TestRunOutputFloodIsCapped(t *testing.T) {
	// Not parallel: it measures this process's allocations.
	const outCap = 64 << 10
	b, _ := newBackend(t, &host.Options{Timeout: time.Second, OutputCap: outCap})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	res := run(t, b, &backend.Request{Command: "yes helikon & yes >&2 helikon; wait"})
	runtime.ReadMemStats(&after)
	if !res.Truncated || len(res.Stdout) != outCap || len(res.Stderr) != outCap {
		t.Errorf("truncated %v, stdout %d bytes, stderr %d bytes; want true, %d, %d", res.Truncated, len(res.Stdout), len(res.Stderr), outCap, outCap)
	}
	if !strings.HasPrefix(string(res.Stdout), "helikon\nhelikon\n") {
		t.Errorf("the first bytes were not kept: %q", res.Stdout[:32])
	}
	// yes writes gigabytes in a second; the backend may allocate a few
	// read buffers and the capped output, not the flood.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
		t.Errorf("the flood allocated %d bytes", grew)
	}
}

func TestRunOutputCapKeepsUTF8Whole(t *testing.T) {
	t.Parallel()
	b, _ := newBackend(t, &host.Options{OutputCap: 5})
	tests := []struct{ command, want string }{
		{`printf 'aaa\303\251'`, "aaaé"},          // 5 bytes: fits
		{`printf 'aaaa\303\251'`, "aaaa"},         // é would be cut: dropped
		{`printf 'aa\342\202\254zz'`, "aa€"},      // € is 3 bytes and fits exactly
		{`printf 'aaa\342\202\254'`, "aaa"},       // € cut after 2 of 3 bytes
		{`printf 'a\360\237\230\200zzz'`, "a😀"},   // 4-byte emoji fits exactly
		{`printf 'ab\360\237\230\200zzz'`, "ab"},  // emoji cut
		{`printf 'abcd\377\377\377'`, "abcd\xff"}, // not UTF-8: kept as is
	}
	for _, tt := range tests {
		res := run(t, b, &backend.Request{Command: tt.command})
		if string(res.Stdout) != tt.want {
			t.Errorf("%s: stdout %q, want %q", tt.command, res.Stdout, tt.want)
		}
	}
}

func TestRunResourceLimits(t *testing.T) {
	t.Parallel()
	b, dir := newBackend(t, &host.Options{Timeout: 20 * time.Second})
	t.Run("limits apply to the command only", func(t *testing.T) {
		var before syscall.Rlimit
		syscall.Getrlimit(syscall.RLIMIT_FSIZE, &before)
		res := run(t, b, &backend.Request{Command: "cat /proc/self/limits", Limits: &backend.ResourceLimits{
			CPUSeconds: 7, FileSize: 3 << 20, AddressSpace: 1 << 30, OpenFiles: 100,
		}})
		for _, want := range []string{
			"Max cpu time              7                    7 ",
			"Max file size             3145728              3145728 ",
			"Max address space         1073741824           1073741824 ",
			"Max open files            100                  100 ",
		} {
			if !strings.Contains(string(res.Stdout), want) {
				t.Errorf("limits lack %q:\n%s", want, res.Stdout)
			}
		}
		var after syscall.Rlimit
		syscall.Getrlimit(syscall.RLIMIT_FSIZE, &after)
		if after != before {
			t.Errorf("the file-size limit of the test process changed from %v to %v", before, after)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		res := run(t, b, &backend.Request{Command: "cat /proc/self/limits", Timeout: 10 * time.Second})
		for _, want := range []string{
			"Max cpu time              15                   15 ", // timeout + 5 s
			"Max file size             1073741824           1073741824 ",
		} {
			if !strings.Contains(string(res.Stdout), want) {
				t.Errorf("limits lack %q:\n%s", want, res.Stdout)
			}
		}
	})
	t.Run("a CPU spin is stopped by the CPU limit", func(t *testing.T) {
		res := run(t, b, &backend.Request{Command: "while :; do :; done", Limits: &backend.ResourceLimits{CPUSeconds: 1}})
		if res.TimedOut || res.ExitCode != nil || (res.Signal != int(syscall.SIGXCPU) && res.Signal != int(syscall.SIGKILL)) {
			t.Errorf("result %+v: want the spin killed by SIGXCPU or SIGKILL before the timeout", res)
		}
	})
	t.Run("a large write is stopped by the file-size limit", func(t *testing.T) {
		res := run(t, b, &backend.Request{Command: "head -c 5000000 /dev/zero > big", Limits: &backend.ResourceLimits{FileSize: 1 << 20}})
		fi, err := os.Stat(filepath.Join(dir, "big"))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > 1<<20 {
			t.Errorf("file grew to %d bytes past the 1 MiB limit", fi.Size())
		}
		if res.Signal != int(syscall.SIGXFSZ) && exitCode(res) != strconv.Itoa(128+int(syscall.SIGXFSZ)) {
			t.Errorf("result %+v: want the writer killed by SIGXFSZ", res)
		}
	})
}

func TestGuarantees(t *testing.T) {
	t.Parallel()
	b, _ := newBackend(t, nil)
	g := b.Guarantees()
	if g.Label != "host (no containment)" || g.Filesystem != backend.IsolationNone || g.Network != backend.IsolationNone || g.Syscalls != backend.IsolationNone {
		t.Errorf("guarantees %v", g)
	}
	if len(g.Features) == 0 {
		t.Error("no features reported")
	}
}

func TestNewRejectsMissingDirectory(t *testing.T) {
	t.Parallel()
	if _, err := host.New(filepath.Join(t.TempDir(), "missing"), nil); err == nil {
		t.Error("New accepted a missing directory")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := host.New(file, nil); err == nil {
		t.Error("New accepted a file as its directory")
	}
}

// alive reports whether pid is a live process (a zombie is dead).
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && len(b) > i+2 && b[i+2] != 'Z' && b[i+2] != 'X'
}
