//go:build linux

package proc

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/proc/reaper"
)

const hangBound = 30 * time.Second

// modes returns the tracking modes this machine supports.
func modes(t *testing.T) []Tracking {
	m := []Tracking{TrackReaper, TrackGroup}
	if got, why := Available(); got == TrackCgroup {
		m = append(m, TrackCgroup)
	} else {
		t.Logf("cgroup tracking not tested: %s", why)
	}
	return m
}

func spec(t *testing.T, m Tracking, command string, timeout time.Duration) *Spec {
	t.Helper()
	argv, err := ShellArgv(command, backend.ResourceLimits{CPUSeconds: 60})
	if err != nil {
		t.Fatal(err)
	}
	return &Spec{Argv: argv, Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH")}, Timeout: timeout, Tracking: m}
}

func mustRun(t *testing.T, ctx context.Context, s *Spec) *backend.Result {
	t.Helper()
	start := time.Now()
	res, err := Run(ctx, s)
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if time.Since(start) > hangBound {
		t.Fatalf("Run hung for %v", time.Since(start))
	}
	return res
}

func TestRunStatusInEveryMode(t *testing.T) {
	t.Parallel()
	for _, m := range modes(t) {
		t.Run(m.String(), func(t *testing.T) {
			t.Parallel()
			tests := []struct {
				command     string
				code, sig   int // code -1: killed
				out, errOut string
			}{
				{"echo out; echo err >&2", 0, 0, "out\n", "err\n"},
				{"exit 42", 42, 0, "", ""},
				{"kill -TERM $$", -1, 15, "", ""},
				{"kill -KILL $$", -1, 9, "", ""},
				{"exec kill -USR1 $$", -1, 10, "", ""},
			}
			for _, tt := range tests {
				res := mustRun(t, context.Background(), spec(t, m, tt.command, 10*time.Second))
				code := -1
				if res.ExitCode != nil {
					code = *res.ExitCode
				}
				if code != tt.code || res.Signal != tt.sig || string(res.Stdout) != tt.out || string(res.Stderr) != tt.errOut {
					t.Errorf("%q: code %d signal %d out %q err %q; want %d %d %q %q", tt.command, code, res.Signal, res.Stdout, res.Stderr, tt.code, tt.sig, tt.out, tt.errOut)
				}
			}
		})
	}
}

// TestRunLeavesNoSurvivors starts processes that try to outlive the
// command in several ways, records their pids, and checks that none is alive
// after Run returns, on timeout, after a normal exit and on cancellation.
func TestRunLeavesNoSurvivors(t *testing.T) {
	t.Parallel()
	// Each line records "group PID" for a process that stays in the
	// command's session and "daemon PID" for one that leaves it.
	escapes := `
		sleep 60 & echo group $! >> pids
		( sleep 60 & echo group $! >> pids )
		( setsid sh -c 'echo daemon $$ >> pids; exec sleep 60' & )
		( setsid sh -c '( sleep 60 & echo daemon $! >> pids ) ; sleep 60' & )
		nohup sh -c 'trap "" TERM HUP INT; echo group $$ >> pids; sleep 60' >/dev/null 2>&1 &
		while [ "$(wc -l < pids)" -lt 5 ]; do sleep 0.01; done
		touch ready
	`
	for _, m := range modes(t) {
		for _, end := range []string{"exit", "timeout", "cancel"} {
			t.Run(m.String()+"/"+end, func(t *testing.T) {
				t.Parallel()
				command := escapes
				if end != "exit" {
					command += "; sleep 60"
				}
				timeout := 10 * time.Second
				if end == "timeout" {
					timeout = time.Second
				}
				s := spec(t, m, command, timeout)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				if end == "cancel" {
					go func() {
						for {
							if _, err := os.Stat(filepath.Join(s.Dir, "ready")); err == nil {
								cancel()
								return
							}
							time.Sleep(5 * time.Millisecond)
						}
					}()
				}
				res := mustRun(t, ctx, s)
				data, err := os.ReadFile(filepath.Join(s.Dir, "pids"))
				if err != nil {
					t.Fatal(err)
				}
				f := strings.Fields(string(data))
				for i := 0; i+1 < len(f); i += 2 {
					pid, _ := strconv.Atoi(f[i+1])
					if !alive(pid) {
						continue
					}
					st, _ := reaper.Stat(pid)
					killSession(st.Session)
					if m == TrackGroup && f[i] == "daemon" {
						continue // setsid escapes process-group tracking, as documented
					}
					t.Errorf("%s process %d survived", f[i], pid)
				}
				if _, err := os.Stat(filepath.Join(s.Dir, "ready")); err != nil {
					t.Skipf("the command was stopped before it started every process (result %+v)", res)
				}
				if len(f) != 10 {
					t.Errorf("pids file: %q", data)
				}
			})
		}
	}
}

func TestRunKillsAWriterThatOutlivesTheMainProcess(t *testing.T) {
	t.Parallel()
	for _, m := range modes(t) {
		res := mustRun(t, context.Background(), spec(t, m, "(while :; do echo tick; sleep 0.01; done) & echo main", 10*time.Second))
		if !bytes.Contains(res.Stdout, []byte("main\n")) || res.ExitCode == nil || *res.ExitCode != 0 {
			t.Errorf("%s: stdout %q exit %v", m, res.Stdout, res.ExitCode)
		}
	}
}

func TestExplicitTrackingUnavailable(t *testing.T) {
	t.Parallel()
	if got, _ := Available(); got == TrackCgroup {
		t.Skip("cgroup tracking is available here")
	}
	_, err := Run(context.Background(), &Spec{Argv: []string{"true"}, Tracking: TrackCgroup})
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", err)
	}
}

