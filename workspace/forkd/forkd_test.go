package forkd_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/backendtest"
	"github.com/paigasus/helikon/backend/microvm"
	"github.com/paigasus/helikon/internal/forkdapi"
	"github.com/paigasus/helikon/internal/forkdfake"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/forkd"
	"github.com/paigasus/helikon/workspace/workspacetest"
)

const token = "tok-SECRET-77b1"

func start(t *testing.T) (*forkdfake.Controller, *forkdfake.Server) {
	t.Helper()
	c := forkdfake.New(token)
	c.AddSnapshot("helikon")
	srv := c.Start()
	t.Cleanup(srv.Close)
	return c, srv
}

// newEngine is an engine on srv whose root is relative, so that in the fake
// controller it lies in the sandbox's own directory.
func newEngine(t testing.TB, srv *forkdfake.Server, mod func(*forkd.Options)) *forkd.Engine {
	t.Helper()
	opts := forkd.Options{Options: microvm.Options{URL: srv.URL, Token: token, Snapshot: "helikon", Logger: slog.New(slog.DiscardHandler)}, Dir: "workspace"}
	if mod != nil {
		mod(&opts)
	}
	e, err := forkd.New(context.Background(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func create(t *testing.T, e *forkd.Engine, session string) workspace.Workspace {
	t.Helper()
	w, err := e.Create(context.Background(), session)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close(context.Background()) })
	return w
}

func run(t *testing.T, w workspace.Workspace, cmd string) string {
	t.Helper()
	res, err := w.Run(context.Background(), &backend.Request{Command: cmd})
	if err != nil {
		t.Fatalf("Run(%q): %v", cmd, err)
	}
	if res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("Run(%q): not exit 0 (%+v), stderr %q", cmd, res, res.Stderr)
	}
	return string(res.Stdout)
}

func TestOneMicroVMHoldsTheSessionAcrossCalls(t *testing.T) {
	c, srv := start(t)
	e := newEngine(t, srv, nil)
	w := create(t, e, "s1")
	if got := c.Workspaces(); len(got) != 1 || got[0] != "helikon-s1" {
		t.Fatalf("controller workspaces = %v, want [helikon-s1]", got)
	}
	live := c.Live()
	if len(live) != 1 {
		t.Fatalf("live sandboxes = %v, want one", live)
	}
	wantRoot := filepath.Join(c.Dir(live[0]), "workspace")
	if w.Dir() != wantRoot {
		t.Errorf("Dir = %q, want %q (the root inside the sandbox)", w.Dir(), wantRoot)
	}
	if got := run(t, w, "pwd -P; echo made > made.txt; mkdir -p sub; echo deep > sub/f"); got != wantRoot+"\n" {
		t.Errorf("first command ran in %q, want the root %q", got, wantRoot)
	}
	if got := run(t, w, "cat made.txt sub/f"); got != "made\ndeep\n" {
		t.Errorf("second command saw %q, want what the first wrote", got)
	}
	if got := c.Live(); len(got) != 1 || got[0] != live[0] {
		t.Errorf("live sandboxes after two calls = %v, want still %v", got, live)
	}
	// Create: the workspace, the exec that makes the root and writes the
	// labels, execfs's exec that resolves the root; then one per call.
	if got := c.Endpoints(); got != "create-workspace,exec,exec,exec,exec" {
		t.Errorf("calls = %s, want one create, two setup execs and one exec per call", got)
	}
	g := w.Guarantees()
	if g.Filesystem != backend.IsolationVirtualized || g.Syscalls != backend.IsolationVirtualized || g.Network != backend.IsolationNone || g.Label != forkd.Label {
		t.Errorf("guarantees = %+v", g)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(c.Workspaces()) != 0 || len(c.Live()) != 0 {
		t.Errorf("after Close: workspaces %v, sandboxes %v, want none", c.Workspaces(), c.Live())
	}
	if _, err := os.Stat(wantRoot); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the sandbox's directory survived Close: %v", err)
	}
	if err := w.Close(context.Background()); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	if _, err := w.Run(context.Background(), &backend.Request{Command: "true"}); !errors.Is(err, workspace.ErrGone) {
		t.Errorf("Run after Close = %v, want ErrGone", err)
	}
}

