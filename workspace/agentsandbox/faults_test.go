package agentsandbox_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	extv1alpha1 "sigs.k8s.io/agent-sandbox/extensions/api/v1alpha1"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/agentsandbox"
	"github.com/paigasus/helikon/workspace/agentsandbox/internal/fakecluster"
	"github.com/paigasus/helikon/workspace/workspacetest"
)

// claims lists the claims in the fake cluster.
func claims(t *testing.T, c *fakecluster.Cluster) []extv1alpha1.SandboxClaim {
	t.Helper()
	l, err := c.Extensions.ExtensionsV1alpha1().SandboxClaims(fakecluster.Namespace).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func TestUnreachableAPIServerIsAClearError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := "http://" + l.Addr().String()
	l.Close() // nothing listens there now: connections are refused
	e, err := agentsandbox.NewForClients(agentsandbox.ClientsForConfig(&rest.Config{Host: host}, 5*time.Second),
		&agentsandbox.Options{Namespace: "ns", Template: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"Create": func() error { _, err := e.Create(t.Context(), "s1"); return err },
		"Attach": func() error { _, err := e.Attach(t.Context(), "s1"); return err },
		"List":   func() error { _, err := e.List(t.Context()); return err },
		"Remove": func() error { return e.Remove(t.Context(), "helikon-s1-x") },
		"Probe":  func() error { _, err := e.Probe(t.Context()); return err },
	} {
		err := call()
		if !errors.Is(err, agentsandbox.ErrUnreachable) || !strings.Contains(err.Error(), host) {
			t.Errorf("%s: %v, want ErrUnreachable naming %s", name, err, host)
		}
	}
}

func TestClaimNotBoundInTimeIsDeleted(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{Template: "t", ReadyTimeout: 100 * time.Millisecond}, fakecluster.Template("t", ""))
	c.Paused.Store(true) // no controller: the claim stays unbound
	_, err := e.Create(t.Context(), "s1")
	if !errors.Is(err, agentsandbox.ErrNotReady) || !strings.Contains(err.Error(), "no Ready condition") {
		t.Fatalf("Create: %v, want ErrNotReady saying the controller never reported", err)
	}
	if l := claims(t, c); len(l) != 0 {
		t.Errorf("the unbound claim was left behind: %s", l[0].Name)
	}
}

func TestCreateWhoseAnswerIsLostDeletesTheClaim(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{Template: "t"}, fakecluster.Template("t", ""))
	gvr := extv1alpha1.GroupVersion.WithResource("sandboxclaims")
	c.Extensions.PrependReactor("create", "sandboxclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		// The API server commits the claim, and the answer never arrives.
		obj := a.(k8stesting.CreateAction).GetObject()
		if err := c.Extensions.Tracker().Create(gvr, obj, fakecluster.Namespace); err != nil {
			return true, nil, err
		}
		return true, nil, errors.New("read tcp: connection reset by peer")
	})
	_, err := e.Create(t.Context(), "s1")
	if !errors.Is(err, agentsandbox.ErrUnreachable) {
		t.Fatalf("Create: %v, want ErrUnreachable", err)
	}
	if l := claims(t, c); len(l) != 0 {
		t.Errorf("the committed claim leaked: %s", l[0].Name)
	}
}

func TestMissingTemplateIsErrTemplateAndCreatesNoClaim(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{Template: "nope"})
	_, err := e.Create(t.Context(), "s1")
	if !errors.Is(err, agentsandbox.ErrTemplate) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("Create: %v, want ErrTemplate naming the template", err)
	}
	if l := claims(t, c); len(l) != 0 {
		t.Errorf("a claim was created: %s", l[0].Name)
	}
}

