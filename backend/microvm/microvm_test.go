package microvm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/microvm"
	"github.com/paigasus/helikon/egress"
	"github.com/paigasus/helikon/internal/forkdfake"
)

const token = "tok-SECRET-4f9a2c"

func startTLS(t *testing.T) (*forkdfake.Controller, *forkdfake.Server) {
	return forkdfake.NewTLS(t, token, "helikon", "snap")
}

func newBackend(t *testing.T, srv *forkdfake.Server, mod func(*microvm.Options)) *microvm.Backend {
	t.Helper()
	opts := microvm.Options{URL: srv.URL, Token: token, Snapshot: "helikon", CACertPEM: srv.CAPEM, Logger: slog.New(slog.DiscardHandler)}
	if mod != nil {
		mod(&opts)
	}
	b, err := microvm.New(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRunForksExecsAndDestroys(t *testing.T) {
	c, srv := startTLS(t)
	b := newBackend(t, srv, nil)
	res, err := b.Run(context.Background(), &backend.Request{Command: "echo hello; echo oops >&2; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Stdout) != "hello\n" || string(res.Stderr) != "oops\n" || res.ExitCode == nil || *res.ExitCode != 3 || res.TimedOut {
		t.Errorf("result = %+v", res)
	}
	if got := c.Endpoints(); got != "create,exec,delete" {
		t.Errorf("calls = %s", got)
	}
	if len(c.Live()) != 0 {
		t.Errorf("microVM not destroyed: %v", c.Live())
	}

	// Argv runs without a shell; SetEnv goes through env(1).
	var stdout bytes.Buffer
	res, err = b.Run(context.Background(), &backend.Request{Argv: []string{"sh", "-c", "echo $GREETING"}, SetEnv: []string{"GREETING=hi there"}, Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "hi there\n" || len(res.Stdout) != 0 {
		t.Errorf("stdout passed = %q, captured = %q", stdout.String(), res.Stdout)
	}
	g := b.Guarantees()
	if g.Filesystem != backend.IsolationVirtualized || g.Syscalls != backend.IsolationVirtualized || g.Network != backend.IsolationNone || g.Label != microvm.Label {
		t.Errorf("guarantees = %v", g)
	}
}

func TestRunDestroysOnEveryPath(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(c *forkdfake.Controller)
		req     backend.Request
		cancel  bool // cancel the context when the exec call arrives
		wantErr string
		check   func(t *testing.T, res *backend.Result)
	}{
		{name: "exec fails", setup: func(c *forkdfake.Controller) { c.Fail = map[string]int{forkdfake.Exec: 500} }, wantErr: "controller answered 500"},
		{name: "exec malformed", setup: func(c *forkdfake.Controller) { c.Malformed = map[string]string{forkdfake.Exec: "{not json"} }, wantErr: "malformed"},
		{name: "exec wrong shape", setup: func(c *forkdfake.Controller) { c.Malformed = map[string]string{forkdfake.Exec: `{"stdout": 5}`} }, wantErr: "malformed"},
		{name: "timeout", req: backend.Request{Command: "sleep 30", Timeout: time.Second}, check: func(t *testing.T, res *backend.Result) {
			if !res.TimedOut || res.ExitCode != nil {
				t.Errorf("result = %+v, want timed out with no exit code", res)
			}
		}},
		{name: "cancelled during exec", req: backend.Request{Command: "sleep 30"}, cancel: true, wantErr: "context canceled"},
		{name: "extra sandbox in create answer", setup: func(c *forkdfake.Controller) { c.ExtraOnCreate = 1 }, wantErr: "asked for 1 sandboxes, got 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := startTLS(t)
			if tt.setup != nil {
				c.Set(tt.setup)
			}
			b := newBackend(t, srv, func(o *microvm.Options) { o.Timeout = 20 * time.Second })
			req := tt.req
			if req.Command == "" {
				req.Command = "echo hi"
			}
			ctx := context.Background()
			if tt.cancel {
				var cancel context.CancelFunc
				ctx, cancel = context.WithCancel(ctx)
				defer cancel()
				c.Set(func(c *forkdfake.Controller) {
					c.OnCall = func(endpoint string) {
						if endpoint == forkdfake.Exec {
							cancel()
						}
					}
				})
			}
			res, err := b.Run(ctx, &req)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Run = %+v, %v; want error containing %q", res, err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			default:
				tt.check(t, res)
			}
			if live := c.Live(); len(live) != 0 {
				t.Errorf("microVMs left behind: %v", live)
			}
			calls := c.Calls()
			if last := calls[len(calls)-1]; last.Endpoint != forkdfake.Delete {
				t.Errorf("last call %s, want delete", last.Endpoint)
			}
		})
	}
}

func TestOutputCap(t *testing.T) {
	_, srv := startTLS(t)
	b := newBackend(t, srv, func(o *microvm.Options) { o.OutputCap = 100 })
	res, err := b.Run(context.Background(), &backend.Request{Command: "head -c 5000 /dev/zero | tr '\\0' a; printf 'é%.0s' $(seq 200) >&2"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Stdout) != 100 || len(res.Stderr) > 100 || !utf8Valid(res.Stderr) {
		t.Errorf("truncated=%v stdout=%d stderr=%d", res.Truncated, len(res.Stdout), len(res.Stderr))
	}
}

// TestRequestCannotRaiseOutputCap: a request may lower the backend's cap,
// as with the other backends, never raise it.
func TestRequestCannotRaiseOutputCap(t *testing.T) {
	_, srv := startTLS(t)
	b := newBackend(t, srv, func(o *microvm.Options) { o.OutputCap = 100 })
	res, err := b.Run(context.Background(), &backend.Request{Command: "head -c 5000 /dev/zero | tr '\\0' a", OutputCap: 1 << 62})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Stdout) != 100 {
		t.Errorf("truncated=%v stdout=%d, want the backend's cap of 100", res.Truncated, len(res.Stdout))
	}
	res, err = b.Run(context.Background(), &backend.Request{Command: "head -c 5000 /dev/zero | tr '\\0' a", OutputCap: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || len(res.Stdout) != 10 {
		t.Errorf("truncated=%v stdout=%d, want the request's cap of 10", res.Truncated, len(res.Stdout))
	}
}

func utf8Valid(b []byte) bool { return strings.ToValidUTF8(string(b), "?") == string(b) }

func TestTokenNeverLeaks(t *testing.T) {
	c, srv := startTLS(t)
	var logs bytes.Buffer
	c.Set(func(c *forkdfake.Controller) {
		c.Fail = map[string]int{forkdfake.Exec: 500, forkdfake.Delete: 502}
		c.FailBody = "backend exploded, request had Authorization: $AUTH"
	})
	opts := microvm.Options{URL: srv.URL, Token: token, Snapshot: "helikon", CACertPEM: srv.CAPEM,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	b, err := microvm.New(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	_, runErr := b.Run(context.Background(), &backend.Request{Command: "true"})
	if runErr == nil {
		t.Fatal("want an error")
	}
	jsonOpts, _ := json.Marshal(opts)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "opts", opts, "token", opts.Token)
	outputs := []string{
		runErr.Error(), logs.String(), string(jsonOpts),
		fmt.Sprintf("%v %+v %#v %s %q %x", opts, opts, opts, opts.Token, opts.Token, opts.Token),
		fmt.Sprintf("%v %+v %#v", b, *b, b.Client()),
		fmt.Sprintf("%+v", *b.Client()),
	}
	for _, out := range outputs {
		if strings.Contains(out, token) || strings.Contains(out, "SECRET") {
			t.Errorf("token leaked in %q", out)
		}
	}
	if !strings.Contains(logs.String(), "[REDACTED]") {
		t.Errorf("the echoed header should show as [REDACTED] in the destroy log: %s", logs.String())
	}

	// A wrong token: the error says what to check, without the token.
	bad := newBackend(t, srv, func(o *microvm.Options) { o.Token = "wrong-" + token })
	_, err = bad.Run(context.Background(), &backend.Request{Command: "true"})
	if err == nil || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "FORKD_TOKEN") || strings.Contains(err.Error(), token) {
		t.Errorf("wrong token: %v", err)
	}
}

func TestReconcile(t *testing.T) {
	c, srv := startTLS(t)
	now := time.Unix(1_800_000_000, 0)
	age := 5 * time.Minute
	ts := func(d time.Duration) uint64 { return uint64(now.Add(-d).Unix()) }
	for _, e := range []forkdfake.SandboxInfo{
		{ID: "old-1", SnapshotTag: "helikon", CreatedAtUnix: ts(time.Hour)},
		{ID: "old-2", SnapshotTag: "helikon", CreatedAtUnix: ts(age + time.Second)},
		{ID: "old-fails", SnapshotTag: "helikon", CreatedAtUnix: ts(time.Hour)},
		{ID: "exactly-at-age", SnapshotTag: "helikon", CreatedAtUnix: ts(age)},
		{ID: "young", SnapshotTag: "helikon", CreatedAtUnix: ts(time.Second)},
		{ID: "other-tag", SnapshotTag: "other", CreatedAtUnix: ts(time.Hour)},
		{ID: "no-time", SnapshotTag: "helikon"},
	} {
		c.Add(e)
	}
	// A workspace's microVM outlives commands by design: not a leak.
	wsID := "held-by-workspace"
	c.AddWorkspace(forkdfake.WorkspaceInfo{Name: "ws", SourceSnapshotTag: "helikon", Status: "running", LiveSandboxID: &wsID, CreatedAtUnix: ts(time.Hour)})
	c.Set(func(c *forkdfake.Controller) { c.FailDeleteIDs = map[string]bool{"old-fails": true} })
	b := newBackend(t, srv, func(o *microvm.Options) { o.Now = func() time.Time { return now }; o.ReapConcurrency = 2 })
	rep, err := b.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := microvm.ReconcileReport{Scanned: 8, Reaped: 2, Failed: 1, SkippedUnageable: 1, SkippedWorkspaces: 1}
	if rep != want {
		t.Errorf("report = %+v, want %+v", rep, want)
	}
	if got := strings.Join(c.Live(), ","); got != "exactly-at-age,held-by-workspace,no-time,old-fails,other-tag,young" {
		t.Errorf("left alive: %s", got)
	}
	js, _ := json.Marshal(rep)
	if string(js) != `{"scanned":8,"reaped":2,"failed":1,"skipped_unageable":1,"skipped_workspaces":1}` {
		t.Errorf("JSON = %s", js)
	}

	// Only a failed list is an error.
	for _, ep := range []string{forkdfake.List, forkdfake.ListWorkspaces} {
		c.Set(func(c *forkdfake.Controller) { c.Fail = map[string]int{ep: 500} })
		if _, err := b.Reconcile(context.Background()); err == nil {
			t.Errorf("failed %s must be an error", ep)
		}
	}
}

// TestListReadsCreationTimeLeniently: created_at_unix is a u64 from the
// controller, but an unusable value must make the entry unageable (left
// alone by Reconcile), never old.
// TestWireFormat pins the controller's wire format as forkd's docs/API.md
// and its controller's handlers define it (the fake follows them): the
// request bodies the client sends, and the answers it must read. The
// client before this test read create's answer as {"sandboxes": [...]}
// and failed on the controller's bare array.
// TestControllerErrors: each documented error status reaches the caller
// as an APIError carrying the controller's {"error": ...} message, and a
// 404 matches ErrNotFound.
// TestExecReportsWhatTheGuestAgentReports: death by signal is exit code
// -N; a program that cannot start is exit 1 at once, not a timeout.
func TestExecReportsWhatTheGuestAgentReports(t *testing.T) {
	_, srv := startTLS(t)
	b := newBackend(t, srv, nil)
	res, err := b.Run(context.Background(), &backend.Request{Command: "kill -TERM $$"})
	if err != nil || res.Signal != 15 || res.ExitCode != nil || res.TimedOut {
		t.Errorf("killed by SIGTERM: %+v, %v", res, err)
	}
	res, err = b.Run(context.Background(), &backend.Request{Argv: []string{"/nonexistent/program"}, Timeout: time.Second})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 1 || res.TimedOut {
		t.Errorf("program that cannot start: %+v, %v", res, err)
	}
}

// TestReconcileReapsLeakFromCommittedCreate: a create that commits on the
// controller but fails on the wire leaks a microVM the client has no id
// for; Reconcile finds it by age.
func TestReconcileReapsLeakFromCommittedCreate(t *testing.T) {
	c, srv := startTLS(t)
	c.Set(func(c *forkdfake.Controller) { c.CreateCommitsThenFails = true })
	b := newBackend(t, srv, nil)
	if _, err := b.Run(context.Background(), &backend.Request{Command: "true"}); err == nil {
		t.Fatal("want the create error")
	}
	if len(c.Live()) != 1 {
		t.Fatalf("expected one leaked microVM, have %v", c.Live())
	}
	later := newBackend(t, srv, func(o *microvm.Options) { o.Now = func() time.Time { return time.Now().Add(time.Hour) } })
	rep, err := later.Reconcile(context.Background())
	if err != nil || rep.Reaped != 1 || len(c.Live()) != 0 {
		t.Errorf("Reconcile = %+v, %v; live %v", rep, err, c.Live())
	}
}

func TestEnforceEgress(t *testing.T) {
	_, srv := startTLS(t)
	// A real egress proxy.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &egress.Proxy{Filter: egress.DenyAll().AllowDomains("example.com"), Logger: slog.New(slog.DiscardHandler)}
	go p.Serve(ln)
	t.Cleanup(func() { p.Shutdown(context.Background()) })
	pol := egress.DenyAll().AllowDomains("example.com")

	b := newBackend(t, srv, func(o *microvm.Options) { o.EnforceEgress = ln.Addr().String(); o.Egress = &pol })
	g := b.Guarantees()
	if g.Network != backend.IsolationProxied {
		t.Fatalf("network = %v, want proxied", g.Network)
	}
	if !strings.Contains(strings.Join(g.Features, ";"), "allow example.com") {
		t.Errorf("features = %v", g.Features)
	}
	res, err := b.Run(context.Background(), &backend.Request{Command: "echo $HTTPS_PROXY"})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "http://"+ln.Addr().String() {
		t.Errorf("HTTPS_PROXY in the microVM = %q, %v", res.Stdout, err)
	}

	// Fail closed: nothing listening, something that is not a proxy, and an
	// open proxy that tunnels anywhere.
	dead, _ := net.Listen("tcp", "127.0.0.1:0")
	deadAddr := dead.Addr().String()
	dead.Close()
	notProxy := serveRaw(t, "SSH-2.0-OpenSSH_9.6\r\n")
	openProxy := serveRaw(t, "HTTP/1.1 200 Connection established\r\n\r\n")
	for name, ep := range map[string]string{"unreachable": deadAddr, "not a proxy": notProxy, "open proxy": openProxy, "bad endpoint": "no-port"} {
		_, err := microvm.New(context.Background(), &microvm.Options{URL: srv.URL, Token: token, Snapshot: "s", CACertPEM: srv.CAPEM, EnforceEgress: ep})
		if err == nil {
			t.Errorf("%s: New succeeded; it must fail closed", name)
		} else if name != "bad endpoint" && !errors.Is(err, backend.ErrUnavailable) {
			t.Errorf("%s: %v does not wrap backend.ErrUnavailable", name, err)
		}
	}
}

// serveRaw answers every connection with reply after reading a little.
func serveRaw(t *testing.T, reply string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 1024)
				c.Read(buf)
				c.Write([]byte(reply))
			}()
		}
	}()
	return ln.Addr().String()
}