// The workspace contract's conformance suite, with backendtest for the
// commands, against the fake controller: each workspace a directory of this
// machine that every exec runs in.
func TestConformance(t *testing.T) {
	_, srv := start(t)
	e := newEngine(t, srv, nil)
	n := 0
	workspacetest.Run(t, func(t *testing.T) workspace.Workspace {
		n++
		return create(t, e, "conformance-"+strconv.Itoa(n))
	}, &workspacetest.Options{Remote: true, Engine: "forkd", Backend: &backendtest.Options{TimeoutStep: time.Second}})
}

func TestAttachFindsTheSessionsFilesAndLabels(t *testing.T) {
	c, srv := start(t)
	w := create(t, newEngine(t, srv, nil), "s2")
	run(t, w, "echo kept > kept.txt")
	// Another process: a new engine on the same controller.
	a, err := newEngine(t, srv, nil).Attach(context.Background(), "s2")
	if err != nil {
		t.Fatal(err)
	}
	if a.Dir() != w.Dir() {
		t.Errorf("attached root %q, want %q", a.Dir(), w.Dir())
	}
	if got := run(t, a, "cat kept.txt"); got != "kept\n" {
		t.Errorf("attached workspace saw %q", got)
	}
	info := a.Info()
	host, _ := os.Hostname()
	if !info.Attached || info.ID != "helikon-s2" || info.Session != "s2" || info.Engine != "forkd" || info.State != "running" || info.Created.IsZero() {
		t.Errorf("Info = %+v", info)
	}
	if info.Labels[workspace.LabelManaged] != "true" || info.Labels[workspace.LabelHost] != host || info.Labels[workspace.LabelUser] == "" {
		t.Errorf("labels = %v, want managed, host %q and a user", info.Labels, host)
	}
	if created := w.Info(); created.Attached || !maps.Equal(created.Labels, info.Labels) || !created.Created.Equal(info.Created) {
		t.Errorf("the created workspace's Info = %+v, want %+v but not Attached", created, info)
	}
	if len(c.Workspaces()) != 1 {
		t.Errorf("workspaces = %v", c.Workspaces())
	}
}

func TestAttachFaults(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, c *forkdfake.Controller, srv *forkdfake.Server, e *forkd.Engine)
		want  []error
	}{
		{"no workspace", func(*testing.T, *forkdfake.Controller, *forkdfake.Server, *forkd.Engine) {}, []error{workspace.ErrNotFound}},
		{"suspended by another client", func(t *testing.T, c *forkdfake.Controller, srv *forkdfake.Server, e *forkd.Engine) {
			create(t, e, "s")
			suspend(t, srv, "helikon-s")
		}, []error{forkd.ErrSuspended}},
		{"stale after a controller restart", func(t *testing.T, c *forkdfake.Controller, srv *forkdfake.Server, e *forkd.Engine) {
			create(t, e, "s")
			c.Restart()
		}, []error{workspace.ErrNotFound, workspace.ErrGone}},
		{"controller unreachable", func(t *testing.T, c *forkdfake.Controller, srv *forkdfake.Server, e *forkd.Engine) {
			srv.Close()
		}, []error{forkd.ErrUnreachable, backend.ErrUnavailable}},
		{"root removed inside the microVM", func(t *testing.T, c *forkdfake.Controller, srv *forkdfake.Server, e *forkd.Engine) {
			w := create(t, e, "s")
			run(t, w, "cd .. && rm -rf workspace")
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := start(t)
			e := newEngine(t, srv, nil)
			tt.setup(t, c, srv, e)
			w, err := e.Attach(context.Background(), "s")
			if err == nil {
				w.Close(context.Background())
				t.Fatal("Attach succeeded")
			}
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("Attach = %v, want it to match %v", err, want)
				}
			}
			t.Log(err)
		})
	}
}