func TestTemplateDeletedAfterTheCheckFailsFastAndDeletesTheClaim(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{Template: "t"}, fakecluster.Template("t", ""))
	c.Paused.Store(true)
	ctx := t.Context()
	// The controller, resumed once the claim exists, finds no template.
	c.Extensions.PrependReactor("create", "sandboxclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
		_ = c.Extensions.Tracker().Delete(extv1alpha1.GroupVersion.WithResource("sandboxtemplates"), fakecluster.Namespace, "t")
		c.Paused.Store(false)
		return false, nil, nil
	})
	_, err := e.Create(ctx, "s1")
	if !errors.Is(err, agentsandbox.ErrTemplate) {
		t.Fatalf("Create: %v, want ErrTemplate from the controller's TemplateNotFound", err)
	}
	if l := claims(t, c); len(l) != 0 {
		t.Errorf("the claim was left behind: %s", l[0].Name)
	}
}

func TestEmptyWarmPoolCreatesNoClaim(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{WarmPool: "pool"}, fakecluster.Template("t", ""), fakecluster.WarmPool("pool", "t", 0))
	_, err := e.Create(t.Context(), "s1")
	if !errors.Is(err, agentsandbox.ErrWarmPoolEmpty) || !strings.Contains(err.Error(), "pool") || !strings.Contains(err.Error(), `"t"`) {
		t.Fatalf("Create: %v, want ErrWarmPoolEmpty naming the pool and its template", err)
	}
	if l := claims(t, c); len(l) != 0 {
		t.Errorf("a claim was created: %s", l[0].Name)
	}
}

