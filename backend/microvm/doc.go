// Package microvm is the execution backend that runs each command in a
// fresh Firecracker microVM forked from a snapshot by a forkd controller
// (github.com/deeplethe/forkd), and destroys it afterwards: nothing
// persists from one command to the next. For one microVM per session, in
// which a session's commands and files persist, see package
// workspace/forkd. The CLI names this backend "forkd" (--backend forkd).
//
// [Backend] implements backend.Backend (fork, exec, destroy on every path);
// [Backend.RunIn] runs a request in a microVM that outlives it (a
// controller workspace's live sandbox, as package workspace/forkd holds one
// per session); [Backend.Reconcile] reaps microVMs that leaked because
// their id never reached the client. A controller that does not answer is
// an error matching [ErrUnreachable], which wraps backend.ErrUnavailable.
//
// The controller's REST API is spoken by internal/forkdapi, the one client
// both forkd adapters share, whose documentation lists the routes and the
// controller commit it follows. This package re-exports what a user needs
// from it, so that no internal package has to be imported: [Token] for
// Options.Token, [ClientOptions] and [NewClient], the client [Backend.Client]
// returns with its request and answer types, [APIError] and the errors to
// branch on ([ErrUnreachable], [ErrNotFound], [ErrMalformedResponse],
// [ErrInsecureURL]). They are aliases: the same types and values.
//
// What this package guarantees and what it does not is documented on
// [Backend]. In short: filesystem and syscalls are virtualized; the network
// is not contained unless EnforceEgress names an egress proxy (package
// egress) that the controller host's network namespaces route all traffic
// through, which the backend probes but cannot verify. The controller
// reports no timeout: its guest agent answers a command it killed at the
// timeout as exit code 1 with empty output, which the backend recognises
// (by shape and elapsed time) and reports as a timeout.
//
// Tested against a fake controller (internal/forkdfake) that follows the
// controller's code at a named commit field by field, including slow,
// failing and malformed answers and TLS with a private CA. Firecracker needs
// KVM, which the machines this was written on lack: a live controller was
// not exercised.
package microvm
