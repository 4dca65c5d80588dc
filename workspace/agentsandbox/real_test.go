package agentsandbox_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	sandboxv1alpha1 "sigs.k8s.io/agent-sandbox/api/v1alpha1"
	sandboxclient "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned"
	extclient "sigs.k8s.io/agent-sandbox/clients/k8s/extensions/clientset/versioned"
	extv1alpha1 "sigs.k8s.io/agent-sandbox/extensions/api/v1alpha1"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/agentsandbox"
	"github.com/paigasus/helikon/workspace/workspacetest"
)

// The tests named TestReal* run against a real cluster: a kube-apiserver,
// agent-sandbox's controller with its extensions, and a kubelet that runs
// the pods (testdata/cluster/up.sh brings one up on loopback). They read:
//
//	HELIKON_K8S_KUBECONFIG    the cluster's kubeconfig; unset, they skip
//	HELIKON_REQUIRE_K8S       set: a missing kubeconfig fails them instead
//	HELIKON_K8S_IMAGE         the pods' image (default helikon.test/busybox:1,
//	                          which up.sh imports; imagePullPolicy Never)
//	HELIKON_K8S_RUNTIMECLASS  a RuntimeClass whose handler is runsc: the
//	                          suite then also runs in gVisor pods
//
// Each test works in a namespace of its own, made and deleted by the test,
// with templates of its own, so that tests and runs do not meet.
const (
	envKubeconfig   = "HELIKON_K8S_KUBECONFIG"
	envRequireK8s   = "HELIKON_REQUIRE_K8S"
	envImage        = "HELIKON_K8S_IMAGE"
	envRuntimeClass = "HELIKON_K8S_RUNTIMECLASS"
)

// real is a test's view of the real cluster.
type real struct {
	kubeconfig string
	ns         string
	kube       kubernetes.Interface
	sandboxes  sandboxclient.Interface
	ext        extclient.Interface
}