func TestWarmPoolClaimAdoptsAWarmPod(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{WarmPool: "pool"}, fakecluster.Template("t", ""), fakecluster.WarmPool("pool", "t", 2))
	ctx := t.Context()
	for {
		p, err := c.Extensions.ExtensionsV1alpha1().SandboxWarmPools(fakecluster.Namespace).Get(ctx, "pool", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.ReadyReplicas == 2 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	ws := create(t, e, "s1")
	if pod := ws.(*agentsandbox.Workspace).Pod(); !strings.HasPrefix(pod, fakecluster.Namespace+"/pool-") {
		t.Errorf("the workspace runs in %s, want an adopted pod of the pool", pod)
	}
	if got := workspacetest.Sh(t, ws, "echo warm"); got != "warm\n" {
		t.Errorf("stdout %q", got)
	}
}

// gone asserts that every kind of call on ws fails with ErrGone and a
// message containing why.
func assertGone(t *testing.T, ws workspace.Workspace, why string) {
	t.Helper()
	ctx := t.Context()
	_, err := ws.Run(ctx, &backend.Request{Command: "true"})
	if !errors.Is(err, workspace.ErrGone) || !strings.Contains(err.Error(), why) {
		t.Errorf("Run: %v, want ErrGone saying %q", err, why)
	}
	for name, call := range map[string]func() error{
		"Run again": func() error { _, err := ws.Run(ctx, &backend.Request{Command: "true"}); return err },
		"WriteFile": func() error { _, err := ws.WriteFile(ctx, "a", []byte("x")); return err },
		"Stat":      func() error { _, err := ws.Stat(ctx, "a"); return err },
	} {
		if err := call(); !errors.Is(err, workspace.ErrGone) {
			t.Errorf("%s after the sandbox went: %v, want ErrGone", name, err)
		}
	}
}

func TestPodEvictedMidSessionIsGoneAndCloseDeletesTheClaim(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{Template: "t"}, fakecluster.Template("t", ""))
	ctx := t.Context()
	ws, err := e.Create(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	workspacetest.Sh(t, ws, "echo before > f")
	pod := strings.TrimPrefix(ws.(*agentsandbox.Workspace).Pod(), fakecluster.Namespace+"/")
	if err := c.Evict(ctx, pod); err != nil {
		t.Fatal(err)
	}
	assertGone(t, ws, "Evicted")
	if err := ws.Close(ctx); err != nil {
		t.Errorf("Close of an evicted workspace: %v", err)
	}
	if l := claims(t, c); len(l) != 0 {
		t.Errorf("Close left the claim %s", l[0].Name)
	}
}

func TestSandboxDeletedBySomeoneElseIsGone(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{Template: "t"}, fakecluster.Template("t", ""))
	ctx := t.Context()
	ws, err := e.Create(ctx, "s1")
	if err != nil {
		t.Fatal(err)
	}
	pod := strings.TrimPrefix(ws.(*agentsandbox.Workspace).Pod(), fakecluster.Namespace+"/")
	if err := c.Extensions.ExtensionsV1alpha1().SandboxClaims(fakecluster.Namespace).Delete(ctx, ws.Info().ID, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The garbage collector deletes the Sandbox and then its pod.
	for {
		if _, err := c.Kube.CoreV1().Pods(fakecluster.Namespace).Get(ctx, pod, metav1.GetOptions{}); err != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	assertGone(t, ws, "deleted by someone else")
	if err := ws.Close(ctx); err != nil {
		t.Errorf("Close after someone else deleted the claim: %v", err)
	}
}

// TestPodReplacedUnderItsNameIsGone: the Sandbox controller recreates a
// deleted pod under the same name, empty. A command must not run there as
// if it were the workspace.
func TestPodReplacedUnderItsNameIsGone(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{Template: "t"}, fakecluster.Template("t", ""))
	ctx := t.Context()
	ws := create(t, e, "s1")
	workspacetest.Sh(t, ws, "echo state > f")
	pod := strings.TrimPrefix(ws.(*agentsandbox.Workspace).Pod(), fakecluster.Namespace+"/")
	old, err := c.Kube.CoreV1().Pods(fakecluster.Namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kube.CoreV1().Pods(fakecluster.Namespace).Delete(ctx, pod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for { // wait for the controller's replacement to run
		p, err := c.Kube.CoreV1().Pods(fakecluster.Namespace).Get(ctx, pod, metav1.GetOptions{})
		if err == nil && p.UID != old.UID && p.Status.Phase == "Running" {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	assertGone(t, ws, "replaced")
}

func TestTimeoutKillsTheCommandsProcessTreeInThePod(t *testing.T) {
	e, _ := newEngine(t, agentsandbox.Options{Template: "t"}, fakecluster.Template("t", ""))
	ctx := t.Context()
	ws := create(t, e, "s1")
	for _, tc := range []struct {
		name   string
		cancel bool
	}{{"Timeout", false}, {"Cancel", true}} {
		t.Run(tc.name, func(t *testing.T) {
			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			req := &backend.Request{Command: "sleep 60 & echo $! > child; echo $$ > parent; sleep 60"}
			if tc.cancel {
				go func() {
					for !strings.Contains(workspacetest.Sh(t, ws, "cat parent 2>/dev/null || true"), "\n") {
						time.Sleep(5 * time.Millisecond)
					}
					cancel()
				}()
			} else {
				req.Timeout = 300 * time.Millisecond
			}
			res, err := ws.Run(rctx, req)
			if tc.cancel != (err != nil) {
				t.Fatalf("Run: %v", err)
			}
			if !tc.cancel && (!res.TimedOut || res.ExitCode != nil) {
				t.Fatalf("result %+v, want a timeout", res)
			}
			for _, f := range []string{"parent", "child"} {
				pid, err := strconv.Atoi(strings.TrimSpace(workspacetest.Sh(t, ws, "cat "+f+"; rm "+f)))
				if err != nil {
					t.Fatal(err)
				}
				if fakecluster.Running(pid) {
					t.Errorf("the %s process %d still runs after the command was stopped", f, pid)
				}
			}
		})
	}
}

func TestRemoveRefusesClaimsHelikonDidNotCreate(t *testing.T) {
	e, c := newEngine(t, agentsandbox.Options{Template: "t"}, fakecluster.Template("t", ""))
	ctx := t.Context()
	foreign := &extv1alpha1.SandboxClaim{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: fakecluster.Namespace}}
	if _, err := c.Extensions.ExtensionsV1alpha1().SandboxClaims(fakecluster.Namespace).Create(ctx, foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.Remove(ctx, "theirs"); err == nil {
		t.Error("Remove deleted a claim without helikon's label")
	}
	if err := e.Remove(ctx, "never-was"); err != nil {
		t.Errorf("Remove of a missing claim: %v", err)
	}
	if l, err := e.List(ctx); err != nil || len(l) != 0 {
		t.Errorf("List shows %+v, %v; want no foreign claims", l, err)
	}
}