// suspend suspends a workspace as forkd's CLI does (POST
// /v1/workspaces/{name}/suspend).
func suspend(t *testing.T, srv *forkdfake.Server, name string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/workspaces/"+name+"/suspend", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("suspend: %s", resp.Status)
	}
}

func TestCreateReplacesOnlyAStaleWorkspace(t *testing.T) {
	c, srv := start(t)
	e := newEngine(t, srv, nil)
	w := create(t, e, "s")
	if _, err := e.Create(context.Background(), "s"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create of a session with a running workspace = %v, want fs.ErrExist", err)
	}
	if got := run(t, w, "echo still here"); got != "still here\n" {
		t.Errorf("the running workspace was disturbed: %q", got)
	}
	suspend(t, srv, "helikon-s")
	if _, err := e.Create(context.Background(), "s"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create of a session with a suspended workspace = %v, want fs.ErrExist", err)
	}
	if err := e.Remove(context.Background(), "helikon-s"); err != nil {
		t.Fatal(err)
	}
	create(t, e, "s")
	c.Restart()
	w2, err := e.Create(context.Background(), "s")
	if err != nil {
		t.Fatalf("Create over a stale workspace = %v, want it replaced", err)
	}
	defer w2.Close(context.Background())
	if got := run(t, w2, "ls"); got != "" {
		t.Errorf("the replacement is not fresh: %q", got)
	}
}

func TestGoneMidSessionFailsClosed(t *testing.T) {
	tests := []struct {
		name string
		lose func(t *testing.T, c *forkdfake.Controller, srv *forkdfake.Server)
		why  string
	}{
		{"deleted by someone else", func(t *testing.T, c *forkdfake.Controller, srv *forkdfake.Server) {
			cl, err := forkdapi.NewClient(srv.URL, forkdapi.ClientOptions{Token: token})
			if err != nil {
				t.Fatal(err)
			}
			if err := cl.DeleteWorkspace(context.Background(), "helikon-s"); err != nil {
				t.Fatal(err)
			}
		}, "deleted by someone else"},
		{"suspended by another client", func(t *testing.T, c *forkdfake.Controller, srv *forkdfake.Server) {
			suspend(t, srv, "helikon-s")
		}, "suspended"},
		{"stale after a controller restart", func(t *testing.T, c *forkdfake.Controller, srv *forkdfake.Server) {
			c.Restart()
		}, "stale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := start(t)
			w := create(t, newEngine(t, srv, nil), "s")
			run(t, w, "true")
			tt.lose(t, c, srv)
			_, err := w.Run(context.Background(), &backend.Request{Command: "true"})
			if !errors.Is(err, workspace.ErrGone) || !strings.Contains(err.Error(), tt.why) {
				t.Fatalf("Run after the workspace was lost = %v, want ErrGone saying %q", err, tt.why)
			}
			t.Log(err)
			before := len(c.Calls())
			if _, err := w.Run(context.Background(), &backend.Request{Command: "true"}); !errors.Is(err, workspace.ErrGone) {
				t.Errorf("the next Run = %v, want ErrGone (fail closed)", err)
			}
			if after := len(c.Calls()); after != before {
				t.Errorf("the next Run called the controller %d times, want none: the workspace is not recreated", after-before)
			}
			if n := len(c.Live()); n != 0 {
				t.Errorf("%d sandboxes live, want none", n)
			}
		})
	}
}

