// Package backendtest is the conformance suite of the [backend.Backend]
// contract: the same calls, run against every backend (host, ossandbox,
// microvm against its fake forkd controller, and any backend of your own), so that
// the Bash tool and the CLI see one behaviour whatever runs the command.
//
// It checks what the contract promises and nothing a backend may choose: a
// command's output, exit status and environment; a non-zero exit, a timeout
// and an overflowing stream are results, not errors; a timed-out command has
// no exit code; cancellation ends Run; a [backend.WorkingDir] is where
// commands start; the guarantees have a label. Containment itself is each
// backend's own attack suite's business.
package backendtest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
)

// Options tunes the suite to what a backend can do.
type Options struct {
	// TimeoutStep is the shortest timeout the backend honours (forkd counts
	// in whole seconds); zero means 200ms.
	TimeoutStep time.Duration
	// NoStreams skips the case that connects the request's own writers.
	NoStreams bool
	// RemoteDir says that the backend's [backend.WorkingDir] is a
	// directory on another machine (a container's, a microVM's): the suite
	// checks it with the command's own pwd and test, never with this
	// machine's file system.
	RemoteDir bool
}

// secretName is a variable every backend must scrub: its name marks it as a
// credential (see the backends' environment allowlists).
const secretName = "HELIKON_BACKENDTEST_API_TOKEN"

