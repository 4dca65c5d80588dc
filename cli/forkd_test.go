package cli_test

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
	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/internal/forkdfake"
)

func forkdEnv(t *testing.T, vars map[string]string) *cli.Env {
	return &cli.Env{Stdin: strings.NewReader(""), Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: func(k string) string { return vars[k] }}
}

func startForkd(t *testing.T) (*forkdfake.Controller, map[string]string) {
	t.Helper()
	ctl := forkdfake.New("cli-token-XYZ")
	ctl.AddSnapshot("helikon")
	srv, err := ctl.StartTLS()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, srv.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return ctl, map[string]string{"FORKD_URL": srv.URL, "FORKD_TOKEN": "cli-token-XYZ", "FORKD_SNAPSHOT": "helikon", "FORKD_CA": ca}
}

func TestForkdReconcileCommand(t *testing.T) {
	ctl, vars := startForkd(t)
	ctl.Add(forkdfake.SandboxInfo{ID: "leaked", SnapshotTag: "helikon", CreatedAtUnix: uint64(time.Now().Add(-time.Hour).Unix())})
	ctl.Add(forkdfake.SandboxInfo{ID: "fresh", SnapshotTag: "helikon", CreatedAtUnix: uint64(time.Now().Unix())})
	ctl.Add(forkdfake.SandboxInfo{ID: "undated", SnapshotTag: "helikon"})
	env := forkdEnv(t, vars)
	code := cli.Main(context.Background(), env, []string{"forkd", "reconcile"})
	out := env.Stdout.(*bytes.Buffer).String()
	if code != 0 || strings.TrimSpace(out) != `{"scanned":3,"reaped":1,"failed":0,"skipped_unageable":1,"skipped_workspaces":0}` {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, env.Stderr.(*bytes.Buffer).String())
	}

	// A failed list is exit 1; missing configuration is 125.
	ctl.Set(func(c *forkdfake.Controller) { c.Fail = map[string]int{forkdfake.List: 500} })
	if code := cli.Main(context.Background(), forkdEnv(t, vars), []string{"forkd", "reconcile"}); code != cli.ExitOther {
		t.Errorf("failed list: exit %d", code)
	}
	env = forkdEnv(t, map[string]string{"FORKD_URL": vars["FORKD_URL"]})
	if code := cli.Main(context.Background(), env, []string{"forkd", "reconcile"}); code != cli.ExitUsage {
		t.Errorf("missing config: exit %d", code)
	}
	if msg := env.Stderr.(*bytes.Buffer).String(); !strings.Contains(msg, "FORKD_TOKEN FORKD_SNAPSHOT") {
		t.Errorf("message does not say what is missing: %s", msg)
	}
	// No subcommand, or an unknown one: the usage, on stderr.
	for _, args := range [][]string{{"forkd", "explode"}, {"forkd"}} {
		env := forkdEnv(t, vars)
		if code := cli.Main(context.Background(), env, args); code != cli.ExitUsage {
			t.Errorf("%q: exit %d", args, code)
		}
		if msg := env.Stderr.(*bytes.Buffer).String(); !strings.Contains(msg, "Usage: helikon forkd reconcile") {
			t.Errorf("%q: stderr %q, want the usage", args, msg)
		}
	}
}

func TestForkdBackendSelection(t *testing.T) {
	ctl, vars := startForkd(t)
	ctx := context.Background()
	b, err := cli.BuildBackend(ctx, forkdEnv(t, vars), t.TempDir(), &cli.BackendFlags{Name: "forkd", Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.Run(ctx, &backend.Request{Command: "echo in the vm"})
	if err != nil || string(res.Stdout) != "in the vm\n" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	if len(ctl.Live()) != 0 {
		t.Errorf("leaked %v", ctl.Live())
	}
	if g := b.Guarantees(); g.Filesystem != backend.IsolationVirtualized || g.Network != backend.IsolationNone {
		t.Errorf("guarantees %v", g)
	}

	// Fail closed: an unreachable FORKD_PROXY, --egress-allow without a
	// proxy, no configuration.
	bad := map[string]string{}
	for k, v := range vars {
		bad[k] = v
	}
	bad["FORKD_PROXY"] = "127.0.0.1:1"
	egressAllow := []string{"example.com"}
	for name, tc := range map[string]struct {
		vars  map[string]string
		flags cli.BackendFlags
	}{
		"unreachable proxy":    {bad, cli.BackendFlags{Name: "forkd"}},
		"egress without proxy": {vars, cli.BackendFlags{Name: "forkd", EgressAllow: &egressAllow}},
		"no configuration":     {map[string]string{}, cli.BackendFlags{Name: "forkd"}},
	} {
		if _, err := cli.BuildBackend(ctx, forkdEnv(t, tc.vars), t.TempDir(), &tc.flags); !errors.Is(err, backend.ErrUnavailable) {
			t.Errorf("%s: %v, want backend.ErrUnavailable", name, err)
		} else if strings.Contains(err.Error(), "cli-token-XYZ") {
			t.Errorf("%s: token in error: %v", name, err)
		}
	}
}

func TestExecWithForkdBackend(t *testing.T) {
	ctl, vars := startForkd(t)
	env := forkdEnv(t, vars)
	code := cli.Main(context.Background(), env, []string{"exec", "--backend", "forkd", "--root", t.TempDir(), "--", "sh", "-c", "echo from forkd; exit 4"})
	if code != 4 || env.Stdout.(*bytes.Buffer).String() != "from forkd\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, env.Stdout, env.Stderr)
	}
	if len(ctl.Live()) != 0 {
		t.Errorf("leaked %v", ctl.Live())
	}
}
