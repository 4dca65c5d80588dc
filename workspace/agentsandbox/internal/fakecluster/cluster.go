// Package fakecluster is a Kubernetes cluster with agent-sandbox installed,
// made of the client libraries' own fakes, for the engine's tests: the
// fake clientsets of client-go and of agent-sandbox v0.2.1, a reconciler
// that does what agent-sandbox's controllers do to the objects the engine
// reads (binding a claim, adopting a warm pod, readiness, the garbage
// collection of owned objects), a kubelet that makes pods run, and an HTTP
// server of the pods' exec subresource that runs each command as a real
// process in a directory of its own per pod, so that state between
// commands is real.
//
// The reconciler follows, step by step, the code of agent-sandbox v0.2.1:
// extensions/controllers/sandboxclaim_controller.go (reconcileActive,
// getOrCreateSandbox, createSandbox, tryAdoptPodFromPool,
// computeReadyCondition), controllers/sandbox_controller.go (reconcilePod,
// computeReadyCondition: Ready when the pod is Ready and the Service
// exists), extensions/controllers/sandboxwarmpool_controller.go (pool pods
// named after the pool, labelled with the pool's and the template's
// hashes, owned by the pool; status.readyReplicas) and
// extensions/controllers/sandboxtemplate_controller.go (the template's
// NetworkPolicy, named TEMPLATE-network-policy, secure by default).
package fakecluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2"
	sandboxv1alpha1 "sigs.k8s.io/agent-sandbox/api/v1alpha1"
	sandboxfake "sigs.k8s.io/agent-sandbox/clients/k8s/clientset/versioned/fake"
	extfake "sigs.k8s.io/agent-sandbox/clients/k8s/extensions/clientset/versioned/fake"
	extv1alpha1 "sigs.k8s.io/agent-sandbox/extensions/api/v1alpha1"
)

// quietKlog silences klog, through which the streaming servers log every
// closed connection, once: before the first server runs, since setting the
// logger races with logging.
var quietKlog sync.Once

// Labels and annotations of agent-sandbox v0.2.1.
const (
	sandboxNameHashLabel   = "agents.x-k8s.io/sandbox-name-hash"         // controllers/sandbox_controller.go
	podNameAnnotation      = "agents.x-k8s.io/pod-name"                  // controllers.SandboxPodNameAnnotation
	templateRefHashLabel   = "agents.x-k8s.io/sandbox-template-ref-hash" // extensions/controllers
	poolLabel              = "agents.x-k8s.io/pool"                      // sandboxwarmpool_controller.go
	Namespace              = "helikon-test"
	sandboxGroupVersion    = "agents.x-k8s.io/v1alpha1"
	extensionsGroupVersion = "extensions.agents.x-k8s.io/v1alpha1"
)

// Cluster is the fake cluster. Its fields are the clientsets the engine is
// given; Config reaches the exec server.
type Cluster struct {
	Kube       *kubefake.Clientset
	Sandboxes  *sandboxfake.Clientset
	Extensions *extfake.Clientset
	Config     *rest.Config
	Exec       *ExecServer

	// Paused stops the controllers: claims stay unbound.
	Paused atomic.Bool

	root string
	mu   sync.Mutex
	dirs map[types.UID]string // a running pod's directory
	stop chan struct{}
	done chan struct{}
}

// New starts a fake cluster whose controllers reconcile every few
// milliseconds until the test ends. objects are created first (templates,
// pools, runtime classes).
func New(t *testing.T, objects ...runtime.Object) *Cluster {
	t.Helper()
	c := &Cluster{
		Kube:       kubefake.NewClientset(),
		Sandboxes:  sandboxfake.NewSimpleClientset(),
		Extensions: extfake.NewSimpleClientset(),
		root:       t.TempDir(),
		dirs:       map[types.UID]string{},
		stop:       make(chan struct{}),
		done:       make(chan struct{}),
	}
	// The API server gives every object a UID and a creation time.
	for _, f := range []*k8stesting.Fake{&c.Kube.Fake, &c.Sandboxes.Fake, &c.Extensions.Fake} {
		f.PrependReactor("create", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
			if obj, err := meta.Accessor(a.(k8stesting.CreateAction).GetObject()); err == nil {
				obj.SetUID(types.UID(randomHex(16)))
				obj.SetCreationTimestamp(metav1.Now())
			}
			return false, nil, nil
		})
	}
	ctx := context.Background()
	for _, o := range objects {
		if err := c.create(ctx, o); err != nil {
			t.Fatalf("fakecluster: creating %T: %v", o, err)
		}
	}
	quietKlog.Do(func() { klog.SetLogger(logr.Discard()) })
	c.Exec = newExecServer(t, c)
	c.Config = &rest.Config{Host: c.Exec.URL()}
	go c.loop()
	t.Cleanup(func() {
		close(c.stop)
		<-c.done
		c.Exec.close()
	})
	return c
}

