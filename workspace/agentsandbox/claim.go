package agentsandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	sandboxv1alpha1 "sigs.k8s.io/agent-sandbox/api/v1alpha1"
	extv1alpha1 "sigs.k8s.io/agent-sandbox/extensions/api/v1alpha1"

	"github.com/paigasus/helikon/workspace"
)

// podNameAnnotation is where the Sandbox names a pod it adopted from a warm
// pool (controllers.SandboxPodNameAnnotation, controllers/sandbox_controller.go
// at v0.2.1); without it the pod is named after the Sandbox.
const podNameAnnotation = "agents.x-k8s.io/pod-name"

// Reasons the controllers put on a Ready condition that is False and will
// stay so (extensions/controllers/sandboxclaim_controller.go at v0.2.1).
const (
	reasonTemplateNotFound = "TemplateNotFound"
	reasonClaimExpired     = extv1alpha1.ClaimExpiredReason
	reasonSandboxExpired   = sandboxv1alpha1.SandboxReasonExpired
)

// target is the pod and container a ready claim's commands run in.
type target struct {
	claim     string
	sandbox   string
	pod       string
	container string
	uid       string // the pod's UID: a pod replaced under the same name is another sandbox
}

// open waits until the claim is bound to a ready pod and returns its
// workspace.
func (e *Engine) open(ctx context.Context, c *extv1alpha1.SandboxClaim, template string, attached bool) (*Workspace, error) {
	wctx, cancel := context.WithTimeout(ctx, e.opts.ReadyTimeout)
	defer cancel()
	tg, pod, err := e.waitReady(wctx, c.Name)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("k8s: waiting for sandbox claim %s/%s: %w", e.ns, c.Name, ctx.Err())
		}
		return nil, err
	}
	g, err := e.guarantees(ctx, template, pod)
	if err != nil {
		return nil, err
	}
	ws := &Workspace{e: e, tg: tg, guar: g, info: infoOf(c)}
	ws.info.Attached = attached
	ws.info.State = "ready"
	if err := ws.init(ctx, pod); err != nil {
		return nil, err
	}
	return ws, nil
}

// waitReady polls the claim until the controller reports it Ready and its
// pod is running and ready, or fails with why it cannot become so.
func (e *Engine) waitReady(ctx context.Context, name string) (*target, *corev1.Pod, error) {
	claims := e.c.Extensions.ExtensionsV1alpha1().SandboxClaims(e.ns)
	tick := time.NewTicker(e.opts.PollInterval)
	defer tick.Stop()
	last := "the controller has not reported on it yet"
	for {
		c, err := claims.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil, nil, fmt.Errorf("k8s: %w: sandbox claim %s/%s was deleted", workspace.ErrGone, e.ns, name)
		case err != nil && ctx.Err() == nil && !pastDeadline(err):
			return nil, nil, e.apiError(err, "reading sandbox claim %s/%s", e.ns, name)
		case err == nil:
			tg, pod, state, err := e.bound(ctx, c)
			if err != nil || tg != nil {
				return tg, pod, err
			}
			last = state
		}
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("k8s: %w: sandbox claim %s/%s within %v: %s; see kubectl describe sandboxclaim -n %s %s",
				ErrNotReady, e.ns, name, e.opts.ReadyTimeout, last, e.ns, name)
		case <-tick.C:
		}
	}
}

// pastDeadline reports whether err is client-go's rate limiter refusing to
// wait past the context's deadline: the ready timeout running out, not the
// API server failing (found on a real cluster, whose clients are rate
// limited; the fake clientsets are not). client-go passes
// golang.org/x/time/rate's error on as text only, so the text is matched.
func pastDeadline(err error) bool {
	return strings.Contains(err.Error(), "rate limiter Wait returned an error") && strings.Contains(err.Error(), "would exceed context deadline")
}

// bound looks at a claim once: its target when it is ready, otherwise the
// state it is in, or an error when it will not become ready.
func (e *Engine) bound(ctx context.Context, c *extv1alpha1.SandboxClaim) (*target, *corev1.Pod, string, error) {
	if c.DeletionTimestamp != nil {
		return nil, nil, "", fmt.Errorf("k8s: %w: sandbox claim %s/%s is being deleted", workspace.ErrGone, e.ns, c.Name)
	}
	cond := meta.FindStatusCondition(c.Status.Conditions, string(sandboxv1alpha1.SandboxConditionReady))
	if cond == nil {
		return nil, nil, "no Ready condition yet", nil
	}
	switch cond.Reason {
	case reasonTemplateNotFound:
		return nil, nil, "", fmt.Errorf("k8s: %w: %s", ErrTemplate, cond.Message)
	case reasonClaimExpired, reasonSandboxExpired:
		return nil, nil, "", fmt.Errorf("k8s: %w: sandbox claim %s/%s expired: %s", workspace.ErrGone, e.ns, c.Name, cond.Message)
	}
	if cond.Status != metav1.ConditionTrue || c.Status.SandboxStatus.Name == "" {
		return nil, nil, fmt.Sprintf("Ready=%s (%s: %s)", cond.Status, cond.Reason, cond.Message), nil
	}
	sb, err := e.c.Sandboxes.AgentsV1alpha1().Sandboxes(e.ns).Get(ctx, c.Status.SandboxStatus.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, "the claim names sandbox " + c.Status.SandboxStatus.Name + ", which does not exist yet", nil
	}
	if err != nil {
		return nil, nil, "", e.apiError(err, "reading sandbox %s/%s", e.ns, c.Status.SandboxStatus.Name)
	}
	podName := sb.Name
	if a := sb.Annotations[podNameAnnotation]; a != "" {
		podName = a
	}
	pod, err := e.c.Kube.CoreV1().Pods(e.ns).Get(ctx, podName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, "pod " + podName + " does not exist yet", nil
	}
	if err != nil {
		return nil, nil, "", e.apiError(err, "reading pod %s/%s", e.ns, podName)
	}
	if why := podDead(pod); why != "" {
		return nil, nil, "", fmt.Errorf("k8s: %w: pod %s/%s of sandbox claim %s %s", workspace.ErrGone, e.ns, podName, c.Name, why)
	}
	if !podReady(pod) {
		return nil, nil, fmt.Sprintf("pod %s is %s and not ready", podName, pod.Status.Phase), nil
	}
	ctr, err := e.container(pod)
	if err != nil {
		return nil, nil, "", err
	}
	return &target{claim: c.Name, sandbox: sb.Name, pod: pod.Name, container: ctr, uid: string(pod.UID)}, pod, "", nil
}

