// Package agentsandbox is the workspace engine on Kubernetes: each
// workspace is one SandboxClaim of kubernetes-sigs/agent-sandbox, held for
// the session and deleted when it ends. It is a Go module of its own
// (github.com/paigasus/helikon/workspace/agentsandbox), so that client-go
// and agent-sandbox's API types stay out of helikon's main module.
//
// # What it talks to
//
// Built against sigs.k8s.io/agent-sandbox v0.2.1, which serves API version
// v1alpha1 (agents.x-k8s.io/v1alpha1: Sandbox;
// extensions.agents.x-k8s.io/v1alpha1: SandboxClaim, SandboxTemplate,
// SandboxWarmPool), through its generated clientsets, and k8s.io/client-go
// v0.37 for pods, runtime classes and network policies. v0.2.1 has no Go
// client that runs commands or moves files (its clients/go, which talks to
// a "sandbox router" service in front of an HTTP server in the sandbox
// image, is not in any version the module proxy serves); commands
// therefore go through the pod's exec subresource with client-go's own
// executor, as kubectl exec does (WebSocket, SPDY where the API server does
// not upgrade), and files through package execfs over that exec. Any image
// with a POSIX sh and the tools execfs lists will do; none has to run a
// server.
//
// # Lifecycle
//
// [Engine.Create] creates a claim named helikon-SESSION-RANDOM from the
// configured SandboxTemplate (or from the template of the configured
// SandboxWarmPool, which must have a ready sandbox: the controller adopts
// one of its pods) and waits, at most Options.ReadyTimeout, until the
// controller reports the claim Ready and its pod runs and is ready. The
// claim carries [workspace.Labels] (the keys io.helikon.* are valid label
// names; a value a label cannot hold, such as a long host name, is kept
// exactly in an annotation of the same key and the label gets a valid
// stand-in), which [Engine.List] selects on and [Engine.Remove] requires.
// [Workspace.Close] deletes the claim; the controller's owner references
// take the Sandbox, its Service and its pod with it.
//
// # Guarantees, as read from the cluster
//
// Filesystem and syscalls are virtualized when the pod's RuntimeClass has
// the handler runsc (gVisor) or kata* (Kata Containers): the handler, read
// from the RuntimeClass object, decides, never the class's name. Any other
// pod is a container: filesystem os_kernel (its mount namespace), syscalls
// os_kernel with a seccomp profile (RuntimeDefault, Localhost) in the pod
// spec and none without one. The network is os_kernel when the template's
// NetworkPolicy (TEMPLATE-network-policy, kept by the template controller
// unless the template is Unmanaged) exists, restricts egress and selects
// the pod; none otherwise. The features name what was read.
//
// # Faults, and what the next call does
//
//   - API server unreachable: [ErrUnreachable], naming the server. Nothing
//     is left: a claim whose create may have committed is deleted by name.
//   - Claim not bound, or pod not ready, in time: [ErrNotReady] with the
//     last state seen; the claim is deleted. A missing template (before or
//     after the claim) is [ErrTemplate]; the claim is deleted.
//   - Warm pool empty: [ErrWarmPoolEmpty] before any claim is created.
//   - Pod evicted, failed, deleted or replaced (the Sandbox controller
//     recreates a deleted pod under its name, empty), or the claim deleted
//     by someone else: the call fails with [workspace.ErrGone] saying
//     which, and so does every later call, without contacting the cluster;
//     nothing is recreated behind the session's back. Close still deletes
//     the claim. The caller decides whether to Create a fresh workspace.
//   - Timeout or cancellation of a command: the kubelet does not kill an
//     exec'd process when its stream closes, so the engine runs a second
//     exec that stops and kills the command's process tree (found through
//     /proc in the container).
//
// # What it does not guarantee
//
//   - A NetworkPolicy is enforced by the cluster's network plugin; on a
//     plugin without NetworkPolicy support the reported os_kernel network
//     is not enforced, and the engine cannot tell.
//   - Each command costs one GET of the pod before its exec (to catch a
//     replaced pod); a pod replaced between that GET and the exec is not
//     caught for that one command.
//   - A process that leaves the command's process tree (setsid and a
//     double fork, reparented to the pod's init) before a timeout escapes
//     the kill. The Request's Env allowlist and Limits do not apply: the
//     container has the environment and the resources its template sets.
//   - A claim whose deletion failed (API server gone at Close) stays until
//     helikon workspaces reap removes it by its labels.
//
// Tested against the client libraries' fake clientsets, driven by a
// reconciler that follows agent-sandbox v0.2.1's controllers, and a local
// server of the exec subresource (WebSocket v5 and SPDY v4/v5) that runs
// each command as a real process in a directory per pod
// (internal/fakecluster), and against a real single-node cluster with
// agent-sandbox v0.2.1's controller (the TestReal* tests, run by .ci/run
// on a cluster that testdata/cluster builds and brings up on loopback;
// docs/kubernetes.md). A RuntimeClass with handler runsc was not exercised
// on that cluster: gVisor's containerd shim needs CAP_SYS_RESOURCE.
package agentsandbox