func TestCreateFaultsLeaveNothing(t *testing.T) {
	tests := []struct {
		name      string
		setup     func(c *forkdfake.Controller)
		mod       func(*forkd.Options)
		want      error
		wantInErr string
		leftOver  int
	}{
		{name: "create committed then failed", setup: func(c *forkdfake.Controller) { c.CreateCommitsThenFails = true }, wantInErr: "was deleted)"},
		{name: "create answered garbage", setup: func(c *forkdfake.Controller) {
			c.Malformed = map[string]string{forkdfake.CreateWorkspace: `{"name": 7}`}
		}, want: forkdapi.ErrMalformedResponse, wantInErr: "was deleted)"},
		{name: "setup exec failed", setup: func(c *forkdfake.Controller) { c.Fail = map[string]int{forkdfake.Exec: 500} }, wantInErr: "was deleted)"},
		{name: "root cannot be made", setup: func(c *forkdfake.Controller) {}, mod: func(o *forkd.Options) { o.Dir = "/proc/helikon-cannot/workspace" }, wantInErr: "exit code"},
		{name: "committed, failed, and the delete failed", setup: func(c *forkdfake.Controller) {
			c.CreateCommitsThenFails = true
			c.FailDeleteIDs = map[string]bool{"helikon-s": true}
		}, wantInErr: "helikon workspaces reap removes it", leftOver: 1},
		{name: "a failure that echoes the token", setup: func(c *forkdfake.Controller) {
			c.Fail = map[string]int{forkdfake.CreateWorkspace: 500}
			c.FailBody = `{"error":"bad request with $AUTH"}`
		}, wantInErr: "[REDACTED]"},
		{name: "controller without the workspace API", setup: func(c *forkdfake.Controller) { c.Fail = map[string]int{forkdfake.CreateWorkspace: 404} }, want: forkdapi.ErrNotFound, wantInErr: "v0.3.2"},
		{name: "unknown snapshot", setup: func(c *forkdfake.Controller) {}, mod: func(o *forkd.Options) { o.Snapshot = "missing" }, wantInErr: "snapshot missing not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, srv := start(t)
			c.Set(tt.setup)
			_, err := newEngine(t, srv, tt.mod).Create(context.Background(), "s")
			if err == nil {
				t.Fatal("Create succeeded")
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Errorf("Create = %v, want it to match %v", err, tt.want)
			}
			if !strings.Contains(err.Error(), tt.wantInErr) {
				t.Errorf("Create = %v, want it to say %q", err, tt.wantInErr)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("the error carries the token: %v", err)
			}
			if got := len(c.Workspaces()); got != tt.leftOver {
				t.Errorf("workspaces left = %v, want %d", c.Workspaces(), tt.leftOver)
			}
			t.Log(err)
		})
	}
}

func TestCreateWhenTheControllerIsUnreachable(t *testing.T) {
	_, srv := start(t)
	e := newEngine(t, srv, nil)
	srv.Close()
	_, err := e.Create(context.Background(), "s")
	if !errors.Is(err, forkd.ErrUnreachable) || !errors.Is(err, backend.ErrUnavailable) {
		t.Fatalf("Create = %v, want ErrUnreachable and backend.ErrUnavailable", err)
	}
}