// container picks the container commands run in.
func (e *Engine) container(pod *corev1.Pod) (string, error) {
	if len(pod.Spec.Containers) == 0 {
		return "", fmt.Errorf("k8s: %w: pod %s/%s has no containers", ErrTemplate, e.ns, pod.Name)
	}
	if e.opts.Container == "" {
		return pod.Spec.Containers[0].Name, nil
	}
	var names []string
	for _, c := range pod.Spec.Containers {
		if c.Name == e.opts.Container {
			return c.Name, nil
		}
		names = append(names, c.Name)
	}
	return "", fmt.Errorf("k8s: %w: pod %s/%s has no container %q (it has %s)", ErrTemplate, e.ns, pod.Name, e.opts.Container, strings.Join(names, ", "))
}

// podReady reports whether the pod runs and its Ready condition is true.
func podReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podDead says why a pod will never run a command again (evicted, failed,
// finished, being deleted), or "" while it may.
func podDead(pod *corev1.Pod) string {
	switch {
	case pod.DeletionTimestamp != nil:
		return "is being deleted"
	case pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded:
		why := "has ended (phase " + string(pod.Status.Phase)
		if pod.Status.Reason != "" {
			why += ", reason " + pod.Status.Reason // "Evicted" for an eviction by the kubelet
		}
		if pod.Status.Message != "" {
			why += ": " + pod.Status.Message
		}
		return why + ")"
	}
	return ""
}

// claimState is a claim's state in a word, as helikon workspaces list
// shows it.
func claimState(c *extv1alpha1.SandboxClaim) string {
	if c.DeletionTimestamp != nil {
		return "deleting"
	}
	cond := meta.FindStatusCondition(c.Status.Conditions, string(sandboxv1alpha1.SandboxConditionReady))
	switch {
	case cond == nil:
		return "pending"
	case cond.Status == metav1.ConditionTrue:
		return "ready"
	case cond.Reason != "":
		return strings.ToLower(cond.Reason[:1]) + cond.Reason[1:]
	}
	return "not-ready"
}

// gone checks, after a failed exec, whether the workspace's sandbox still
// exists: an error wrapping [workspace.ErrGone] when the claim, the sandbox
// or the pod was deleted, or the pod was evicted or replaced; nil when all
// are there; an API error when that cannot be told.
func (e *Engine) gone(ctx context.Context, tg *target) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	c, err := e.c.Extensions.ExtensionsV1alpha1().SandboxClaims(e.ns).Get(ctx, tg.claim, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || err == nil && c.DeletionTimestamp != nil {
		return fmt.Errorf("k8s: %w: sandbox claim %s/%s was deleted by someone else", workspace.ErrGone, e.ns, tg.claim)
	}
	if err != nil {
		return e.apiError(err, "reading sandbox claim %s/%s", e.ns, tg.claim)
	}
	pod, err := e.c.Kube.CoreV1().Pods(e.ns).Get(ctx, tg.pod, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("k8s: %w: pod %s/%s of sandbox claim %s was deleted", workspace.ErrGone, e.ns, tg.pod, tg.claim)
	}
	if err != nil {
		return e.apiError(err, "reading pod %s/%s", e.ns, tg.pod)
	}
	if string(pod.UID) != tg.uid {
		return fmt.Errorf("k8s: %w: pod %s/%s of sandbox claim %s was replaced by a new one (its files are not the workspace's)", workspace.ErrGone, e.ns, tg.pod, tg.claim)
	}
	if why := podDead(pod); why != "" {
		return fmt.Errorf("k8s: %w: pod %s/%s of sandbox claim %s %s", workspace.ErrGone, e.ns, tg.pod, tg.claim, why)
	}
	return nil
}

// errIsGone reports whether err says the workspace is gone.
func errIsGone(err error) bool { return errors.Is(err, workspace.ErrGone) }