// Run runs the conformance suite against b as subtests of t. opts may be
// nil.
func Run(t *testing.T, b backend.Backend, opts *Options) {
	t.Helper()
	if opts == nil {
		opts = &Options{}
	}
	step := opts.TimeoutStep
	if step <= 0 {
		step = 200 * time.Millisecond
	}
	ctx := t.Context()
	run := func(t *testing.T, req *backend.Request) *backend.Result {
		t.Helper()
		res, err := b.Run(ctx, req)
		if err != nil {
			t.Fatalf("Run(%q %q): %v", req.Command, req.Argv, err)
		}
		return res
	}
	exit := func(t *testing.T, res *backend.Result, want int) {
		t.Helper()
		if res.ExitCode == nil || *res.ExitCode != want {
			t.Fatalf("exit code %v, want %d (stdout %q, stderr %q)", ptr(res.ExitCode), want, res.Stdout, res.Stderr)
		}
	}

	t.Run("OutputAndExit", func(t *testing.T) {
		res := run(t, &backend.Request{Command: "echo out; echo err >&2; exit 3"})
		exit(t, res, 3)
		if string(res.Stdout) != "out\n" || string(res.Stderr) != "err\n" {
			t.Errorf("stdout %q stderr %q, want \"out\\n\" \"err\\n\"", res.Stdout, res.Stderr)
		}
		if res.TimedOut || res.Truncated {
			t.Errorf("TimedOut %v Truncated %v, want both false", res.TimedOut, res.Truncated)
		}
	})
	t.Run("Argv", func(t *testing.T) {
		res := run(t, &backend.Request{Argv: []string{"sh", "-c", `printf '%s|' "$0" "$1"`, "a b", "$HOME"}})
		exit(t, res, 0)
		if got := string(res.Stdout); got != "a b|$HOME|" {
			t.Errorf("argv came through as %q, want %q (no shell between Argv and the program)", got, "a b|$HOME|")
		}
	})
	t.Run("BothCommandAndArgvIsAnError", func(t *testing.T) {
		if _, err := b.Run(ctx, &backend.Request{Command: "true", Argv: []string{"true"}}); err == nil {
			t.Error("a request with both Command and Argv ran")
		}
	})
	t.Run("SetEnv", func(t *testing.T) {
		res := run(t, &backend.Request{Command: `printf %s "$HELIKON_BACKENDTEST_VALUE"`, SetEnv: []string{"HELIKON_BACKENDTEST_VALUE=a=b c"}})
		exit(t, res, 0)
		if string(res.Stdout) != "a=b c" {
			t.Errorf("SetEnv value came through as %q", res.Stdout)
		}
	})
	t.Run("SecretsAreNotPassed", func(t *testing.T) {
		t.Setenv(secretName, "s3cret")
		res := run(t, &backend.Request{Command: "env"})
		exit(t, res, 0)
		if bytes.Contains(res.Stdout, []byte("s3cret")) {
			t.Errorf("the command saw the caller's %s", secretName)
		}
	})
	t.Run("TimeoutIsAResult", func(t *testing.T) {
		res := run(t, &backend.Request{Command: "echo started; sleep 30", Timeout: step})
		if !res.TimedOut || res.ExitCode != nil {
			t.Errorf("TimedOut %v exit %v, want true and nil", res.TimedOut, ptr(res.ExitCode))
		}
	})
	t.Run("OutputCapIsAResult", func(t *testing.T) {
		const limit = 1000
		res := run(t, &backend.Request{Command: "i=0; while [ $i -lt 400 ]; do echo 0123456789; i=$((i+1)); done", OutputCap: limit})
		exit(t, res, 0)
		if !res.Truncated || len(res.Stdout) > limit || !strings.HasPrefix(string(res.Stdout), "0123456789\n") {
			t.Errorf("Truncated %v with %d bytes starting %.20q, want true, at most %d, the first bytes", res.Truncated, len(res.Stdout), res.Stdout, limit)
		}
	})
	t.Run("CancellationEndsRun", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			res, err := b.Run(cctx, &backend.Request{Command: "sleep 30"})
			if err == nil && res.ExitCode != nil && *res.ExitCode == 0 {
				err = errCompleted
			}
			done <- err
		}()
		time.Sleep(step) // let it start; the assertion is only that Run returns
		cancel()
		if err := <-done; err == errCompleted {
			t.Error("a cancelled sleep 30 completed normally")
		}
	})
	if !opts.NoStreams {
		t.Run("OwnWriters", func(t *testing.T) {
			var out, errw bytes.Buffer
			res := run(t, &backend.Request{Command: "echo out; echo err >&2", Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errw})
			exit(t, res, 0)
			if out.String() != "out\n" || errw.String() != "err\n" || len(res.Stdout) != 0 || len(res.Stderr) != 0 {
				t.Errorf("writers got %q %q, result kept %q %q", out.String(), errw.String(), res.Stdout, res.Stderr)
			}
		})
	}
	if wd, ok := b.(backend.WorkingDir); ok {
		t.Run("StartsInItsDir", func(t *testing.T) {
			want := wd.Dir()
			if !opts.RemoteDir {
				var err error
				if want, err = filepath.EvalSymlinks(want); err != nil {
					t.Fatal(err)
				}
			}
			res := run(t, &backend.Request{Command: "pwd -P"})
			exit(t, res, 0)
			if got := strings.TrimSpace(string(res.Stdout)); got != want {
				t.Errorf("the command started in %q, Dir() is %q", got, want)
			}
			name := "backendtest-" + strings.ReplaceAll(t.Name(), "/", "-")
			res = run(t, &backend.Request{Command: "echo x > " + name})
			exit(t, res, 0)
			if opts.RemoteDir {
				res = run(t, &backend.Request{Argv: []string{"test", "-f", want + "/" + name}})
				if res.ExitCode == nil || *res.ExitCode != 0 {
					t.Errorf("a relative write did not land in Dir() %s", want)
				}
			} else if _, err := os.Stat(filepath.Join(want, name)); err != nil {
				t.Errorf("a relative write did not land in Dir(): %v", err)
			}
		})
	}
	if tl, ok := b.(backend.TimeLimited); ok {
		t.Run("ReportsItsTimeout", func(t *testing.T) {
			if tl.Timeout() <= 0 {
				t.Errorf("Timeout() = %v, want a positive limit", tl.Timeout())
			}
		})
	}
	t.Run("GuaranteesHaveALabel", func(t *testing.T) {
		if b.Guarantees().Label == "" {
			t.Error("Guarantees().Label is empty; the Bash tool shows it to the model")
		}
	})
}

var errCompleted = errors.New("completed")

func ptr(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}