func (c *Cluster) create(ctx context.Context, o runtime.Object) error {
	var err error
	switch v := o.(type) {
	case *extv1alpha1.SandboxTemplate:
		_, err = c.Extensions.ExtensionsV1alpha1().SandboxTemplates(v.Namespace).Create(ctx, v, metav1.CreateOptions{})
	case *extv1alpha1.SandboxWarmPool:
		_, err = c.Extensions.ExtensionsV1alpha1().SandboxWarmPools(v.Namespace).Create(ctx, v, metav1.CreateOptions{})
	case *nodev1.RuntimeClass:
		_, err = c.Kube.NodeV1().RuntimeClasses().Create(ctx, v, metav1.CreateOptions{})
	case *networkingv1.NetworkPolicy:
		_, err = c.Kube.NetworkingV1().NetworkPolicies(v.Namespace).Create(ctx, v, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("unsupported object %T", o)
	}
	return err
}

func (c *Cluster) loop() {
	defer close(c.done)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-tick.C:
			if !c.Paused.Load() {
				c.Reconcile(context.Background())
			}
		}
	}
}

// Reconcile runs every controller once.
func (c *Cluster) Reconcile(ctx context.Context) {
	c.reconcileTemplates(ctx)
	c.reconcilePools(ctx)
	c.reconcileClaims(ctx)
	c.reconcileSandboxes(ctx)
	c.collectGarbage(ctx)
	c.kubelet(ctx)
}

// Template returns a SandboxTemplate whose pod has one container, "main",
// in the runtime class rc ("" for none).
func Template(name, rc string) *extv1alpha1.SandboxTemplate {
	t := &extv1alpha1.SandboxTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
		Spec: extv1alpha1.SandboxTemplateSpec{PodTemplate: sandboxv1alpha1.PodTemplate{
			ObjectMeta: sandboxv1alpha1.PodMetadata{Labels: map[string]string{"app": name}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
		}},
	}
	if rc != "" {
		t.Spec.PodTemplate.Spec.RuntimeClassName = &rc
	}
	return t
}

// WarmPool returns a SandboxWarmPool of replicas pods of template.
func WarmPool(name, template string, replicas int32) *extv1alpha1.SandboxWarmPool {
	return &extv1alpha1.SandboxWarmPool{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace},
		Spec:       extv1alpha1.SandboxWarmPoolSpec{Replicas: replicas, TemplateRef: extv1alpha1.SandboxTemplateRef{Name: template}},
	}
}

// RuntimeClass returns a RuntimeClass with handler.
func RuntimeClass(name, handler string) *nodev1.RuntimeClass {
	return &nodev1.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Handler: handler}
}

// NameHash is the controllers' NameHash (controllers/sandbox_controller.go).
func NameHash(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%08x", h.Sum32())
}

// reconcileTemplates keeps the NetworkPolicy of each Managed template, as
// sandboxtemplate_controller.go: the secure-by-default policy when the
// template has none of its own.
func (c *Cluster) reconcileTemplates(ctx context.Context) {
	list, err := c.Extensions.ExtensionsV1alpha1().SandboxTemplates(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	nps := c.Kube.NetworkingV1().NetworkPolicies(Namespace)
	for _, t := range list.Items {
		name := t.Name + "-network-policy"
		if t.Spec.NetworkPolicyManagement == extv1alpha1.NetworkPolicyManagementUnmanaged {
			_ = nps.Delete(ctx, name, metav1.DeleteOptions{})
			continue
		}
		if _, err := nps.Get(ctx, name, metav1.GetOptions{}); err == nil {
			continue
		}
		spec := networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: map[string]string{templateRefHashLabel: NameHash(t.Name)}},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress},
		}
		if t.Spec.NetworkPolicy == nil {
			spec.Ingress = []networkingv1.NetworkPolicyIngressRule{{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "sandbox-router"}}}}}}
			spec.Egress = []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{
				{IPBlock: &networkingv1.IPBlock{CIDR: "0.0.0.0/0", Except: []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"}}},
				{IPBlock: &networkingv1.IPBlock{CIDR: "::/0", Except: []string{"fc00::/7"}}},
			}}}
		} else {
			spec.Ingress, spec.Egress = t.Spec.NetworkPolicy.Ingress, t.Spec.NetworkPolicy.Egress
		}
		np := &networkingv1.NetworkPolicy{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: Namespace, OwnerReferences: []metav1.OwnerReference{owner(extensionsGroupVersion, "SandboxTemplate", t.Name, t.UID)}}, Spec: spec}
		_, _ = nps.Create(ctx, np, metav1.CreateOptions{})
	}
}