func TestRunStartFailure(t *testing.T) {
	t.Parallel()
	for _, m := range modes(t) {
		_, err := Run(context.Background(), &Spec{Argv: []string{"/nonexistent/program"}, Tracking: m, Dir: t.TempDir()})
		if m != TrackReaper && err == nil {
			t.Errorf("%s: a missing program started", m)
		}
		_, err = Run(context.Background(), &Spec{Argv: []string{"true"}, Tracking: m, Dir: "/nonexistent/dir"})
		if err == nil {
			t.Errorf("%s: a missing directory was accepted", m)
		}
	}
	if _, err := Run(context.Background(), &Spec{}); err == nil {
		t.Error("an empty argv ran")
	}
}

func TestReaperReportsMissingProgram(t *testing.T) {
	t.Parallel()
	res, err := Run(context.Background(), &Spec{Argv: []string{"/nonexistent/program"}, Tracking: TrackReaper, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == nil || *res.ExitCode != 127 || !strings.Contains(string(res.Stderr), "nonexistent") {
		t.Errorf("result %+v stderr %q, want exit 127 and a message", res, res.Stderr)
	}
}

func TestPrologue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		limits backend.ResourceLimits
		bash   bool
		want   string
	}{
		{backend.ResourceLimits{}, true, ""},
		{backend.ResourceLimits{CPUSeconds: -1, FileSize: -1}, true, ""},
		{backend.ResourceLimits{CPUSeconds: 35, FileSize: 1 << 30}, true, "ulimit -t 35 && ulimit -f 1048576 || exit 125"},
		{backend.ResourceLimits{CPUSeconds: 35, FileSize: 1 << 30}, false, "ulimit -t 35 && ulimit -f 2097152 || exit 125"},
		{backend.ResourceLimits{FileSize: 100}, true, "ulimit -f 1 || exit 125"},
		{backend.ResourceLimits{FileSize: 1500, AddressSpace: 1 << 20, OpenFiles: 64}, true, "ulimit -f 1 && ulimit -v 1024 && ulimit -n 64 || exit 125"},
		{backend.ResourceLimits{Processes: 10}, true, ""},
	}
	for _, tt := range tests {
		if got := Prologue(tt.limits, tt.bash); got != tt.want {
			t.Errorf("Prologue(%+v, bash=%v) = %q, want %q", tt.limits, tt.bash, got, tt.want)
		}
	}
}

func TestShellArgvAppliesLimitsBeforeTheCommand(t *testing.T) {
	t.Parallel()
	// A command cannot undo the prologue: the hard limit is set too.
	argv, err := ShellArgv("ulimit -t unlimited 2>/dev/null; ulimit -H -t", backend.ResourceLimits{CPUSeconds: 9})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), &Spec{Argv: argv, Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH")}})
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(res.Stdout)) != "9" {
		t.Errorf("hard CPU limit after trying to raise it: %q", res.Stdout)
	}
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"exit 0": "0/0", "exit 3": "3/0", "signal 9": "-/9", "": "bad", "exit": "bad", "exit -1": "bad", "weird 1": "bad", "survivors": "bad"} {
		st, ok := parseStatus([]byte(in))
		got := "bad"
		if ok {
			c := "-"
			if st.code != nil {
				c = strconv.Itoa(*st.code)
			}
			got = c + "/" + strconv.Itoa(st.signal)
		}
		if got != want {
			t.Errorf("parseStatus(%q) = %s, want %s", in, got, want)
		}
	}
}

func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{"exit 0", "signal 9", "survivors", "exit 99999999999999999999"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, ok := parseStatus(b)
		if ok && (st.code == nil) == (st.signal == 0) && !(st.code == nil && st.signal == 0) {
			t.Errorf("status %q parsed to both or neither: %+v", b, st)
		}
	})
}

func alive(pid int) bool {
	if pid <= 1 {
		return false
	}
	st, ok := reaper.Stat(pid)
	return ok && st.Session != -1
}

// TestCgroupStartFailureFallsBackToReaper runs in a child test process
// because it disables cgroup tracking for the whole process.
func TestCgroupStartFailureFallsBackToReaper(t *testing.T) {
	if got, _ := Available(); got != TrackCgroup && os.Getenv("HELIKON_TEST_FALLBACK") == "" {
		t.Skip("cgroup tracking is unavailable here")
	}
	if os.Getenv("HELIKON_TEST_FALLBACK") == "" {
		t.Parallel()
		cmd := exec.Command(os.Args[0], "-test.run=^TestCgroupStartFailureFallsBackToReaper$", "-test.v")
		cmd.Env = append(os.Environ(), "HELIKON_TEST_FALLBACK=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS") {
			t.Fatalf("child test: %v\n%s", err, out)
		}
		return
	}
	var refused bool
	res, err := Run(context.Background(), &Spec{
		Argv: []string{"sh", "-c", "echo ran"},
		Starter: startFunc(func(cmd *exec.Cmd) error {
			if cmd.SysProcAttr.UseCgroupFD {
				refused = true
				return &os.PathError{Op: "fork/exec", Path: cmd.Path, Err: syscall.ENOSYS}
			}
			return cmd.Start()
		}),
	})
	if err != nil || string(res.Stdout) != "ran\n" || !refused {
		t.Fatalf("res %+v err %v refused %v", res, err, refused)
	}
	if got, why := Available(); got != TrackReaper || !strings.Contains(why, "function not implemented") {
		t.Errorf("Available() = %s, %q after the failure", got, why)
	}
}

// startFunc is a Starter that calls itself.
type startFunc func(cmd *exec.Cmd) error

func (f startFunc) Start(cmd *exec.Cmd) error { return f(cmd) }
