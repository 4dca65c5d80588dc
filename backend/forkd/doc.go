// Package forkd is the execution backend that runs each command in a
// Firecracker microVM forked from a snapshot by a forkd controller, over the
// controller's REST API:
//
//	POST   /v1/sandboxes            {"snapshot_tag", "n"} -> {"sandboxes": [{"id"}]}
//	POST   /v1/sandboxes/{id}/exec  {"args", "timeout_secs"} -> {"stdout", "stderr", "exit_code"}
//	DELETE /v1/sandboxes/{id}       (404 counts as gone)
//	GET    /v1/sandboxes            -> [{"id", "snapshot_tag", "created_at_unix"}]
//
// every call with "Authorization: Bearer TOKEN".
//
// [Client] is the API client; [Backend] implements backend.Backend on top of
// it (fork, exec, destroy on every path); [Backend.Reconcile] reaps microVMs
// that leaked because their id never reached the client.
//
// What this package guarantees and what it does not is documented on
// [Backend]. In short: filesystem and syscalls are virtualized; the network
// is not contained unless EnforceEgress names an egress proxy (package
// egress) that the controller host's network namespaces route all traffic
// through, which the backend probes but cannot verify.
//
// Tested against a fake controller (internal/forkdfake) that speaks this
// API, including slow, failing and malformed answers and TLS with a private
// CA. Firecracker needs KVM, which the machines this was written on lack: a
// live controller was not exercised, and the request body of create
// ({"snapshot_tag", "n"}) is this package's reading of the API.
package forkd
