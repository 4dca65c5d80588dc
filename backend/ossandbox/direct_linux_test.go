//go:build linux

package ossandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
)

// directPair returns two sandboxes on one root: one that takes the direct
// path for literal commands, one that runs every command line through
// bash; it skips where the direct path is not taken (unprivileged callers
// without the long-lived launcher, whose limits come from the shell's
// ulimit).
func directPair(t *testing.T) (direct, bash *Backend) {
	t.Helper()
	direct, _ = newTestBackend(t, Options{})
	if !(direct.traceMe || direct.server && direct.serverTraceMe) || direct.tmpBase == "" {
		t.Skip("the direct path needs limits set at exec and the tmpfs (a root caller or the long-lived launcher, Yama permitting)")
	}
	opts := direct.opts
	bash, err := New(direct.Dir(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bash.Close() })
	bash.noDirect = true
	// One session home for both, so that HOME is alike.
	if bash.home != nil {
		bash.home.remove()
		bash.home = direct.home
	}
	return direct, bash
}

func describeResult(r *backend.Result) string {
	code := "null"
	if r.ExitCode != nil {
		code = strconv.Itoa(*r.ExitCode)
	}
	return "exit " + code + " signal " + strconv.Itoa(r.Signal) + " timed out " + strconv.FormatBool(r.TimedOut) +
		"\nstdout " + strconv.Quote(string(r.Stdout)) + "\nstderr " + strconv.Quote(string(r.Stderr))
}

// TestDirectMatchesBash is the OS sandbox's differential test of the direct
// path: each command runs through the direct path (where it must qualify)
// and through bash in the sandbox, and stdout, stderr, exit status and
// signal must be identical: the environment, the limits, the namespaces
// (the command is its pid namespace's first process either way), the view
// of the filesystem and the refusals alike.
func TestDirectMatchesBash(t *testing.T) {
	d, b := directPair(t)
	if err := os.WriteFile(filepath.Join(d.Dir(), "f"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		command string
		direct  bool
	}{
		{"true", true},
		{"false", true},
		{"env", true},
		{"cat /proc/self/limits", true},
		{"ls -la f", true},
		{"sh -c 'echo $0 $$ $PPID; id -u; ulimit -t; ulimit -f; ulimit -n'", true},
		{"touch /etc/helikon-direct-test", true},  // read-only view
		{"cat /root/.bashrc", true},               // Landlock
		{"sh -c 'kill -9 $$'", true},              // a signal
		{"sh -c 'exit 3'", true},                  // a status
		{"no-such-program-helikon", false},        // bash reports it
		{"echo $HOME", false},                     // an expansion
		{"cd / && pwd", false},                    // a builtin and an operator
		{"/usr/bin/env -u PWD sh -c 'pwd'", true}, // the working directory
		{`sh -c 'cat /proc/1/comm; [ "$(readlink /proc/self/ns/pid)" = "$(readlink /proc/1/ns/pid)" ] && echo shared || echo own'`, true}, // the pid namespace (a process count would race with the machine's)
	} {
		t.Run(tt.command, func(t *testing.T) {
			// A PATH every caller can search (runuser keeps root's, whose
			// /root elements an unprivileged bash cannot stat: the
			// direct path then rightly leaves the search to bash).
			req := func() *backend.Request {
				return &backend.Request{Command: tt.command, SetEnv: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}}
			}
			before := d.directRuns.Load()
			got, err := d.Run(context.Background(), req())
			if err != nil {
				t.Fatal(err)
			}
			if took := d.directRuns.Load() > before; took != tt.direct {
				t.Errorf("took the direct path: %v, want %v", took, tt.direct)
			}
			want, err := b.Run(context.Background(), req())
			if err != nil {
				t.Fatal(err)
			}
			if g, w := describeResult(got), describeResult(want); g != w {
				t.Errorf("direct path:\n%s\nbash:\n%s", g, w)
			}
		})
	}
}

// TestDirectFallsBackWhenNotExecutable: a program the host may execute but
// the sandbox may not (outside the readable paths) is refused at exec on
// the direct path; bash then runs the command line and reports as bash
// does, and nothing runs unconfined.
func TestDirectFallsBackWhenNotExecutable(t *testing.T) {
	d, b := directPair(t)
	dir := t.TempDir() // outside the root and the read paths
	prog := filepath.Join(dir, "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := d.Run(context.Background(), &backend.Request{Command: prog})
	if err != nil {
		t.Fatal(err)
	}
	want, err := b.Run(context.Background(), &backend.Request{Command: prog})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(got.Stdout), "ran") || describeResult(got) != describeResult(want) {
		t.Errorf("direct path:\n%s\nbash:\n%s", describeResult(got), describeResult(want))
	}
}