// reconcilePools keeps spec.replicas pods per pool and its status, as
// sandboxwarmpool_controller.go.
func (c *Cluster) reconcilePools(ctx context.Context) {
	pools := c.Extensions.ExtensionsV1alpha1().SandboxWarmPools(Namespace)
	list, err := pools.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, p := range list.Items {
		pods, err := c.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: poolLabel + "=" + NameHash(p.Name)})
		if err != nil {
			continue
		}
		var ready int32
		for _, pod := range pods.Items {
			if podReady(&pod) {
				ready++
			}
		}
		if n := int32(len(pods.Items)); n < p.Spec.Replicas {
			t, err := c.Extensions.ExtensionsV1alpha1().SandboxTemplates(Namespace).Get(ctx, p.Spec.TemplateRef.Name, metav1.GetOptions{})
			if err == nil {
				l := map[string]string{poolLabel: NameHash(p.Name), templateRefHashLabel: NameHash(p.Spec.TemplateRef.Name)}
				for k, v := range t.Spec.PodTemplate.ObjectMeta.Labels {
					l[k] = v
				}
				pod := &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: p.Name + "-" + randomHex(5), Namespace: Namespace, Labels: l,
						OwnerReferences: []metav1.OwnerReference{owner(extensionsGroupVersion, "SandboxWarmPool", p.Name, p.UID)}},
					Spec: *t.Spec.PodTemplate.Spec.DeepCopy(),
				}
				_, _ = c.Kube.CoreV1().Pods(Namespace).Create(ctx, pod, metav1.CreateOptions{})
			}
		}
		if p.Status.Replicas != int32(len(pods.Items)) || p.Status.ReadyReplicas != ready {
			p.Status.Replicas, p.Status.ReadyReplicas = int32(len(pods.Items)), ready
			_, _ = pools.UpdateStatus(ctx, &p, metav1.UpdateOptions{})
		}
	}
}

// reconcileClaims binds each claim to a Sandbox named after it, adopting a
// warm pod of its template when there is one, and forwards the Sandbox's
// Ready condition, as sandboxclaim_controller.go.
func (c *Cluster) reconcileClaims(ctx context.Context) {
	claims := c.Extensions.ExtensionsV1alpha1().SandboxClaims(Namespace)
	list, err := claims.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, claim := range list.Items {
		cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "SandboxNotReady", Message: "Sandbox is not ready", ObservedGeneration: claim.Generation}
		sb, err := c.Sandboxes.AgentsV1alpha1().Sandboxes(Namespace).Get(ctx, claim.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			sb = nil
			t, terr := c.Extensions.ExtensionsV1alpha1().SandboxTemplates(Namespace).Get(ctx, claim.Spec.TemplateRef.Name, metav1.GetOptions{})
			if terr != nil {
				cond.Reason, cond.Message = "TemplateNotFound", fmt.Sprintf("SandboxTemplate %q not found", claim.Spec.TemplateRef.Name)
			} else {
				sb = c.createSandbox(ctx, &claim, t)
			}
		} else if err != nil {
			continue
		}
		if sb != nil {
			claim.Status.SandboxStatus.Name = sb.Name
			if sc := meta.FindStatusCondition(sb.Status.Conditions, "Ready"); sc != nil {
				cond = *sc
			}
		} else if cond.Reason != "TemplateNotFound" {
			cond.Reason, cond.Message = "SandboxMissing", "Sandbox does not exist"
		}
		old := meta.FindStatusCondition(claim.Status.Conditions, "Ready")
		if old == nil || old.Status != cond.Status || old.Reason != cond.Reason || claim.Status.SandboxStatus.Name != "" && old.Message != cond.Message {
			meta.SetStatusCondition(&claim.Status.Conditions, cond)
			_, _ = claims.UpdateStatus(ctx, &claim, metav1.UpdateOptions{})
		}
	}
}

