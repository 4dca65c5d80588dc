package execfs

import "context"

// Runner runs one command inside the remote workspace: the one thing an
// engine supplies to get a workspace.FS from this package. It is the
// engine's exec call (docker exec, forkd's POST /v1/sandboxes/{id}/exec, a
// Kubernetes pod exec) and nothing more: no shell of the caller's in
// between, no quoting, no environment of the caller's.
//
// Implementations must be safe for concurrent use.
type Runner interface {
	// Exec runs argv in the workspace: argv[0] is looked up on the
	// workspace's PATH (or is an absolute path) and receives argv[1:]
	// verbatim as its arguments. The working directory does not matter
	// (every script changes to the root first).
	//
	// stdin is the command's standard input, closed after its last byte;
	// a runner created with [Options].NoStdin is always given nil.
	//
	// stdout is the first maxStdout bytes the command wrote (bytes beyond
	// are discarded, or the runner may stop the command once it has them);
	// stderr is its standard error, which the runner may cap at a few KiB.
	// The two must not be merged (no TTY: docker exec with Tty false), and
	// the runner must not add to them.
	// A runner whose transport is not binary-safe (forkd decodes output as
	// UTF-8) is created with [Options].TextOnly and is only ever asked for
	// ASCII output.
	//
	// A command that ran and exited non-zero is not an error: exitCode says
	// so and err is nil. err is for a command that could not be run or
	// whose outcome is unknown: the transport failed, the runner's own
	// timeout or ctx ended it (wrap ctx.Err()), or the workspace no longer
	// exists (wrap [github.com/paigasus/helikon/workspace.ErrGone], so that callers can tell). When ctx
	// is done, Exec must stop the command in the workspace, not leave it
	// running.
	Exec(ctx context.Context, argv []string, stdin []byte, maxStdout int64) (stdout, stderr []byte, exitCode int, err error)
}

// Options configures an [FS]. The zero value (or nil) suits a runner that
// passes standard input and binary output, with Linux's argument limits.
type Options struct {
	// Shell is the POSIX shell that runs the scripts, as argv[0]:
	// "/bin/sh" when empty. It must be dash, bash, busybox sh or
	// another POSIX sh, and the workspace must have the tools listed in
	// the package documentation.
	Shell string

	// NoStdin says the runner cannot pass standard input (forkd's exec
	// API takes only arguments and a timeout). Data to write then travels
	// in arguments, in base64 when the workspace has base64 (New looks),
	// else as printf %b escapes, in chunks of at most MaxArgBytes per
	// argument and MaxArgvBytes per exec: a write larger than one exec's
	// worth goes to the temporary file in several execs and is renamed
	// into place by the last.
	NoStdin bool

	// TextOnly says the runner's transport is text (forkd's JSON decodes
	// output as UTF-8): output is encoded in the workspace, by base64
	// where it has it (4 bytes of transport per 3 of data), else by od
	// (about 3 per byte), and decoded here; every argument is valid UTF-8
	// (a path that is not is refused with fs.ErrInvalid).
	TextOnly bool

	// Resolved says the caller knows that the root exists and that no
	// component of its path is a symbolic link (it is its own physical
	// path): [New] then runs no exec to resolve it. Ignored with NoStdin
	// or TextOnly, whose runners New also asks whether base64 is there.
	Resolved bool

	// MaxArgBytes caps one argument, the script's included: 131071 when
	// zero (Linux's MAX_ARG_STRLEN is 32 pages, 131072 bytes with the
	// terminating NUL).
	MaxArgBytes int

	// MaxArgvBytes caps the sum of all arguments of one exec: 1 MiB when
	// zero, half of the 2 MiB ARG_MAX a default 8 MiB stack gives, which
	// leaves room for the environment and the pointers.
	MaxArgvBytes int

	// ChunkSize is how much one exec reads of a file opened with Open: 1
	// MiB when zero. A file no larger than ChunkSize is read by the exec
	// that opens it; a larger one costs one exec per chunk. It bounds the
	// memory an open File holds.
	ChunkSize int
}