func ExampleNew() {
	// A fake controller stands in for forkd here; in production the URL is
	// https://controller:8889 and the token comes from FORKD_TOKEN.
	ctl := forkdfake.New("example-token")
	ctl.AddSnapshot("helikon")
	srv := ctl.Start()
	defer srv.Close()

	b, err := microvm.New(context.Background(), &microvm.Options{
		URL:      srv.URL,
		Token:    "example-token",
		Snapshot: "helikon",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := b.Run(context.Background(), &backend.Request{Command: "echo hello from the microvm"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(res.Stdout))
	fmt.Println(b.Guarantees().Network, len(ctl.Live()))
	// Output:
	// hello from the microvm
	// none 0
}

var _ http.Handler = forkdfake.New("").Handler()

// TestErrorsMatchThisPackagesNames: a user configures the backend and
// branches on its errors with this package's names only (the client is
// internal): an unreachable controller, a refused answer, an insecure URL.
func TestErrorsMatchThisPackagesNames(t *testing.T) {
	c, srv := startTLS(t)
	b := newBackend(t, srv, nil)
	c.Set(func(c *forkdfake.Controller) { c.Fail = map[string]int{forkdfake.Create: 404} })
	_, err := b.Run(context.Background(), &backend.Request{Command: "true"})
	var ae *microvm.APIError
	if !errors.As(err, &ae) || ae.Status != 404 || !errors.Is(err, microvm.ErrNotFound) {
		t.Errorf("refused create: %v, want a microvm.APIError matching microvm.ErrNotFound", err)
	}
	if _, err := b.RunIn(context.Background(), "sb-gone", "", &backend.Request{Command: "true"}); !errors.Is(err, microvm.ErrNotFound) {
		t.Errorf("RunIn of an unknown sandbox: %v, want microvm.ErrNotFound", err)
	}
	srv.Close()
	_, err = b.Run(context.Background(), &backend.Request{Command: "true"})
	if !errors.Is(err, microvm.ErrUnreachable) || !errors.Is(err, backend.ErrUnavailable) {
		t.Errorf("stopped controller: %v, want microvm.ErrUnreachable and backend.ErrUnavailable", err)
	}
	_, err = microvm.New(context.Background(), &microvm.Options{URL: "http://forkd.example:8889", Token: microvm.Token(token), Snapshot: "helikon"})
	if !errors.Is(err, microvm.ErrInsecureURL) {
		t.Errorf("plain http to a remote host: %v, want microvm.ErrInsecureURL", err)
	}
}