// createSandbox is createSandbox and tryAdoptPodFromPool of
// sandboxclaim_controller.go.
func (c *Cluster) createSandbox(ctx context.Context, claim *extv1alpha1.SandboxClaim, t *extv1alpha1.SandboxTemplate) *sandboxv1alpha1.Sandbox {
	one := int32(1)
	sb := &sandboxv1alpha1.Sandbox{
		ObjectMeta: metav1.ObjectMeta{Name: claim.Name, Namespace: Namespace, Annotations: map[string]string{},
			OwnerReferences: []metav1.OwnerReference{owner(extensionsGroupVersion, "SandboxClaim", claim.Name, claim.UID)}},
		Spec: sandboxv1alpha1.SandboxSpec{Replicas: &one},
	}
	t.Spec.PodTemplate.DeepCopyInto(&sb.Spec.PodTemplate)
	if sb.Spec.PodTemplate.ObjectMeta.Labels == nil {
		sb.Spec.PodTemplate.ObjectMeta.Labels = map[string]string{}
	}
	sb.Spec.PodTemplate.ObjectMeta.Labels[extv1alpha1.SandboxIDLabel] = string(claim.UID)
	sb.Spec.PodTemplate.ObjectMeta.Labels[templateRefHashLabel] = NameHash(t.Name)
	pods, err := c.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: templateRefHashLabel + "=" + NameHash(t.Name)})
	if err != nil {
		return nil
	}
	for _, pod := range pods.Items {
		ref := metav1.GetControllerOf(&pod)
		if pod.DeletionTimestamp != nil || ref == nil || ref.Kind != "SandboxWarmPool" {
			continue
		}
		delete(pod.Labels, poolLabel)
		pod.OwnerReferences = nil
		pod.Labels[sandboxNameHashLabel] = NameHash(claim.Name)
		pod.Labels[extv1alpha1.SandboxIDLabel] = string(claim.UID)
		pod.Labels[templateRefHashLabel] = NameHash(t.Name)
		if _, err := c.Kube.CoreV1().Pods(Namespace).Update(ctx, &pod, metav1.UpdateOptions{}); err != nil {
			return nil
		}
		sb.Annotations[podNameAnnotation] = pod.Name
		break
	}
	created, err := c.Sandboxes.AgentsV1alpha1().Sandboxes(Namespace).Create(ctx, sb, metav1.CreateOptions{})
	if err != nil {
		return nil
	}
	return created
}

// reconcileSandboxes gives each Sandbox its pod and Service and its Ready
// condition, as sandbox_controller.go.
func (c *Cluster) reconcileSandboxes(ctx context.Context) {
	sbs := c.Sandboxes.AgentsV1alpha1().Sandboxes(Namespace)
	list, err := sbs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, sb := range list.Items {
		podName := sb.Name
		if a := sb.Annotations[podNameAnnotation]; a != "" {
			podName = a
		}
		pod, err := c.Kube.CoreV1().Pods(Namespace).Get(ctx, podName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) && sb.Annotations[podNameAnnotation] == "":
			l := map[string]string{sandboxNameHashLabel: NameHash(sb.Name)}
			for k, v := range sb.Spec.PodTemplate.ObjectMeta.Labels {
				l[k] = v
			}
			pod = &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: sb.Name, Namespace: Namespace, Labels: l,
					OwnerReferences: []metav1.OwnerReference{owner(sandboxGroupVersion, "Sandbox", sb.Name, sb.UID)}},
				Spec: *sb.Spec.PodTemplate.Spec.DeepCopy(),
			}
			pod, err = c.Kube.CoreV1().Pods(Namespace).Create(ctx, pod, metav1.CreateOptions{})
		case err == nil && metav1.GetControllerOf(pod) == nil:
			pod.OwnerReferences = []metav1.OwnerReference{owner(sandboxGroupVersion, "Sandbox", sb.Name, sb.UID)}
			pod, err = c.Kube.CoreV1().Pods(Namespace).Update(ctx, pod, metav1.UpdateOptions{})
		}
		svcs := c.Kube.CoreV1().Services(Namespace)
		if _, serr := svcs.Get(ctx, sb.Name, metav1.GetOptions{}); apierrors.IsNotFound(serr) {
			_, _ = svcs.Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: sb.Name, Namespace: Namespace,
				OwnerReferences: []metav1.OwnerReference{owner(sandboxGroupVersion, "Sandbox", sb.Name, sb.UID)}}}, metav1.CreateOptions{})
		}
		cond := metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: "DependenciesNotReady", Message: "Pod does not exist; Service Exists", ObservedGeneration: sb.Generation}
		if err == nil {
			cond.Message = "Pod exists with phase: " + string(pod.Status.Phase) + "; Service Exists"
			if podReady(pod) {
				cond.Status, cond.Reason, cond.Message = metav1.ConditionTrue, "DependenciesReady", "Pod is Ready; Service Exists"
			}
		} else if !apierrors.IsNotFound(err) {
			cond.Reason, cond.Message = "ReconcilerError", "Error seen: "+err.Error()
		}
		old := meta.FindStatusCondition(sb.Status.Conditions, "Ready")
		if old == nil || old.Status != cond.Status || old.Message != cond.Message {
			meta.SetStatusCondition(&sb.Status.Conditions, cond)
			sb.Status.Replicas = 1
			_, _ = sbs.UpdateStatus(ctx, &sb, metav1.UpdateOptions{})
		}
	}
}