func TestListAndRemove(t *testing.T) {
	c, srv := start(t)
	e := newEngine(t, srv, nil)
	create(t, e, "a")
	create(t, e, "b")
	create(t, e, "c")
	c.Restart() // a, b, c are stale now
	wd := create(t, e, "d")
	id := "sb-foreign"
	c.AddWorkspace(forkdfake.WorkspaceInfo{ID: "ws-x", Name: "other-tool", SourceSnapshotTag: "helikon", Status: "running", LiveSandboxID: &id, CreatedAtUnix: 1})
	c.AddWorkspace(forkdfake.WorkspaceInfo{ID: "ws-y", Name: "helikon-", SourceSnapshotTag: "helikon", Status: "suspended", CreatedAtUnix: 1})
	list, err := e.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range list {
		got = append(got, i.ID+":"+i.Session+":"+i.State)
		if i.Engine != "forkd" || i.Created.IsZero() || i.Labels[workspace.LabelManaged] != "true" || i.Labels[workspace.LabelCreated] == "" {
			t.Errorf("Info = %+v", i)
		}
	}
	if want := "helikon-a:a:stale,helikon-b:b:stale,helikon-c:c:stale,helikon-d:d:running"; strings.Join(got, ",") != want {
		t.Errorf("List = %s, want %s (only helikon's names)", strings.Join(got, ","), want)
	}
	host, _ := os.Hostname()
	if d := list[3]; d.Labels[workspace.LabelHost] != host || d.Labels[workspace.LabelUser] == "" {
		t.Errorf("labels of the running workspace = %v, want host and user from its labels file", d.Labels)
	}
	if err := e.Remove(context.Background(), "other-tool"); err == nil {
		t.Error("Remove of another tool's workspace succeeded")
	}
	for _, id := range []string{"helikon-a", "helikon-d", "helikon-d"} {
		if err := e.Remove(context.Background(), id); err != nil {
			t.Errorf("Remove(%s) = %v", id, err)
		}
	}
	if got := strings.Join(c.Workspaces(), ","); got != "helikon-,helikon-b,helikon-c,other-tool" {
		t.Errorf("workspaces after Remove = %s", got)
	}
	if _, err := wd.Run(context.Background(), &backend.Request{Command: "true"}); !errors.Is(err, workspace.ErrGone) {
		t.Errorf("Run in a reaped workspace = %v, want ErrGone", err)
	}
}

// A command in the workspace runs as root in its microVM and can rewrite
// the labels file: it must not make List report it younger (which would
// keep it from helikon workspaces reap --older-than), nor as another
// session's, nor slip control characters into an operator's terminal.
func TestListTrustsTheControllerNotTheWorkspace(t *testing.T) {
	c, srv := start(t)
	now := time.Unix(1_700_000_000, 0)
	c.Set(func(c *forkdfake.Controller) { c.Now = func() time.Time { return now } })
	w := create(t, newEngine(t, srv, nil), "victim")
	forged := `{"io.helikon.managed":"true","io.helikon.session":"other","io.helikon.created":"4102444800","io.helikon.host":"evil\u001b[2J","io.helikon.user":"mallory"}`
	run(t, w, "cd .. && printf '%s' '"+forged+"' > .workspace.helikon-labels.json")
	list, err := newEngine(t, srv, nil).List(context.Background())
	if err != nil || len(list) != 1 {
		t.Fatalf("List = %v, %v", list, err)
	}
	i := list[0]
	if !i.Created.Equal(now) || i.Labels[workspace.LabelCreated] != "1700000000" {
		t.Errorf("created = %v / %q, want the controller's %v", i.Created, i.Labels[workspace.LabelCreated], now)
	}
	if i.Session != "victim" || i.Labels[workspace.LabelSession] != "victim" {
		t.Errorf("session = %q / %q, want the name's", i.Session, i.Labels[workspace.LabelSession])
	}
	if _, ok := i.Labels[workspace.LabelHost]; ok {
		t.Errorf("host label %q taken with a control character", i.Labels[workspace.LabelHost])
	}
	if i.Labels[workspace.LabelUser] != "mallory" {
		t.Errorf("user = %q: the file's printable claims are still reported", i.Labels[workspace.LabelUser])
	}
}

// The per-command backend's Reconcile on the same controller leaves the
// workspaces' live microVMs alone.
func TestReconcileSparesWorkspaces(t *testing.T) {
	c, srv := start(t)
	later := time.Now().Add(time.Hour)
	e := newEngine(t, srv, func(o *forkd.Options) { o.Now = func() time.Time { return later } })
	w := create(t, e, "s")
	b, err := microvm.New(context.Background(), &microvm.Options{URL: srv.URL, Token: token, Snapshot: "helikon", Now: func() time.Time { return later }})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := b.Reconcile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Reaped != 0 || rep.SkippedWorkspaces != 1 || len(c.Live()) != 1 {
		t.Errorf("Reconcile = %+v, live %v: want the workspace's microVM spared", rep, c.Live())
	}
	run(t, w, "true")
}

