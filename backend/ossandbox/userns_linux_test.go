//go:build linux

package ossandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
)

// launcherBackend returns a backend whose commands start through the
// launcher, or skips (root callers use the confining thread; the launcher
// needs user namespaces).
func launcherBackend(t *testing.T) *Backend {
	t.Helper()
	if isRoot() {
		t.Skip("root callers do not use the launcher; run the test binary as an unprivileged user")
	}
	b, _ := newTestBackend(t, Options{})
	if !b.userns {
		t.Skipf("user namespaces are unavailable here: %s", b.usernsWhy)
	}
	return b
}

// TestLauncherFailsClosed breaks the launcher after its namespaces exist:
// the command must not run, and Run must fail with ErrUnavailable.
func TestLauncherFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		name   string
		break_ func(b *Backend)
	}{
		// landlock.Build fails in the launcher: a required path is missing.
		{"landlock ruleset", func(b *Backend) { b.readPaths = append(b.readPaths, "/nonexistent-helikon-read-path") }},
		// DropCapabilities fails on the confining thread, before the fork.
		{"capability drop", func(b *Backend) { b.lastCap = 4096 }},
		// seccomp refuses an empty filter on the confining thread.
		{"seccomp", func(b *Backend) { b.filter, b.serverFilter = nil, nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := launcherBackend(t)
			tc.break_(b)
			marker := filepath.Join(b.Dir(), "ran")
			res, err := b.Run(context.Background(), &backend.Request{Argv: []string{"/usr/bin/touch", marker}})
			if !errors.Is(err, backend.ErrUnavailable) {
				t.Fatalf("Run = %+v, %v; want an error wrapping ErrUnavailable", res, err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran although its launcher failed")
			}
			t.Logf("refused: %v", err)
		})
	}
}

// TestLauncherViewIsPrivate: the read-only view exists only in the
// command's namespace; the caller's temporary directory stays writable.
func TestLauncherViewIsPrivate(t *testing.T) {
	b := launcherBackend(t)
	res, err := b.Run(context.Background(), &backend.Request{Command: "touch ok && cat /proc/self/mountinfo"})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if !strings.Contains(string(res.Stdout), " ro,") && !strings.Contains(string(res.Stdout), " ro ") {
		t.Errorf("no read-only mount in the command's view:\n%s", res.Stdout)
	}
	if b.tmpRW && !mountWritable(os.TempDir()) {
		t.Error("the caller's temporary directory became read-only")
	}
	if err := unix.Access(os.TempDir(), unix.W_OK); err != nil {
		t.Errorf("the caller cannot write its temporary directory any more: %v", err)
	}
}

// TestNoUserNamespaceFallback: without user namespaces an unprivileged
// caller keeps Landlock and seccomp, and the guarantees say that metadata
// is not covered.
func TestNoUserNamespaceFallback(t *testing.T) {
	if isRoot() {
		t.Skip("root callers do not use the launcher; run the test binary as an unprivileged user")
	}
	launcherUnavailable = unix.EPERM
	defer func() { launcherUnavailable = nil }()
	b, _ := newTestBackend(t, Options{})
	if b.userns {
		t.Fatal("the launcher is used although user namespaces failed")
	}
	found := false
	for _, f := range b.Guarantees().Features {
		if strings.Contains(f, "NOT confined") && strings.Contains(f, "not permitted") {
			found = true
		}
	}
	if !found {
		t.Errorf("guarantees do not say that metadata is not confined: %q", b.Guarantees().Features)
	}
	got := sandboxed(t, b, nil, "write", filepath.Join(t.TempDir(), "x"))
	if got.code != attackBlocked {
		t.Errorf("write outside without the launcher: %v; want blocked", got)
	}
}

// unsettledBackend returns a settled launcher backend and one New just made
// on the same root and options, or skips as launcherBackend does.
func unsettledBackend(t *testing.T) (settled, b *Backend) {
	t.Helper()
	settled = launcherBackend(t)
	b, err := New(settled.Dir(), &settled.opts)
	if err != nil {
		t.Fatal(err)
	}
	return settled, b
}

// TestFirstCommandSettlesLauncher: New leaves an unprivileged caller's
// launcher unprobed; the first command starts through the strongest
// configuration and settles it, with nothing of the trial in its output,
// and the guarantees then are those New's probe would have given.
func TestFirstCommandSettlesLauncher(t *testing.T) {
	settled, b := unsettledBackend(t)
	if !b.view().unsettled {
		t.Fatal("New probed the launcher")
	}
	res, err := b.Run(context.Background(), &backend.Request{Command: "touch ok; touch /etc/helikon-test 2>/dev/null || echo refused"})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if string(res.Stdout) != "refused\n" || len(res.Stderr) != 0 {
		t.Errorf("stdout %q, stderr %q; want the write outside refused, and nothing else", res.Stdout, res.Stderr)
	}
	if v := b.view(); v.unsettled || !v.userns {
		t.Errorf("after the first command: %+v; want the launcher settled", v)
	}
	if got, want := b.Guarantees().Features, settled.Guarantees().Features; !slices.Equal(got, want) {
		t.Errorf("guarantees after the first command:\n%q\nwant New's:\n%q", got, want)
	}
}

// TestFirstCommandFallsBack: when the launcher cannot start the first
// command (here its capability drop fails, in every configuration), the
// first command probes as New did and runs with what works, which here is
// no launcher, as New would have chosen; nothing of the failed try is in
// its output.
func TestFirstCommandFallsBack(t *testing.T) {
	_, b := unsettledBackend(t)
	b.lastCap = 4096                // the launcher's capability drop fails in every configuration
	var stdout, stderr bytes.Buffer // passed through, as helikon exec passes its own
	_, err := b.Run(context.Background(), &backend.Request{Command: "echo ran", Stdout: &stdout, Stderr: &stderr})
	if err != nil || stdout.String() != "ran\n" || stderr.Len() != 0 {
		t.Fatalf("Run: %v, stdout %q, stderr %q; want the command run once, quietly", err, stdout.String(), stderr.String())
	}
	if v := b.view(); v.unsettled || v.userns {
		t.Errorf("after the first command: %+v; want settled without the launcher, as New would have", v)
	}
	found := false
	for _, f := range b.Guarantees().Features {
		found = found || strings.Contains(f, "NOT confined")
	}
	if !found {
		t.Errorf("the guarantees do not say the read-only view is missing: %q", b.Guarantees().Features)
	}
}