// collectGarbage is the garbage collector's background deletion: an
// object whose controlling owner is gone is deleted.
func (c *Cluster) collectGarbage(ctx context.Context) {
	claimUIDs := map[types.UID]bool{}
	if l, err := c.Extensions.ExtensionsV1alpha1().SandboxClaims(Namespace).List(ctx, metav1.ListOptions{}); err == nil {
		for _, x := range l.Items {
			claimUIDs[x.UID] = true
		}
	}
	sbUIDs := map[types.UID]bool{}
	if l, err := c.Sandboxes.AgentsV1alpha1().Sandboxes(Namespace).List(ctx, metav1.ListOptions{}); err == nil {
		for _, x := range l.Items {
			if ref := metav1.GetControllerOf(&x); ref != nil && ref.Kind == "SandboxClaim" && !claimUIDs[ref.UID] {
				_ = c.Sandboxes.AgentsV1alpha1().Sandboxes(Namespace).Delete(ctx, x.Name, metav1.DeleteOptions{})
				continue
			}
			sbUIDs[x.UID] = true
		}
	}
	if l, err := c.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{}); err == nil {
		for _, x := range l.Items {
			if ref := metav1.GetControllerOf(&x); ref != nil && ref.Kind == "Sandbox" && !sbUIDs[ref.UID] {
				_ = c.Kube.CoreV1().Pods(Namespace).Delete(ctx, x.Name, metav1.DeleteOptions{})
			}
		}
	}
	if l, err := c.Kube.CoreV1().Services(Namespace).List(ctx, metav1.ListOptions{}); err == nil {
		for _, x := range l.Items {
			if ref := metav1.GetControllerOf(&x); ref != nil && ref.Kind == "Sandbox" && !sbUIDs[ref.UID] {
				_ = c.Kube.CoreV1().Services(Namespace).Delete(ctx, x.Name, metav1.DeleteOptions{})
			}
		}
	}
	c.removeDirs(ctx)
}

// kubelet starts every pending pod: its directory (the container's file
// system) is created and it becomes Running and Ready.
func (c *Cluster) kubelet(ctx context.Context) {
	l, err := c.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, pod := range l.Items {
		if pod.Status.Phase != "" {
			continue
		}
		dir := filepath.Join(c.root, pod.Name+"-"+string(pod.UID)[:8])
		if err := os.MkdirAll(filepath.Join(dir, "work"), 0o755); err != nil {
			continue
		}
		c.mu.Lock()
		c.dirs[pod.UID] = filepath.Join(dir, "work")
		c.mu.Unlock()
		pod.Status.Phase = corev1.PodRunning
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		_, _ = c.Kube.CoreV1().Pods(Namespace).UpdateStatus(ctx, &pod, metav1.UpdateOptions{})
	}
}

// removeDirs deletes the directories of pods that no longer exist, as the
// container runtime does with a container's file system.
func (c *Cluster) removeDirs(ctx context.Context) {
	l, err := c.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	live := map[types.UID]bool{}
	for _, p := range l.Items {
		live[p.UID] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for uid, dir := range c.dirs {
		if !live[uid] {
			_ = os.RemoveAll(filepath.Dir(dir))
			delete(c.dirs, uid)
		}
	}
}

// Dir returns the directory a running pod's commands start in.
func (c *Cluster) Dir(uid types.UID) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.dirs[uid]
	return d, ok
}

// Evict does what the kubelet does to a pod it evicts: the pod fails with
// reason Evicted and its containers stop.
func (c *Cluster) Evict(ctx context.Context, pod string) error {
	p, err := c.Kube.CoreV1().Pods(Namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		return err
	}
	p.Status.Phase = corev1.PodFailed
	p.Status.Reason = "Evicted"
	p.Status.Message = "The node was low on resource: memory."
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	_, err = c.Kube.CoreV1().Pods(Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	return err
}

func podReady(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func owner(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	yes := true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &yes, BlockOwnerDeletion: &yes}
}

func randomHex(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}
