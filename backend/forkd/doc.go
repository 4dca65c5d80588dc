// Package forkd is the execution backend that runs each command in a
// Firecracker microVM forked from a snapshot by a forkd controller
// (github.com/deeplethe/forkd), over the controller's REST API v1 as its
// docs/API.md and its controller's handlers define it:
//
//	POST   /v1/sandboxes            {"snapshot_tag", "n", "per_child_netns", "memory_limit_mib"} -> 201 [SandboxInfo, ...]
//	GET    /v1/sandboxes            -> [SandboxInfo, ...]
//	GET    /v1/sandboxes/{id}       -> SandboxInfo (404 when unknown)
//	POST   /v1/sandboxes/{id}/exec  {"args", "timeout_secs"} -> {"stdout", "stderr", "exit_code"}
//	DELETE /v1/sandboxes/{id}       -> 204 (404 counts as gone)
//	POST   /v1/workspaces           {"name", "snapshot_tag"} -> 201 WorkspaceInfo (409 when the name is taken)
//	GET    /v1/workspaces[/{name}]  -> [WorkspaceInfo, ...] or WorkspaceInfo
//	DELETE /v1/workspaces/{name}    -> 204 (404 counts as gone)
//
// every call with "Authorization: Bearer TOKEN"; every 4xx and 5xx answer
// carries {"error": "message"}, which [APIError] keeps (token removed).
// The workspace routes are served by the controller and used by forkd's
// own CLI but not listed in docs/API.md.
//
// [Client] is the API client; [Backend] implements backend.Backend on top of
// it (fork, exec, destroy on every path); [Backend.RunIn] runs a request in
// a microVM that outlives it (a controller workspace's live sandbox, as
// package workspace/forkd holds one per session); [Backend.Reconcile] reaps
// microVMs that leaked because their id never reached the client. A
// controller that does not answer is an error matching [ErrUnreachable],
// which wraps backend.ErrUnavailable.
//
// What this package guarantees and what it does not is documented on
// [Backend]. In short: filesystem and syscalls are virtualized; the network
// is not contained unless EnforceEgress names an egress proxy (package
// egress) that the controller host's network namespaces route all traffic
// through, which the backend probes but cannot verify. The controller
// reports no timeout: its guest agent answers a command it killed at the
// timeout as exit code 1 with empty output, which [TimedOut] recognises.
//
// Tested against a fake controller (internal/forkdfake) that follows the
// controller's code at a named commit field by field, including slow,
// failing and malformed answers and TLS with a private CA. Firecracker needs
// KVM, which the machines this was written on lack: a live controller was
// not exercised.
package forkd
