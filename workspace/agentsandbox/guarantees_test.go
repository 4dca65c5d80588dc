package agentsandbox_test

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	extv1alpha1 "sigs.k8s.io/agent-sandbox/extensions/api/v1alpha1"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace/agentsandbox"
	"github.com/paigasus/helikon/workspace/agentsandbox/internal/fakecluster"
)

func TestGuaranteesComeFromTheRuntimeClassAndNetworkPolicy(t *testing.T) {
	none, osk, virt := backend.IsolationNone, backend.IsolationOSKernel, backend.IsolationVirtualized
	withSeccomp := func(tmpl *extv1alpha1.SandboxTemplate) *extv1alpha1.SandboxTemplate {
		tmpl.Spec.PodTemplate.Spec.SecurityContext = &corev1.PodSecurityContext{SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
		return tmpl
	}
	unmanaged := func(tmpl *extv1alpha1.SandboxTemplate) *extv1alpha1.SandboxTemplate {
		tmpl.Spec.NetworkPolicyManagement = extv1alpha1.NetworkPolicyManagementUnmanaged
		return tmpl
	}
	ownPolicy := func(tmpl *extv1alpha1.SandboxTemplate) *extv1alpha1.SandboxTemplate {
		tmpl.Spec.NetworkPolicy = &extv1alpha1.NetworkPolicySpec{Egress: []networkingv1.NetworkPolicyEgressRule{}}
		return tmpl
	}
	for _, tc := range []struct {
		name            string
		objects         []runtime.Object
		fs, sys, net    backend.Isolation
		label, features string
	}{
		{"GVisor", []runtime.Object{fakecluster.Template("t", "gvisor"), fakecluster.RuntimeClass("gvisor", "runsc")},
			virt, virt, osk, "agent-sandbox (gVisor, network policy)", "handler runsc"},
		{"Kata", []runtime.Object{fakecluster.Template("t", "kata"), fakecluster.RuntimeClass("kata", "kata-qemu")},
			virt, virt, osk, "agent-sandbox (Kata, network policy)", "handler kata-qemu"},
		{"PlainContainerUnconfined", []runtime.Object{fakecluster.Template("t", "")},
			osk, none, osk, "agent-sandbox (runc, network policy)", "seccomp Unconfined"},
		{"PlainContainerSeccomp", []runtime.Object{withSeccomp(fakecluster.Template("t", ""))},
			osk, osk, osk, "agent-sandbox (runc, network policy)", "seccomp RuntimeDefault"},
		// A runtime class named gvisor whose handler is runc is a container:
		// the name says nothing, the handler does.
		{"NameIsNotTheHandler", []runtime.Object{fakecluster.Template("t", "gvisor"), fakecluster.RuntimeClass("gvisor", "runc")},
			osk, none, osk, "agent-sandbox (runc, network policy)", `handler "runc" is neither`},
		{"MissingRuntimeClass", []runtime.Object{fakecluster.Template("t", "gvisor")},
			osk, none, osk, "agent-sandbox (runc, network policy)", "unreadable"},
		{"UnmanagedNetwork", []runtime.Object{unmanaged(fakecluster.Template("t", "gvisor")), fakecluster.RuntimeClass("gvisor", "runsc")},
			virt, virt, none, "agent-sandbox (gVisor, open network)", "network not confined"},
		{"OwnPolicy", []runtime.Object{ownPolicy(fakecluster.Template("t", "")), fakecluster.RuntimeClass("gvisor", "runsc")},
			osk, none, osk, "agent-sandbox (runc, network policy)", "0 egress rules"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, c := newEngine(t, agentsandbox.Options{Template: "t"}, tc.objects...)
			ctx := t.Context()
			c.Reconcile(ctx) // the template's network policy
			probe, err := e.Probe(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ws := create(t, e, "s1")
			for name, g := range map[string]backend.Guarantees{"Probe": probe, "Workspace": ws.Guarantees()} {
				if g.Filesystem != tc.fs || g.Syscalls != tc.sys || g.Network != tc.net || g.Label != tc.label {
					t.Errorf("%s: %v, want filesystem %v syscalls %v network %v label %q", name, g, tc.fs, tc.sys, tc.net, tc.label)
				}
				if !strings.Contains(strings.Join(g.Features, "; "), tc.features) {
					t.Errorf("%s: features %q, want one saying %q", name, g.Features, tc.features)
				}
			}
		})
	}
}