// realCluster returns the real cluster with a fresh namespace, deleted when
// the test ends; without one it skips the test, or fails it when
// HELIKON_REQUIRE_K8S is set.
func realCluster(t testing.TB) *real {
	t.Helper()
	kc := os.Getenv(envKubeconfig)
	if kc == "" {
		if os.Getenv(envRequireK8s) != "" {
			t.Fatalf("%s is set and %s is not: bring a cluster up with testdata/cluster/up.sh", envRequireK8s, envKubeconfig)
		}
		t.Skipf("no real cluster: %s is unset (testdata/cluster/up.sh brings one up)", envKubeconfig)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatalf("%s=%s: %v", envKubeconfig, kc, err)
	}
	r := &real{kubeconfig: kc}
	if r.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if r.sandboxes, err = sandboxclient.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if r.ext, err = extclient.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	r.ns = "helikon-rt-" + hex.EncodeToString(b)
	ctx := context.Background()
	if _, err := r.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", r.ns, err)
	}
	t.Cleanup(func() {
		// The pods first, without the grace period, so that the namespace goes quickly.
		_ = r.kube.CoreV1().Pods(r.ns).DeleteCollection(ctx, *metav1.NewDeleteOptions(0), metav1.ListOptions{})
		_ = r.kube.CoreV1().Namespaces().Delete(ctx, r.ns, metav1.DeleteOptions{})
	})
	// The service account admission plugin refuses pods until the namespace's default account exists.
	r.eventually(t, 60*time.Second, "the namespace's default service account", func() (bool, error) {
		_, err := r.kube.CoreV1().ServiceAccounts(r.ns).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	return r
}

// eventually polls cond every 50 ms until it is true, failing the test
// after limit (a bound on a hung cluster, not a speed assertion).
func (r *real) eventually(t testing.TB, limit time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v (last error: %v)", what, limit, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// template creates a SandboxTemplate like testdata/cluster/manifests.yaml's
// in r's namespace, in the runtime class rc ("" for none), changed by
// edit when not nil.
func (r *real) template(t testing.TB, name, rc string, edit func(*extv1alpha1.SandboxTemplate)) {
	t.Helper()
	image := os.Getenv(envImage)
	if image == "" {
		image = "helikon.test/busybox:1"
	}
	grace := int64(1)
	no := false
	tmpl := &extv1alpha1.SandboxTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns},
		Spec: extv1alpha1.SandboxTemplateSpec{PodTemplate: sandboxv1alpha1.PodTemplate{
			ObjectMeta: sandboxv1alpha1.PodMetadata{Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{
				AutomountServiceAccountToken:  &no,
				TerminationGracePeriodSeconds: &grace,
				Containers: []corev1.Container{{
					Name: "main", Image: image, ImagePullPolicy: corev1.PullNever,
					// A real template needs a command that keeps the pod running, and sleep as PID 1 ignores
					// SIGTERM: hence the short grace period above.
					Command: []string{"sleep", "2147483647"}, WorkingDir: "/workspace",
				}},
			},
		}},
	}
	if rc != "" {
		tmpl.Spec.PodTemplate.Spec.RuntimeClassName = &rc
	}
	if edit != nil {
		edit(tmpl)
	}
	if _, err := r.ext.ExtensionsV1alpha1().SandboxTemplates(r.ns).Create(context.Background(), tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create template %s: %v", name, err)
	}
}

// engine returns an engine on r's namespace with opts.
func (r *real) engine(t testing.TB, opts agentsandbox.Options) *agentsandbox.Engine {
	t.Helper()
	opts.Kubeconfig, opts.Namespace = r.kubeconfig, r.ns
	if opts.PollInterval == 0 {
		opts.PollInterval = 50 * time.Millisecond
	}
	if opts.ReadyTimeout == 0 {
		opts.ReadyTimeout = 120 * time.Second
	}
	e, err := agentsandbox.New(&opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// claims lists the claims in r's namespace.
func (r *real) claims(t testing.TB) []extv1alpha1.SandboxClaim {
	t.Helper()
	l, err := r.ext.ExtensionsV1alpha1().SandboxClaims(r.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// pool creates a warm pool of replicas sandboxes of template and, when
// replicas > 0, waits until they are all ready.
func (r *real) pool(t testing.TB, name, template string, replicas int32) {
	t.Helper()
	ctx := context.Background()
	p := &extv1alpha1.SandboxWarmPool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: r.ns},
		Spec:       extv1alpha1.SandboxWarmPoolSpec{Replicas: replicas, TemplateRef: extv1alpha1.SandboxTemplateRef{Name: template}},
	}
	if _, err := r.ext.ExtensionsV1alpha1().SandboxWarmPools(r.ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create warm pool %s: %v", name, err)
	}
	r.waitPool(t, name, replicas)
}

// waitPool waits until the pool has replicas ready sandboxes.
func (r *real) waitPool(t testing.TB, name string, replicas int32) {
	t.Helper()
	r.eventually(t, 120*time.Second, "warm pool "+name+" ready", func() (bool, error) {
		p, err := r.ext.ExtensionsV1alpha1().SandboxWarmPools(r.ns).Get(context.Background(), name, metav1.GetOptions{})
		return err == nil && p.Status.ReadyReplicas == replicas, err
	})
}

// TestRealConformance runs the workspace contract's suite against claims on
// the real cluster: plain runc pods, and gVisor pods where
// HELIKON_K8S_RUNTIMECLASS names a runsc class.
func TestRealConformance(t *testing.T) {
	r := realCluster(t)
	classes := []string{""}
	if rc := os.Getenv(envRuntimeClass); rc != "" {
		classes = append(classes, rc)
	}
	for _, rc := range classes {
		t.Run(map[bool]string{true: "runc", false: rc}[rc == ""], func(t *testing.T) {
			name := "conf-" + map[bool]string{true: "runc", false: rc}[rc == ""]
			r.template(t, name, rc, nil)
			e := r.engine(t, agentsandbox.Options{Template: name})
			var n atomic.Int64
			workspacetest.Run(t, func(t *testing.T) workspace.Workspace {
				ws, err := e.Create(t.Context(), fmt.Sprintf("conf%d", n.Add(1)))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { ws.Close(context.Background()) })
				return ws
			}, &workspacetest.Options{Remote: true, Engine: agentsandbox.EngineName})
		})
	}
}

func TestRealLifecycle(t *testing.T) {
	r := realCluster(t)
	r.template(t, "t", "", nil)
	e := r.engine(t, agentsandbox.Options{Template: "t", Labels: map[string]string{"team": "ml"}})
	ctx := t.Context()
	ws, err := e.Create(ctx, "Sess_1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close(context.Background()) })
	if _, err := ws.WriteFile(ctx, "script.sh", []byte("echo made > made.txt; exit 7\n")); err != nil {
		t.Fatal(err)
	}
	res, err := ws.Run(ctx, &backend.Request{Command: "sh script.sh"})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 7 {
		t.Fatalf("sh script.sh: %+v, %v; want exit 7", res, err)
	}
	if got := workspacetest.Sh(t, ws, "cat made.txt; pwd"); got != "made\n/workspace\n" {
		t.Errorf("the second command saw %q, want the file the first made, in the template's workingDir", got)
	}
	claim, err := r.ext.ExtensionsV1alpha1().SandboxClaims(r.ns).Get(ctx, ws.Info().ID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{workspace.LabelManaged, workspace.LabelSession, workspace.LabelHost, workspace.LabelUser, workspace.LabelCreated, "team"} {
		if _, ok := claim.Labels[k]; !ok {
			t.Errorf("the claim lacks label %s (the API server accepted it, so it is a valid label)", k)
		}
	}
	list, err := e.List(ctx)
	if err != nil || len(list) != 1 || list[0].Session != "Sess_1" || list[0].ID != ws.Info().ID || list[0].State != "ready" {
		t.Fatalf("List = %+v, %v; want the one ready claim of Sess_1", list, err)
	}
	again, err := e.Attach(ctx, "Sess_1")
	if err != nil {
		t.Fatal(err)
	}
	if got := workspacetest.Sh(t, again, "cat made.txt"); got != "made\n" || !again.Info().Attached {
		t.Errorf("attached workspace read %q (Info %+v)", got, again.Info())
	}
	if _, err := e.Create(ctx, "Sess_1"); err == nil {
		t.Error("a second Create of one session succeeded")
	}
	pod := strings.TrimPrefix(ws.(*agentsandbox.Workspace).Pod(), r.ns+"/")
	if err := ws.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Run(ctx, &backend.Request{Command: "true"}); !errors.Is(err, workspace.ErrGone) {
		t.Errorf("Run after Close: %v, want ErrGone", err)
	}
	if l := r.claims(t); len(l) != 0 {
		t.Errorf("the claim outlived Close: %s", l[0].Name)
	}
	// The controller's owner references take the Sandbox and its pod with the claim.
	r.eventually(t, 60*time.Second, "pod "+pod+" deleted with its claim", func() (bool, error) {
		_, err := r.kube.CoreV1().Pods(r.ns).Get(ctx, pod, metav1.GetOptions{})
		return apierrors.IsNotFound(err), err
	})
}

func TestRealTimeoutKillsTheCommandsProcessTreeInThePod(t *testing.T) {
	r := realCluster(t)
	r.template(t, "t", "", nil)
	ws := create(t, r.engine(t, agentsandbox.Options{Template: "t"}), "s1")
	ctx := t.Context()
	for _, tc := range []struct {
		name   string
		cancel bool
	}{{"Timeout", false}, {"Cancel", true}} {
		t.Run(tc.name, func(t *testing.T) {
			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			req := &backend.Request{Command: "sleep 600 & echo $! > child; echo $$ > parent; sleep 600"}
			if tc.cancel {
				go func() {
					for !strings.Contains(workspacetest.Sh(t, ws, "cat parent 2>/dev/null || true"), "\n") {
						time.Sleep(20 * time.Millisecond)
					}
					cancel()
				}()
			} else {
				req.Timeout = time.Second
			}
			res, err := ws.Run(rctx, req)
			if tc.cancel != (err != nil) {
				t.Fatalf("Run: %v", err)
			}
			if !tc.cancel && (!res.TimedOut || res.ExitCode != nil) {
				t.Fatalf("result %+v, want a timeout", res)
			}
			// The kill runs as a second exec; the processes are gone once it has returned.
			for _, f := range []string{"parent", "child"} {
				got := workspacetest.Sh(t, ws, "p=$(cat "+f+"); rm "+f+"; if [ -d /proc/$p ] && ! grep -q '^State:.*Z' /proc/$p/status; then echo running $p; fi")
				if got != "" {
					t.Errorf("the %s process still runs after the command was stopped: %s", f, got)
				}
			}
		})
	}
}

func TestRealFaults(t *testing.T) {
	r := realCluster(t)
	r.template(t, "t", "", nil)
	// A pod that never becomes ready: its image is not on the node and may not be pulled.
	r.template(t, "unready", "", func(tmpl *extv1alpha1.SandboxTemplate) {
		tmpl.Spec.PodTemplate.Spec.Containers[0].Image = "helikon.test/not-there:1"
	})
	ctx := t.Context()

	t.Run("MissingTemplate", func(t *testing.T) {
		_, err := r.engine(t, agentsandbox.Options{Template: "nope"}).Create(ctx, "s-missing")
		if !errors.Is(err, agentsandbox.ErrTemplate) || !strings.Contains(err.Error(), "nope") {
			t.Fatalf("Create: %v, want ErrTemplate naming the template", err)
		}
		if l := r.claims(t); len(l) != 0 {
			t.Errorf("a claim was created: %s", l[0].Name)
		}
	})

	t.Run("PodNeverReady", func(t *testing.T) {
		_, err := r.engine(t, agentsandbox.Options{Template: "unready", ReadyTimeout: 5 * time.Second}).Create(ctx, "s-unready")
		if !errors.Is(err, agentsandbox.ErrNotReady) {
			t.Fatalf("Create: %v, want ErrNotReady", err)
		}
		t.Logf("ErrNotReady says: %v", err)
		if l := r.claims(t); len(l) != 0 {
			t.Errorf("the claim was left behind: %s", l[0].Name)
		}
	})

	t.Run("EmptyWarmPool", func(t *testing.T) {
		r.pool(t, "empty", "t", 0)
		_, err := r.engine(t, agentsandbox.Options{WarmPool: "empty"}).Create(ctx, "s-empty")
		if !errors.Is(err, agentsandbox.ErrWarmPoolEmpty) || !strings.Contains(err.Error(), "empty") {
			t.Fatalf("Create: %v, want ErrWarmPoolEmpty naming the pool", err)
		}
		if l := r.claims(t); len(l) != 0 {
			t.Errorf("a claim was created: %s", l[0].Name)
		}
	})

	e := r.engine(t, agentsandbox.Options{Template: "t"})
	for _, tc := range []struct {
		name, why string
		do        func(ctx context.Context, ws *agentsandbox.Workspace, claim, pod string) error
	}{
		// The Sandbox controller recreates the pod under its name, empty.
		{"PodDeleted", "", func(ctx context.Context, ws *agentsandbox.Workspace, _, pod string) error {
			return r.kube.CoreV1().Pods(r.ns).Delete(ctx, pod, metav1.DeleteOptions{})
		}},
		{"ClaimDeletedBySomeoneElse", "", func(ctx context.Context, ws *agentsandbox.Workspace, claim, _ string) error {
			return r.ext.ExtensionsV1alpha1().SandboxClaims(r.ns).Delete(ctx, claim, metav1.DeleteOptions{})
		}},
		{"SandboxDeletedBySomeoneElse", "", func(ctx context.Context, ws *agentsandbox.Workspace, _, pod string) error {
			// The claim's Sandbox has the pod's name.
			return r.sandboxes.AgentsV1alpha1().Sandboxes(r.ns).Delete(ctx, pod, metav1.DeleteOptions{})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := create(t, e, "s-"+strings.ToLower(tc.name)).(*agentsandbox.Workspace)
			workspacetest.Sh(t, ws, "echo before > f")
			pod := strings.TrimPrefix(ws.Pod(), r.ns+"/")
			if err := tc.do(ctx, ws, ws.Info().ID, pod); err != nil {
				t.Fatal(err)
			}
			// Until the cluster has acted, a command may still reach the old pod; after, every call is ErrGone.
			r.eventually(t, 60*time.Second, "ErrGone after "+tc.name, func() (bool, error) {
				_, err := ws.Run(ctx, &backend.Request{Command: "cat f"})
				return errors.Is(err, workspace.ErrGone), err
			})
			if _, err := ws.Stat(ctx, "f"); !errors.Is(err, workspace.ErrGone) {
				t.Errorf("Stat: %v, want ErrGone", err)
			}
			if err := ws.Close(ctx); err != nil {
				t.Errorf("Close: %v", err)
			}
			if l := r.claims(t); len(l) != 0 && l[0].DeletionTimestamp == nil {
				t.Errorf("Close left the claim %s", l[0].Name)
			}
		})
	}
}

// TestRealWarmPoolClaimAdoptsAWarmPod claims from a pool of one pre-warmed
// sandbox: the workspace runs in the pod the pool had made before the
// claim, and the pool makes a new one.
func TestRealWarmPoolClaimAdoptsAWarmPod(t *testing.T) {
	r := realCluster(t)
	r.template(t, "t", "", nil)
	r.pool(t, "pool", "t", 1)
	ctx := t.Context()
	before, err := r.kube.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil || len(before.Items) != 1 {
		t.Fatalf("pods before the claim: %v, %v; want the pool's one", before, err)
	}
	ws := create(t, r.engine(t, agentsandbox.Options{WarmPool: "pool"}), "s1")
	if pod := ws.(*agentsandbox.Workspace).Pod(); pod != r.ns+"/"+before.Items[0].Name {
		t.Errorf("the workspace runs in %s, want the pool's pre-warmed pod %s", pod, before.Items[0].Name)
	}
	if got := workspacetest.Sh(t, ws, "echo warm"); got != "warm\n" {
		t.Errorf("stdout %q", got)
	}
	r.waitPool(t, "pool", 1) // refilled
}

// TestRealGuarantees checks what Probe and a workspace report on the real
// cluster: from the pod's runtime class handler and the network policy the
// template controller really wrote.
func TestRealGuarantees(t *testing.T) {
	r := realCluster(t)
	none, osk, virt := backend.IsolationNone, backend.IsolationOSKernel, backend.IsolationVirtualized
	cases := []struct {
		name, rc     string
		edit         func(*extv1alpha1.SandboxTemplate)
		fs, sys, net backend.Isolation
		features     string
	}{
		{"Unconfined", "", nil, osk, none, osk, "seccomp Unconfined"},
		{"RuntimeDefault", "", func(tmpl *extv1alpha1.SandboxTemplate) {
			tmpl.Spec.PodTemplate.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		}, osk, osk, osk, "seccomp RuntimeDefault"},
		{"UnmanagedNetwork", "", func(tmpl *extv1alpha1.SandboxTemplate) {
			tmpl.Spec.NetworkPolicyManagement = extv1alpha1.NetworkPolicyManagementUnmanaged
		}, osk, none, none, "network not confined"},
	}
	if rc := os.Getenv(envRuntimeClass); rc != "" {
		cases = append(cases, struct {
			name, rc     string
			edit         func(*extv1alpha1.SandboxTemplate)
			fs, sys, net backend.Isolation
			features     string
		}{"GVisor", rc, nil, virt, virt, osk, "handler runsc"})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := strings.ToLower(tc.name)
			r.template(t, name, tc.rc, tc.edit)
			e := r.engine(t, agentsandbox.Options{Template: name})
			ctx := t.Context()
			if tc.net == osk {
				// The template controller writes the policy after the template: wait for it.
				r.eventually(t, 60*time.Second, "the template's network policy", func() (bool, error) {
					_, err := r.kube.NetworkingV1().NetworkPolicies(r.ns).Get(ctx, name+"-network-policy", metav1.GetOptions{})
					return err == nil, err
				})
			}
			probe, err := e.Probe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ws := create(t, e, "s1")
			for what, g := range map[string]backend.Guarantees{"Probe": probe, "Workspace": ws.Guarantees()} {
				if g.Filesystem != tc.fs || g.Syscalls != tc.sys || g.Network != tc.net {
					t.Errorf("%s: %v, want filesystem %v syscalls %v network %v", what, g, tc.fs, tc.sys, tc.net)
				}
				if !strings.Contains(strings.Join(g.Features, "; "), tc.features) {
					t.Errorf("%s: features %q, want one saying %q", what, g.Features, tc.features)
				}
			}
			if tc.rc != "" {
				// What runs is gVisor's kernel, not the host's: its dmesg says so.
				if got := workspacetest.Sh(t, ws, "dmesg 2>&1 | head -n 3"); !strings.Contains(got, "gVisor") {
					t.Errorf("dmesg in a %s pod: %q, want gVisor's", tc.rc, got)
				}
			}
		})
	}
}

// BenchmarkRealClaimToFirstCommand measures Create plus a first command:
// Cold from a template (the controller makes the Sandbox and the kubelet
// starts its pod), Warm from a pool that holds a ready sandbox.
func BenchmarkRealClaimToFirstCommand(b *testing.B) {
	r := realCluster(b)
	r.template(b, "t", "", nil)
	pooled := false // b.Run runs each function more than once: the pool is made once
	for _, warm := range []bool{false, true} {
		b.Run(map[bool]string{false: "Cold", true: "Warm"}[warm], func(b *testing.B) {
			opts := agentsandbox.Options{Template: "t"}
			if warm {
				if !pooled {
					r.pool(b, "pool", "t", 1)
					pooled = true
				}
				opts = agentsandbox.Options{WarmPool: "pool"}
			}
			e := r.engine(b, opts)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if warm {
					b.StopTimer()
					r.waitPool(b, "pool", 1)
					b.StartTimer()
				}
				ws, err := e.Create(ctx, fmt.Sprintf("bench%d", i))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ws.Run(ctx, &backend.Request{Command: "true"}); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = ws.Close(ctx)
				b.StartTimer()
			}
		})
	}
}