func TestNewRefusesBadRoots(t *testing.T) {
	_, srv := start(t)
	for _, dir := range []string{"/", ".", "..", "../up", "/work\nspace"} {
		_, err := forkd.New(context.Background(), &forkd.Options{Options: microvm.Options{URL: srv.URL, Snapshot: "helikon"}, Dir: dir})
		if err == nil {
			t.Errorf("New with root %q succeeded", dir)
		}
	}
	if _, err := forkd.New(context.Background(), nil); err == nil {
		t.Error("New(nil) succeeded")
	}
	e := newEngine(t, srv, nil)
	if _, err := e.Create(context.Background(), "bad session!"); err == nil {
		t.Error("Create with an invalid session succeeded")
	}
}

// The guest agent kills only the direct child of a command past its
// timeout, and the controller's exec cannot be cancelled: what a command
// started in the background must still not outlive its call in the
// session's microVM.
func TestTimedOutAndCancelledCommandsAreKilledWithTheirChildren(t *testing.T) {
	tests := []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		req  backend.Request
	}{
		{"timed out", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			backend.Request{Command: "sleep 60 & echo $! > bg.pid; sleep 60", Timeout: time.Second}},
		{"cancelled", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 1500*time.Millisecond)
		}, backend.Request{Command: "sleep 60 & echo $! > bg.pid; sleep 60"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, srv := start(t)
			w := create(t, newEngine(t, srv, nil), "s")
			ctx, cancel := tt.ctx()
			defer cancel()
			res, err := w.Run(ctx, &tt.req)
			if err == nil && !res.TimedOut {
				t.Fatalf("Run = %+v, want a timeout or the context's error", res)
			}
			// A zombie waiting for its reaper is dead too.
			got := run(t, w, `p=$(cat bg.pid); if [ -e /proc/$p ] && ! grep -q '^[0-9]* ([^)]*) Z' /proc/$p/stat; then echo alive; else echo dead; fi`)
			if got != "dead\n" {
				t.Errorf("the command's background process is %s after the call ended", strings.TrimSpace(got))
			}
		})
	}
}

