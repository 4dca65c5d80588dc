package ossandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
)

// TestProcessStaysConfinedForItsWholeLife is the attack of a process that
// waits until it was started and then writes outside the root: the write
// must fail as it fails for a command of Run.
func TestProcessStaysConfinedForItsWholeLife(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	outside := filepath.Join(os.TempDir(), "helikon-process-escape-"+filepath.Base(t.TempDir()))
	t.Cleanup(func() { os.Remove(outside) })
	p, err := b.Start(t.Context(), &backend.StartRequest{Request: backend.Request{
		Command: `read go; echo escaped > ` + outside + ` && echo wrote || echo refused`}})
	if err != nil {
		t.Fatal(err)
	}
	p.Input().Write([]byte("go\n"))
	ctx, cancel := context.WithTimeout(t.Context(), 20e9)
	defer cancel()
	if _, err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	out := p.Output().Read(0, 0)
	if _, err := os.Stat(outside); err == nil {
		t.Fatalf("a started process wrote outside its root (%s): %q", outside, out.Data)
	}
	t.Logf("output: %q", out.Data)
}

// TestAttackTerminalIoctlsOfAStartedProcess runs, on the terminal that
// Start makes for a process (TTY), the ioctls that type into a terminal or
// reach the console: the sandboxed process gets EPERM for each, the same
// program started on the host backend reaches the terminal's driver.
func TestAttackTerminalIoctlsOfAStartedProcess(t *testing.T) {
	b, _ := newTestBackend(t, Options{})
	hb, err := host.New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		b    backend.Starter
		want int
	}{
		{"sandboxed", b, attackBlocked},
		{"control (host)", hb, attackEscaped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := tc.b.Start(t.Context(), &backend.StartRequest{
				Request: backend.Request{Argv: []string{attackBin(t), "tty-ioctls"}, SetEnv: []string{attackEnv + "=1"}},
				TTY:     &backend.TermSize{Rows: 24, Cols: 80},
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			res, err := p.Wait(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out := p.Output().Read(0, 0).Data
			if res.ExitCode == nil || *res.ExitCode != tc.want {
				t.Errorf("result %+v, want exit %d: %q", *res, tc.want, out)
			}
			t.Logf("%q", out)
		})
	}
}
