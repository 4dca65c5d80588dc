package ossandbox

import "fmt"

// NotReadableError is the error of [Backend.Run] for a command whose
// program, or the interpreter its #! line names, lies in a directory
// commands cannot read (Landlock refuses its execution with EACCES, which
// the kernel reports as a bare "permission denied"). It matches
// [ErrNotReadable] with errors.Is, and the start error it explains with
// errors.As.
type NotReadableError struct {
	// Program is the program the command named.
	Program string
	// Path is the file the sandbox refused: the program as resolved
	// (symbolic links followed), or its interpreter.
	Path string
	// Dir is the directory of Path, the one to grant.
	Dir string
	// Hidden is the credential location Dir is or lies beneath, when it
	// is one: no grant reaches it.
	Hidden string
	// Err is the start error (nil when a shell reported the refusal).
	Err error
}

// Error names the directory and how to grant it.
func (e *NotReadableError) Error() string {
	what := e.Path
	if e.Path != e.Program {
		what = fmt.Sprintf("%s (%s)", e.Program, e.Path)
	}
	if e.Hidden != "" {
		return fmt.Sprintf("%s: %s is in %s, a hidden credential location (%s) that commands never read", ErrNotReadable, what, e.Dir, e.Hidden)
	}
	return fmt.Sprintf("%s: %s is in %s: grant it with --read-path %s (ossandbox.Options.ReadPaths), or put that directory on PATH", ErrNotReadable, what, e.Dir, e.Dir)
}

// Unwrap returns [ErrNotReadable] and the start error.
func (e *NotReadableError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrNotReadable}
	}
	return []error{ErrNotReadable, e.Err}
}
