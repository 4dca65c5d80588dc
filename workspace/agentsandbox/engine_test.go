package agentsandbox_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/agentsandbox"
	"github.com/paigasus/helikon/workspace/agentsandbox/internal/fakecluster"
	"github.com/paigasus/helikon/workspace/workspacetest"
)

// newEngine starts a fake cluster holding objects and returns an engine on
// it with opts (Namespace filled in, short waits).
// create creates session's workspace on e, closed when the test ends.
func create(t *testing.T, e *agentsandbox.Engine, session string) workspace.Workspace {
	t.Helper()
	ws, err := e.Create(t.Context(), session)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close(context.Background()) })
	return ws
}

func newEngine(t *testing.T, opts agentsandbox.Options, objects ...runtime.Object) (*agentsandbox.Engine, *fakecluster.Cluster) {
	t.Helper()
	c := fakecluster.New(t, objects...)
	opts.Namespace = fakecluster.Namespace
	if opts.PollInterval == 0 {
		opts.PollInterval = 5 * time.Millisecond
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 30 * time.Second
	}
	e, err := agentsandbox.NewForClients(agentsandbox.Clients{Config: c.Config, Kube: c.Kube, Sandboxes: c.Sandboxes, Extensions: c.Extensions}, &opts)
	if err != nil {
		t.Fatal(err)
	}
	return e, c
}

func TestCreateRunsCommandsAndFilesInOneSandboxUntilClose(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{Template: "python"}, fakecluster.Template("python", ""))
	ctx := t.Context()
	ws, err := e.Create(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.WriteFile(ctx, "script.sh", []byte("echo made > made.txt\n")); err != nil {
		t.Fatal(err)
	}
	workspacetest.Sh(t, ws, "sh script.sh")
	if got := workspacetest.Sh(t, ws, "cat made.txt"); got != "made\n" {
		t.Errorf("the second command saw %q, want the file the first made", got)
	}
	list, err := e.List(ctx)
	if err != nil || len(list) != 1 || list[0].Session != "s1" || list[0].ID != ws.Info().ID || list[0].State != "ready" {
		t.Fatalf("List = %+v, %v; want the one ready claim of s1", list, err)
	}
	if err := ws.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Run(ctx, &backend.Request{Command: "true"}); !errors.Is(err, workspace.ErrGone) {
		t.Errorf("Run after Close: %v, want ErrGone", err)
	}
	if list, _ := e.List(ctx); len(list) != 0 {
		t.Errorf("the claim outlived Close: %+v", list)
	}
	if n := c.Exec.SPDYExecs.Load(); n != 0 {
		t.Errorf("%d execs went over SPDY with a server that speaks WebSocket", n)
	}
}

func TestExecFallsBackToSPDYWhereWebSocketIsRefused(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{Template: "t"}, fakecluster.Template("t", ""))
	c.Exec.RefuseWebSocket.Store(true)
	ws := create(t, e, "s1")
	if got := workspacetest.Sh(t, ws, "echo hi; exit 0"); got != "hi\n" {
		t.Errorf("stdout %q", got)
	}
	res, err := ws.Run(t.Context(), &backend.Request{Command: "exit 7"})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 7 {
		t.Errorf("exit 7 over SPDY: %+v, %v", res, err)
	}
	if c.Exec.SPDYExecs.Load() == 0 {
		t.Error("no exec went over SPDY")
	}
}

func TestAttachFindsTheSessionsWorkspaceWithItsFiles(t *testing.T) {
	e, _ := newEngine(t, agentsandbox.Options{Template: "t"}, fakecluster.Template("t", ""))
	ctx := t.Context()
	ws := create(t, e, "s1")
	workspacetest.Sh(t, ws, "echo kept > kept.txt")
	if _, err := e.Create(ctx, "s1"); err == nil {
		t.Fatal("a second Create of one session succeeded")
	}
	again, err := e.Attach(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	if !again.Info().Attached || again.Info().ID != ws.Info().ID {
		t.Errorf("Info %+v, want the same claim, attached", again.Info())
	}
	if got := workspacetest.Sh(t, again, "cat kept.txt"); got != "kept\n" {
		t.Errorf("attached workspace read %q", got)
	}
	if _, err := e.Attach(ctx, "other"); !errors.Is(err, workspace.ErrNotFound) {
		t.Errorf("Attach of a session without a workspace: %v, want ErrNotFound", err)
	}
}

func TestLabelsAreValidKubernetesLabelsAndKeepExactValues(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{Template: "t", Labels: map[string]string{"team": "ml"}}, fakecluster.Template("t", ""))
	ctx := t.Context()
	ws := create(t, e, "Sess_1")
	claim, err := c.Extensions.ExtensionsV1alpha1().SandboxClaims(fakecluster.Namespace).Get(ctx, ws.Info().ID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{workspace.LabelManaged, workspace.LabelSession, workspace.LabelHost, workspace.LabelUser, workspace.LabelCreated, "team"} {
		v, ok := claim.Labels[k]
		if !ok {
			t.Errorf("claim lacks label %s", k)
			continue
		}
		if errs := append(validation.IsQualifiedName(k), validation.IsValidLabelValue(v)...); len(errs) > 0 {
			t.Errorf("label %s=%q is not a valid Kubernetes label: %v", k, v, errs)
		}
	}
	if !strings.HasPrefix(claim.Name, "helikon-sess-1-") {
		t.Errorf("claim name %q, want helikon-sess-1-SUFFIX", claim.Name)
	}
	if ws.Info().Session != "Sess_1" {
		t.Errorf("Info().Session = %q", ws.Info().Session)
	}
}
