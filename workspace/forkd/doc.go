// Package forkd is the workspace engine that holds one Firecracker microVM
// per session behind a forkd controller (github.com/deeplethe/forkd): the
// controller's named workspace (POST /v1/workspaces), in whose live
// sandbox every command and every file operation of the session runs, and
// which Close deletes (DELETE /v1/workspaces/{name}). Package
// backend/microvm, by contrast, forks a microVM for each command. The CLI
// names both "forkd": helikon exec --backend forkd forks one microVM per
// command unless given --session or --keep-workspace, and the agent's
// commands (run, mcp, tool) hold this engine's workspace.
//
// Both packages reach the controller through one client,
// internal/forkdapi, and the engine shares the backend's; the engine's
// commands run through backend/microvm's [microvm.Backend.RunIn], the one
// place a backend.Request becomes a forkd exec, which is why [Options]
// embeds that package's Options. The controller's API, as its
// crates/forkd-controller/src/http.rs and api.rs define it at commit e88c730b32fb980b6c0c9536d2a6e8012f855960
// (v0.5.3 and two fixes), has no file endpoints and its exec takes
// arguments and a timeout only: no standard input, no working directory, no
// environment, output decoded as UTF-8. The files are therefore reached
// through package workspace/execfs, which runs a fixed POSIX sh script per
// operation with its data in arguments and its output base64- or
// hex-encoded (base64 where the microVM has it, od otherwise); a
// command starts in the root through sh -c 'cd -- ROOT && exec "$@"'.
//
// With an absolute root (the default, [DefaultDir]) the engine describes
// its workspaces before they exist ([Engine.Dir], [workspace.Describe]):
// [workspace.Sessions] then creates a session's microVM on its first call
// and routes calls by session, so an MCP server over HTTP gives each client
// a microVM of its own.
//
// # Names and labels
//
// A forkd workspace has a name and nothing else to label it with. The
// workspace of session S is named "helikon-S" ([NamePrefix]; a session id
// is at most 48 characters, so the name fits forkd's 64), and that prefix
// is what [Engine.List] and [Engine.Remove] trust: a controller shared with
// other tools must not give their workspaces names that start with it. The
// other labels (host, user) are written at creation to a JSON file next to
// the root inside the microVM (for the root /workspace,
// /.workspace.helikon-labels.json) and read back by List from each running
// workspace. What is read from inside the microVM is treated as the
// workspace's own claim: only the host and user labels are taken from it,
// bounded and printable; the session comes from the name and the creation
// time from the controller's created_at_unix, so a command in the
// workspace cannot make itself look younger than it is to
// helikon workspaces reap.
//
// # States and faults
//
// The controller's workspace is "running" (it has a live sandbox),
// "suspended" (another client suspended it: its state is a snapshot and no
// command can run) or "stale" (the controller restarted and the microVM is
// gone, with the files in it).
//
//   - Attach of a running workspace opens it; of a suspended one fails with
//     [ErrSuspended] (resume it with forkd's CLI, or remove it): this
//     package never resumes or suspends, since whether a resumed microVM
//     has the files written before the suspend depends on how the
//     controller snapshotted its disk, which a client cannot check; of a
//     stale one fails with an error
//     matching workspace.ErrNotFound and workspace.ErrGone, and Create then
//     replaces it.
//   - A workspace deleted, suspended or made stale by someone else while it
//     is open: the call that finds out fails with an error matching
//     workspace.ErrGone, and so does every later call of that Workspace
//     (fail closed: it is never recreated behind the session's back).
//   - A controller that does not answer: errors match
//     [ErrUnreachable] (and backend.ErrUnavailable). That, and
//     any other failing answer, is the call's error only: the workspace is
//     not taken for gone, and the next call tries again.
//   - A create that committed on the controller and then failed (a 5xx, a
//     timeout, an answer that cannot be read): the workspace is deleted by
//     name before the error is returned; if that delete fails too, the
//     error says so and helikon workspaces reap removes it later. A create
//     still running on the controller when its caller gave up (timeout,
//     cancellation) can commit after that delete: reap finds it by its
//     name too.
//
// # Guarantees
//
// As backend/microvm reports them: filesystem and syscalls virtualized (the
// commands and the file operations act inside the microVM; the host's
// files and kernel are out of reach), the network contained only when
// EnforceEgress names an egress proxy the controller host routes the
// microVMs through. The file operations have execfs's guarantees inside the
// microVM (confinement to the root, atomic writes); a command in the same
// workspace runs as root in the microVM and can change anything there, the
// file tree included, between two file operations.
//
// Cancellation and timeouts: the controller's exec cannot be cancelled,
// and its guest agent kills only the direct child of a command past its
// timeout. Every call therefore carries a mark in its environment
// ([RunMarker]), and a call that timed out or whose context ended is
// followed by one exec that kills every process of the microVM carrying
// it (found through /proc; the microVM needs sh, tr and grep). A process
// that clears its environment escapes this, and lives until Close.
//
// Limits: Request.Env, Limits and Stdin do not apply (as in
// backend/microvm); the microVM has its own environment and resources.
//
// Tested against the fake controller of internal/forkdfake, in which each
// sandbox is a directory of this machine that every exec runs in, so that
// the state kept between calls is real. Firecracker needs KVM, which the
// machines this was written on lack: no live controller was exercised.
package forkd
