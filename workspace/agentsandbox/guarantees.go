package agentsandbox

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/paigasus/helikon/backend"
)

// networkPolicyName is the NetworkPolicy the template controller keeps for
// a template whose networkPolicyManagement is Managed (the default):
// template.Name + "-network-policy" (extensions/controllers/
// sandboxtemplate_controller.go at v0.2.1).
func networkPolicyName(template string) string { return template + "-network-policy" }

// Probe reads the configured template (through the warm pool when one is
// named) and reports the guarantees a workspace claimed from it would get,
// from the template's pod spec and its NetworkPolicy as the API server has
// them. It creates nothing. helikon doctor calls it.
func (e *Engine) Probe(ctx context.Context) (backend.Guarantees, error) {
	t, err := e.template(ctx)
	if err != nil {
		return backend.Guarantees{}, err
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: t.Spec.PodTemplate.ObjectMeta.Labels},
		Spec:       t.Spec.PodTemplate.Spec,
	}
	// The controller labels every pod of a template with the template's
	// hash; the policy selects on it.
	pod.Labels = withLabel(pod.Labels, templateHashLabel, nameHash(t.Name))
	return e.guarantees(ctx, t.Name, pod)
}

// guarantees reports what the pod really gets. Filesystem and syscalls:
// virtualized when its RuntimeClass's handler is gVisor (runsc) or Kata;
// otherwise the pod is a plain container: os_kernel for the filesystem
// (its mount namespace) and, for syscalls, os_kernel only when a seccomp
// profile (RuntimeDefault or Localhost) applies to the container, none when
// it runs Unconfined (the kubelet's default). Network: os_kernel when the
// template's NetworkPolicy exists, restricts egress and selects this pod;
// none otherwise. Nothing is inferred from names alone: the RuntimeClass
// and the NetworkPolicy are read from the API server.
func (e *Engine) guarantees(ctx context.Context, template string, pod *corev1.Pod) (backend.Guarantees, error) {
	g := backend.Guarantees{Filesystem: backend.IsolationOSKernel}
	runtime := "runc"
	switch rc := pod.Spec.RuntimeClassName; {
	case rc == nil || *rc == "":
		g.Features = append(g.Features, "no runtime class: the cluster's default runtime (a container)")
	default:
		obj, err := e.c.Kube.NodeV1().RuntimeClasses().Get(ctx, *rc, metav1.GetOptions{})
		if err != nil {
			if !apierrors.IsNotFound(err) && !apierrors.IsForbidden(err) {
				return g, e.apiError(err, "reading runtime class %s", *rc)
			}
			g.Features = append(g.Features, fmt.Sprintf("runtime class %s unreadable (%v): counted as a plain container", *rc, apierrors.ReasonForError(err)))
			break
		}
		switch h := obj.Handler; {
		case h == "runsc" || strings.HasPrefix(h, "gvisor"):
			runtime = "gVisor"
		case strings.HasPrefix(h, "kata"):
			runtime = "Kata"
		default:
			g.Features = append(g.Features, fmt.Sprintf("runtime class %s: handler %q is neither gVisor nor Kata: counted as a plain container", *rc, h))
		}
		if runtime != "runc" {
			g.Filesystem, g.Syscalls = backend.IsolationVirtualized, backend.IsolationVirtualized
			g.Features = append(g.Features, fmt.Sprintf("runtime class %s (handler %s: %s)", *rc, obj.Handler, runtime))
		}
	}
	if runtime == "runc" {
		if p := seccomp(pod, e.opts.Container); p != "" {
			g.Syscalls = backend.IsolationOSKernel
			g.Features = append(g.Features, "seccomp "+p)
		} else {
			g.Features = append(g.Features, "seccomp Unconfined (no profile in the pod spec)")
		}
	}
	net, feature, err := e.network(ctx, template, pod)
	if err != nil {
		return g, err
	}
	g.Network = net
	g.Features = append(g.Features, feature)
	g.Label = "agent-sandbox (" + runtime + ", " + map[bool]string{true: "network policy", false: "open network"}[net != backend.IsolationNone] + ")"
	return g, nil
}

// seccomp returns the seccomp profile type that applies to the container
// (its own, else the pod's), or "" when none does.
func seccomp(pod *corev1.Pod, container string) string {
	var p *corev1.SeccompProfile
	if sc := pod.Spec.SecurityContext; sc != nil {
		p = sc.SeccompProfile
	}
	for i, c := range pod.Spec.Containers {
		if c.Name == container || container == "" && i == 0 {
			if c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil {
				p = c.SecurityContext.SeccompProfile
			}
			break
		}
	}
	if p == nil || p.Type == corev1.SeccompProfileTypeUnconfined {
		return ""
	}
	return string(p.Type)
}

// network reads the template's NetworkPolicy.
func (e *Engine) network(ctx context.Context, template string, pod *corev1.Pod) (backend.Isolation, string, error) {
	name := networkPolicyName(template)
	np, err := e.c.Kube.NetworkingV1().NetworkPolicies(e.ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return backend.IsolationNone, fmt.Sprintf("network policy %s/%s: %s: network not confined", e.ns, name, apierrors.ReasonForError(err)), nil
	}
	if err != nil {
		return backend.IsolationNone, "", e.apiError(err, "reading network policy %s/%s", e.ns, name)
	}
	egress := false
	for _, t := range np.Spec.PolicyTypes {
		egress = egress || t == networkingv1.PolicyTypeEgress
	}
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil || !egress || !sel.Matches(labels.Set(pod.Labels)) {
		return backend.IsolationNone, fmt.Sprintf("network policy %s/%s does not restrict this pod's egress: network not confined", e.ns, name), nil
	}
	what := fmt.Sprintf("%d egress rules", len(np.Spec.Egress))
	if publicOnly(np.Spec.Egress) {
		what = "public internet only, private and link-local ranges blocked"
	}
	return backend.IsolationOSKernel, fmt.Sprintf("network policy %s/%s: egress %s (enforced by the cluster's network plugin)", e.ns, name, what), nil
}

// publicOnly recognises the controller's secure-by-default egress (all of
// 0.0.0.0/0 but the private and link-local ranges, all of ::/0 but fc00::/7).
func publicOnly(rules []networkingv1.NetworkPolicyEgressRule) bool {
	if len(rules) != 1 || len(rules[0].Ports) != 0 || len(rules[0].To) != 2 {
		return false
	}
	for _, p := range rules[0].To {
		if p.IPBlock == nil || p.PodSelector != nil || p.NamespaceSelector != nil {
			return false
		}
		switch p.IPBlock.CIDR {
		case "0.0.0.0/0":
			if !sameSet(p.IPBlock.Except, []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"}) {
				return false
			}
		case "::/0":
			if !sameSet(p.IPBlock.Except, []string{"fc00::/7"}) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[string]bool{}
	for _, s := range a {
		seen[s] = true
	}
	for _, s := range b {
		if !seen[s] {
			return false
		}
	}
	return true
}

// templateHashLabel is the label the controller puts on every pod of a
// template, which the template's NetworkPolicy selects
// (sandboxTemplateLabel in extensions/controllers at v0.2.1).
const templateHashLabel = "agents.x-k8s.io/sandbox-template-ref-hash"

// nameHash is the controller's NameHash (controllers/sandbox_controller.go
// at v0.2.1): FNV-1a 32 of the name in eight hex digits.
func nameHash(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%08x", h.Sum32())
}

func withLabel(l map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range l {
		if a != k {
			out[a] = b
		}
	}
	return out
}
