// Package forkdapi is the one client of a forkd controller's REST API v1
// (github.com/deeplethe/forkd), shared by the two forkd adapters: package
// backend/microvm, which forks a microVM for each command, and package
// workspace/forkd, which holds one microVM per session as a controller
// workspace. It follows the controller at commit
// e88c730b32fb980b6c0c9536d2a6e8012f855960 (v0.5.3 and two fixes), as its
// docs/API.md and its crates/forkd-controller/src/http.rs (the router and
// handlers), api.rs (the request and answer types) and auth.rs (the bearer
// token) define it:
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
// What it guarantees: the token ([Token]) never appears in errors, logs or
// formatted values, and is removed from what the controller echoes; the
// controller is reached over verified TLS (a pinned CA or the system's
// roots, never unverified), or plain HTTP on a loopback host only
// ([ErrInsecureURL]), directly (no environment proxy) and without
// following redirects; every answer is bounded in size and decoded
// strictly where it matters (an id that could leave its URL path segment
// is refused, [ValidID]); a controller that does not answer is an error
// matching [ErrUnreachable], which wraps backend.ErrUnavailable, and an
// answer that cannot be read one matching [ErrMalformedResponse].
//
// What it does not: it knows nothing of commands, workspaces' files or
// retries; a call cut short by a timeout may have committed on the
// controller (the adapters clean up after it). The controller reports no
// timeout: its guest agent answers a command it killed at the timeout as
// exit code 1 with empty output, which [TimedOut] recognises.
//
// The package is internal so that the two adapters share one client
// without making its plumbing part of helikon's API: each adapter
// re-exports the names its users need (backend/microvm.Token,
// backend/microvm.ErrUnreachable, ...). Tested against the fake controller
// of internal/forkdfake, which follows the same commit field by field;
// no live controller was exercised (Firecracker needs KVM).
package forkdapi
