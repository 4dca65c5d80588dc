package forkdapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/internal/forkdapi"
	"github.com/paigasus/helikon/internal/forkdfake"
)

const token = "tok-SECRET-4f9a2c"

func startTLS(t *testing.T) (*forkdfake.Controller, *forkdfake.Server) {
	return forkdfake.NewTLS(t, token, "helikon", "snap")
}

// newClient is a client of srv that trusts its CA.
func newClient(t *testing.T, srv *forkdfake.Server) *forkdapi.Client {
	t.Helper()
	cl, err := forkdapi.NewClient(srv.URL, forkdapi.ClientOptions{Token: token, CACertPEM: srv.CAPEM})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func TestEveryEndpointSendsBearerToken(t *testing.T) {
	c, srv := startTLS(t)
	cl, err := forkdapi.NewClient(srv.URL, forkdapi.ClientOptions{Token: token, CACertPEM: srv.CAPEM})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	boxes, err := cl.Create(ctx, forkdapi.CreateRequest{SnapshotTag: "snap", N: 2})
	if err != nil || len(boxes) != 2 {
		t.Fatalf("Create = %v, %v", boxes, err)
	}
	if got, err := cl.Get(ctx, boxes[1].ID); err != nil || got != boxes[1] {
		t.Errorf("Get = %+v, %v; want %+v", got, err, boxes[1])
	}
	res, err := cl.Exec(ctx, boxes[0].ID, []string{"sh", "-c", "echo out; echo err >&2; exit 7"}, 5, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "out\n" || res.Stderr != "err\n" || res.ExitCode != 7 {
		t.Errorf("Exec = %+v", res)
	}
	list, err := cl.List(ctx)
	if err != nil || len(list) != 2 || list[0].SnapshotTag != "snap" || list[0].CreatedAt.IsZero() {
		t.Fatalf("List = %+v, %v", list, err)
	}
	for _, b := range boxes {
		if err := cl.Delete(ctx, b.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.Delete(ctx, boxes[0].ID); err != nil {
		t.Errorf("Delete of a gone sandbox (404) = %v, want nil", err)
	}
	calls := c.Calls()
	if got := c.Endpoints(); got != "create,get,exec,list,delete,delete,delete" {
		t.Errorf("calls = %s", got)
	}
	for _, call := range calls {
		if call.Auth != "Bearer "+token {
			t.Errorf("%s %s: Authorization %q", call.Method, call.Path, call.Auth)
		}
	}
	if len(c.Live()) != 0 {
		t.Errorf("live sandboxes: %v", c.Live())
	}
}

func TestControllerURLRules(t *testing.T) {
	for _, tt := range []struct {
		url string
		ok  bool
	}{
		{"https://forkd.example:8889", true},
		{"https://forkd.example:8889/base/", true},
		{"http://127.0.0.1:8889", true},
		{"http://[::1]:8889", true},
		{"http://localhost:8889", true},
		{"http://forkd.example:8889", false},
		{"http://10.0.0.5:8889", false},
		{"ftp://forkd.example", false},
		{"https://user:pw@forkd.example", false},
		{"https://forkd.example/?x=1", false},
		{"forkd.example:8889", false},
		{"", false},
	} {
		_, err := forkdapi.NewClient(tt.url, forkdapi.ClientOptions{Token: token})
		if (err == nil) != tt.ok {
			t.Errorf("NewClient(%q) = %v, want ok=%v", tt.url, err, tt.ok)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("NewClient(%q) error leaks the password: %v", tt.url, err)
		}
	}
	_, err := forkdapi.NewClient("http://forkd.example", forkdapi.ClientOptions{})
	if !errors.Is(err, forkdapi.ErrInsecureURL) {
		t.Errorf("plain http to a remote host: %v, want ErrInsecureURL", err)
	}
}

func TestTLSVerification(t *testing.T) {
	_, srv := startTLS(t)
	otherCA, _, err := forkdfake.NewCA("another CA", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		ca   []byte
		ok   bool
	}{
		{"pinned CA", srv.CAPEM, true},
		{"system roots", nil, false},
		{"wrong CA", otherCA, false},
	} {
		cl, err := forkdapi.NewClient(srv.URL, forkdapi.ClientOptions{Token: token, CACertPEM: tt.ca})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.List(ctx)
		if (err == nil) != tt.ok {
			t.Errorf("%s: List = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "certificate") {
			t.Errorf("%s: error %v does not mention the certificate", tt.name, err)
		}
	}
	if _, err := forkdapi.NewClient(srv.URL, forkdapi.ClientOptions{CACertPEM: []byte("not pem")}); err == nil {
		t.Error("a CA file without certificates must be refused")
	}
}

func TestSlowAndFailingController(t *testing.T) {
	c, srv := startTLS(t)
	cl, err := forkdapi.NewClient(srv.URL, forkdapi.ClientOptions{Token: token, CACertPEM: srv.CAPEM, APITimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c.Set(func(c *forkdfake.Controller) { c.Delay = map[string]time.Duration{forkdfake.List: time.Minute} })
	if _, err := cl.List(ctx); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("slow list: %v", err)
	}
	// The rest uses a client with the default API timeout, so that a loaded
	// machine cannot turn a failure under test into a timeout.
	cl, err = forkdapi.NewClient(srv.URL, forkdapi.ClientOptions{Token: token, CACertPEM: srv.CAPEM})
	if err != nil {
		t.Fatal(err)
	}
	c.Set(func(c *forkdfake.Controller) { c.Delay = nil; c.Fail = map[string]int{forkdfake.Create: 503} })
	_, err = cl.Create(ctx, forkdapi.CreateRequest{SnapshotTag: "snap"})
	var ae *forkdapi.APIError
	if !errors.As(err, &ae) || ae.Status != 503 || !strings.Contains(err.Error(), "retry later") {
		t.Errorf("failing create: %v", err)
	}
	for _, body := range []string{"[]", "null", `[{"id":""}]`, `[{"id":"../../etc"}]`, "<html>", `[{"id":"a"},{"id":"b"}]`, `{"sandboxes":[{"id":"a"}]}`, `{"id":"a"}`} {
		c.Set(func(c *forkdfake.Controller) { c.Fail = nil; c.Malformed = map[string]string{forkdfake.Create: body} })
		if _, err := cl.Create(ctx, forkdapi.CreateRequest{SnapshotTag: "snap"}); !errors.Is(err, forkdapi.ErrMalformedResponse) {
			t.Errorf("create answered %s: %v, want ErrMalformedResponse", body, err)
		}
	}
	for _, body := range []string{"{", `{"sandboxes": []}`, `"x"`, `{}`} {
		c.Set(func(c *forkdfake.Controller) { c.Malformed = map[string]string{forkdfake.List: body} })
		if _, err := cl.List(ctx); !errors.Is(err, forkdapi.ErrMalformedResponse) {
			t.Errorf("list answered %s: %v, want ErrMalformedResponse", body, err)
		}
	}
}

func TestListReadsCreationTimeLeniently(t *testing.T) {
	c, srv := startTLS(t)
	c.Set(func(c *forkdfake.Controller) {
		c.Malformed = map[string]string{forkdfake.List: `[{"id":"a","created_at_unix":"1700000000"},{"id":"b","created_at_unix":null},{"id":"c","created_at_unix":-5},{"id":"d"},{"id":"e","created_at_unix":1700000000.5}]`}
	})
	list, err := newClient(t, srv).List(context.Background())
	if err != nil || len(list) != 5 {
		t.Fatalf("List = %+v, %v", list, err)
	}
	for _, s := range list[:4] {
		if !s.CreatedAt.IsZero() {
			t.Errorf("%s: CreatedAt = %v, want zero", s.ID, s.CreatedAt)
		}
	}
	if list[4].CreatedAt.Unix() != 1700000000 {
		t.Errorf("fractional time read as %v", list[4].CreatedAt)
	}
}

func TestWireFormat(t *testing.T) {
	c, srv := startTLS(t)
	c.Set(func(c *forkdfake.Controller) { c.Now = func() time.Time { return time.Unix(1_717_000_123, 0) } })
	cl := newClient(t, srv)
	ctx := context.Background()
	boxes, err := cl.Create(ctx, forkdapi.CreateRequest{SnapshotTag: "snap", N: 1, PerChildNetns: true, MemoryLimitMiB: 256})
	if err != nil || len(boxes) != 1 {
		t.Fatalf("Create = %+v, %v", boxes, err)
	}
	got := boxes[0]
	if !strings.HasPrefix(got.ID, "sb-") || got.SnapshotTag != "snap" || got.Netns != "forkd-child-1" || got.GuestAddr != "10.42.0.2:8888" ||
		got.CreatedAt.Unix() != 1_717_000_123 || got.PID == 0 || got.MemoryLimitMiB != 256 {
		t.Errorf("created %+v", got)
	}
	calls := c.Calls()
	if body := string(calls[0].Body); body != `{"snapshot_tag":"snap","n":1,"per_child_netns":true,"memory_limit_mib":256}` {
		t.Errorf("create body %s", body)
	}
	if _, err := cl.Exec(ctx, got.ID, []string{"true"}, 7, 1<<20); err != nil {
		t.Fatal(err)
	}
	if body := string(c.Calls()[1].Body); body != `{"args":["true"],"timeout_secs":7}` {
		t.Errorf("exec body %s", body)
	}
	// exit_code is a number the controller always sends.
	for _, body := range []string{`{"stdout":"","stderr":""}`, `{"stdout":"","stderr":"","exit_code":null}`, `{"stdout":"","exit_code":0}`, `{"stdout":"","stderr":"","exit_code":"0"}`} {
		c.Set(func(c *forkdfake.Controller) { c.Malformed = map[string]string{forkdfake.Exec: body} })
		if _, err := cl.Exec(ctx, got.ID, []string{"true"}, 7, 1<<20); !errors.Is(err, forkdapi.ErrMalformedResponse) {
			t.Errorf("exec answered %s: %v, want ErrMalformedResponse", body, err)
		}
	}
}

func TestControllerErrors(t *testing.T) {
	c, srv := startTLS(t)
	c.AddUnbootableSnapshot("broken", "missing memory.bin")
	cl := newClient(t, srv)
	ctx := context.Background()
	box, err := cl.Create(ctx, forkdapi.CreateRequest{SnapshotTag: "snap"})
	if err != nil {
		t.Fatal(err)
	}
	id := box[0].ID
	if _, err := cl.CreateWorkspace(ctx, forkdapi.WorkspaceRequest{Name: "taken", SnapshotTag: "snap"}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		call    func() error
		status  int
		message string
	}{
		{"unknown snapshot", func() error { _, err := cl.Create(ctx, forkdapi.CreateRequest{SnapshotTag: "nope"}); return err }, 404, "snapshot nope not found"},
		{"unbootable snapshot", func() error { _, err := cl.Create(ctx, forkdapi.CreateRequest{SnapshotTag: "broken"}); return err }, 409, "not bootable: missing memory.bin"},
		{"too many", func() error {
			_, err := cl.Create(ctx, forkdapi.CreateRequest{SnapshotTag: "snap", N: 1001})
			return err
		}, 400, "n must be ≤ 1000"},
		{"unsafe tag", func() error { _, err := cl.Create(ctx, forkdapi.CreateRequest{SnapshotTag: "../etc"}); return err }, 400, "snapshot_tag must be"},
		{"exec unknown sandbox", func() error { _, err := cl.Exec(ctx, "sb-gone", []string{"true"}, 1, 1<<20); return err }, 404, "sandbox sb-gone not found"},
		{"exec without args", func() error { _, err := cl.Exec(ctx, id, []string{}, 1, 1<<20); return err }, 400, "args must contain at least one element"},
		{"get unknown sandbox", func() error { _, err := cl.Get(ctx, "sb-gone"); return err }, 404, "sandbox sb-gone not found"},
		{"workspace name taken", func() error {
			_, err := cl.CreateWorkspace(ctx, forkdapi.WorkspaceRequest{Name: "taken", SnapshotTag: "snap"})
			return err
		}, 409, "workspace taken already exists"},
		{"workspace unknown", func() error { _, err := cl.GetWorkspace(ctx, "nope"); return err }, 404, "workspace nope not found"},
		{"restore fails", func() error {
			c.Set(func(c *forkdfake.Controller) { c.CreateCommitsThenFails = true })
			defer c.Set(func(c *forkdfake.Controller) { c.CreateCommitsThenFails = false })
			_, err := cl.Create(ctx, forkdapi.CreateRequest{SnapshotTag: "snap"})
			return err
		}, 500, "restore_many"},
	} {
		err := tt.call()
		var ae *forkdapi.APIError
		if !errors.As(err, &ae) || ae.Status != tt.status || !strings.Contains(ae.Message, tt.message) {
			t.Errorf("%s: %v, want status %d with %q", tt.name, err, tt.status, tt.message)
		}
		if errors.Is(err, forkdapi.ErrNotFound) != (tt.status == 404) {
			t.Errorf("%s: errors.Is(err, ErrNotFound) = %v", tt.name, !(tt.status == 404))
		}
	}
	// Deleting what is gone is not an error (404 counts as gone).
	if err := cl.Delete(ctx, "sb-gone"); err != nil {
		t.Errorf("Delete of an unknown sandbox: %v", err)
	}
	if err := cl.DeleteWorkspace(ctx, "nope"); err != nil {
		t.Errorf("DeleteWorkspace of an unknown workspace: %v", err)
	}
}

// TestTokenNeverLeaks: the token is shown as [REDACTED] however it or the
// client is printed, and removed from what a failing controller echoes
// back, on every operation.
func TestTokenNeverLeaks(t *testing.T) {
	c, srv := startTLS(t)
	cl := newClient(t, srv)
	tok := forkdapi.Token(token)
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "token", tok)
	js, _ := json.Marshal(forkdapi.ClientOptions{Token: tok})
	outputs := []string{
		fmt.Sprintf("%v %+v %#v %s %q %x %d", tok, tok, tok, tok, tok, tok, tok),
		fmt.Sprintf("%v %+v %#v %s", cl, *cl, cl, cl), logs.String(), string(js),
	}
	c.Set(func(c *forkdfake.Controller) {
		c.FailBody = "controller echoes Authorization: $AUTH"
		c.Fail = map[string]int{}
		for _, ep := range []string{forkdfake.Create, forkdfake.List, forkdfake.Exec, forkdfake.Delete, forkdfake.CreateWorkspace} {
			c.Fail[ep] = 500
		}
	})
	ctx := context.Background()
	for _, call := range []func() error{
		func() error { _, err := cl.Create(ctx, forkdapi.CreateRequest{SnapshotTag: "snap"}); return err },
		func() error { _, err := cl.List(ctx); return err },
		func() error { _, err := cl.Exec(ctx, "sb-1", []string{"true"}, 1, 1<<20); return err },
		func() error { return cl.Delete(ctx, "sb-1") },
		func() error {
			_, err := cl.CreateWorkspace(ctx, forkdapi.WorkspaceRequest{Name: "w", SnapshotTag: "snap"})
			return err
		},
	} {
		err := call()
		if err == nil || !strings.Contains(err.Error(), "[REDACTED]") {
			t.Errorf("%v: want the echoed header, redacted", err)
		}
		outputs = append(outputs, fmt.Sprint(err))
	}
	for _, out := range outputs {
		if strings.Contains(out, token) || strings.Contains(out, "SECRET") {
			t.Errorf("token leaked in %q", out)
		}
	}
}