// The session's flow the issue asks for: a file written by the file tools
// is run by Bash, what Bash makes is read by the file tools, an update
// lands, in one microVM, across calls and across an Attach.
func TestFilesAndCommandsShareTheMicroVMAcrossCalls(t *testing.T) {
	c, srv := start(t)
	e := newEngine(t, srv, nil)
	w := create(t, e, "flow")
	ctx := context.Background()
	if _, err := w.WriteFile(ctx, "bin/hello.sh", []byte("#!/bin/sh\necho hello from $(basename $0) > made-by-script.txt\n")); err != nil {
		t.Fatal(err)
	}
	run(t, w, "chmod +x bin/hello.sh && ./bin/hello.sh && mkdir -p pkg && echo installed > pkg/VERSION")
	if got := readFile(t, w, "made-by-script.txt"); got != "hello from hello.sh\n" {
		t.Errorf("the script's output file reads %q", got)
	}
	if _, err := w.UpdateFile(ctx, "pkg/VERSION", 1<<10, func(old []byte) ([][]byte, error) {
		return [][]byte{bytes.ToUpper(old)}, nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := run(t, w, "cat pkg/VERSION"); got != "INSTALLED\n" {
		t.Errorf("Bash sees %q after the update", got)
	}
	// A file larger than one exec's request body (2 MiB on the controller)
	// with every byte value, then backslashes and quotes, which JSON
	// escapes again (the worst case for the body's size), written and read
	// back whole.
	big := make([]byte, 3<<20)
	for i := range big {
		big[i] = byte(i * 7)
		if i > 1<<20 {
			big[i] = `\"`[i%2]
		}
	}
	if _, err := w.WriteFile(ctx, "big.bin", big); err != nil {
		t.Fatal(err)
	}
	if got := run(t, w, "wc -c < big.bin"); strings.TrimSpace(got) != strconv.Itoa(len(big)) {
		t.Errorf("Bash counts %s bytes, want %d", got, len(big))
	}
	if got := readFile(t, w, "big.bin"); got != string(big) {
		t.Errorf("big.bin read back differs (%d bytes)", len(got))
	}
	for _, call := range c.Calls() {
		if len(call.Body) > 2<<20 {
			t.Errorf("a %s request body of %d bytes, over the controller's 2 MiB", call.Endpoint, len(call.Body))
		}
	}
	a, err := newEngine(t, srv, nil).Attach(ctx, "flow")
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, a, "pkg/VERSION"); got != "INSTALLED\n" {
		t.Errorf("after Attach the file reads %q", got)
	}
	if err := e.Remove(ctx, "helikon-flow"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Stat(ctx, "pkg/VERSION"); !errors.Is(err, workspace.ErrGone) {
		t.Errorf("Stat in a removed workspace = %v, want ErrGone", err)
	}
}

func readFile(t *testing.T, w workspace.Workspace, name string) string {
	t.Helper()
	f, err := w.Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestEngineOverTLSWithAPrivateCA(t *testing.T) {
	c := forkdfake.New(token)
	c.AddSnapshot("helikon")
	srv, err := c.StartTLS()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	w := create(t, newEngine(t, srv, func(o *forkd.Options) { o.CACertPEM = srv.CAPEM }), "tls")
	if got := run(t, w, "echo over tls"); got != "over tls\n" {
		t.Errorf("Run = %q", got)
	}
	if _, err := newEngine(t, srv, nil).Create(context.Background(), "untrusted"); err == nil || !errors.Is(err, forkd.ErrUnreachable) {
		t.Errorf("Create without the CA = %v, want a TLS failure (unreachable)", err)
	}
	if got := c.Workspaces(); len(got) != 1 {
		t.Errorf("workspaces = %v, want only the trusted one", got)
	}
}

// A controller that is down or failing is not a gone workspace: the call
// fails with the cause, and a Close that failed is tried again by the next.
func TestTransientFaultsAreNotGone(t *testing.T) {
	c, srv := start(t)
	w := create(t, newEngine(t, srv, nil), "s")
	c.Set(func(c *forkdfake.Controller) { c.Fail = map[string]int{forkdfake.Exec: 503} })
	_, err := w.Run(context.Background(), &backend.Request{Command: "true"})
	if err == nil || errors.Is(err, workspace.ErrGone) {
		t.Fatalf("Run on a failing controller = %v, want its error and not ErrGone", err)
	}
	if _, err := w.Stat(context.Background(), "."); err == nil || errors.Is(err, workspace.ErrGone) {
		t.Fatalf("Stat on a failing controller = %v, want its error and not ErrGone", err)
	}
	c.Set(func(c *forkdfake.Controller) { c.Fail = nil })
	if got := run(t, w, "echo back"); got != "back\n" {
		t.Errorf("Run after the controller recovered = %q", got)
	}
	c.Set(func(c *forkdfake.Controller) { c.Fail = map[string]int{forkdfake.DeleteWorkspace: 500} })
	if err := w.Close(context.Background()); err == nil {
		t.Fatal("Close succeeded while delete was failing")
	}
	if _, err := w.Run(context.Background(), &backend.Request{Command: "true"}); !errors.Is(err, workspace.ErrGone) {
		t.Errorf("Run after a failed Close = %v, want ErrGone", err)
	}
	c.Set(func(c *forkdfake.Controller) { c.Fail = nil })
	if err := w.Close(context.Background()); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if len(c.Workspaces()) != 0 {
		t.Errorf("workspaces after the second Close: %v", c.Workspaces())
	}
}

// The root and the labels travel as arguments of fixed scripts, never in
// their text: a root spelled with shell syntax is a directory of that name.
func TestRootWithShellSyntaxStaysAName(t *testing.T) {
	c, srv := start(t)
	dir := `ws $(echo pwned > pwned1) ;echo pwned > pwned2; '"` + "`echo pwned > pwned3`"
	w := create(t, newEngine(t, srv, func(o *forkd.Options) { o.Dir = dir }), "s")
	if got := run(t, w, `basename "$PWD"`); got != dir+"\n" {
		t.Errorf("the command ran in %q, want the root %q", got, dir)
	}
	if _, err := w.WriteFile(context.Background(), "f", []byte("x")); err != nil {
		t.Fatal(err)
	}
	sandbox := c.Dir(c.Live()[0])
	for _, p := range []string{"pwned1", "pwned2", "pwned3"} {
		for _, d := range []string{sandbox, w.Dir()} {
			if _, err := os.Stat(filepath.Join(d, p)); err == nil {
				t.Errorf("%s was made in %s: the root's name ran as shell", p, d)
			}
		}
	}
}

// With an absolute root the engine describes its workspaces: Sessions
// creates a session's microVM on its first call, and routing by session
// gives each session (an MCP client) a microVM of its own. A relative root
// is resolved only inside the microVM, so such an engine does not.
func TestAnAbsoluteRootGivesEachSessionItsMicroVMOnFirstUse(t *testing.T) {
	c, srv := start(t)
	if _, ok := workspace.Describe(newEngine(t, srv, nil)); ok {
		t.Fatal("an engine with a relative root describes its workspaces")
	}
	// In the fake an absolute root is a host directory, shared by every
	// sandbox: enough to count the microVMs and route the calls.
	root := t.TempDir()
	e := newEngine(t, srv, func(o *forkd.Options) { o.Dir = root })
	d, ok := workspace.Describe(e)
	if !ok || d.Dir() != root || d.Guarantees().Label != forkd.Label {
		t.Fatalf("Describe = %v, %v; want the root %s and forkd's guarantees", d, ok, root)
	}
	s := &workspace.Sessions{Engine: e, Logger: slog.New(slog.DiscardHandler)}
	routed, err := s.ByContext("")
	if err != nil {
		t.Fatal(err)
	}
	defer s.CloseAll(context.Background())
	if routed.Dir() != root || len(c.Workspaces()) != 0 {
		t.Fatalf("before any call: Dir %q, controller workspaces %v; want %s and none", routed.Dir(), c.Workspaces(), root)
	}
	for _, id := range []string{"alice", "bob", "alice"} {
		ctx := workspace.WithSession(context.Background(), id)
		res, err := routed.Run(ctx, &backend.Request{Command: "pwd -P"})
		if err != nil || res.ExitCode == nil || *res.ExitCode != 0 || string(res.Stdout) != root+"\n" {
			t.Fatalf("session %s: Run = %+v, %v; want exit 0 in %s", id, res, err, root)
		}
	}
	if got := strings.Join(c.Workspaces(), ","); got != "helikon-alice,helikon-bob" {
		t.Errorf("controller workspaces = %s, want one per session", got)
	}
	if len(c.Live()) != 2 {
		t.Errorf("live sandboxes = %v, want two", c.Live())
	}
	if err := s.CloseAll(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(c.Workspaces()) != 0 {
		t.Errorf("after CloseAll: workspaces %v, want none", c.Workspaces())
	}
}

// A described root must be the workspace's root: one that is a link to
// another directory in the microVM is refused rather than reported under
// the name it was given.
func TestAnAbsoluteRootThatIsALinkIsRefused(t *testing.T) {
	c, srv := start(t)
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	e := newEngine(t, srv, func(o *forkd.Options) { o.Dir = link })
	_, err := e.Create(context.Background(), "s1")
	if err == nil || !strings.Contains(err.Error(), "a link") {
		t.Fatalf("Create with a root that is a link = %v, want a refusal naming the link", err)
	}
	if len(c.Workspaces()) != 0 {
		t.Errorf("workspaces after the refusal = %v, want none (deleted)", c.Workspaces())
	}
}
