// Package execfs is a [github.com/paigasus/helikon/workspace.FS] implemented by running commands inside
// a remote workspace: a container, a microVM or a pod reached only through
// its engine's exec call. The Docker (isolated mode), forkd and Kubernetes
// engines supply a [Runner]; New turns it into the file tree the file tools
// act on, with the guarantees package workspace lists.
//
// Every operation is one exec of a fixed POSIX sh script (dash, bash and
// busybox sh run it) whose paths and data are positional arguments, never
// part of the script's text. The script resolves the path component by
// component inside the workspace, as package sandbox does here with os.Root,
// and does the operation in the same exec, so a remote round trip (10-100
// ms) is paid once. Only large transfers take more: a file larger than
// [Options].ChunkSize is read one chunk per exec, and a runner that cannot
// pass standard input writes in argument-sized chunks.
package execfs
