package helikon

import (
	"errors"
	"fmt"
	"strings"
)

// The three tool errors.
//
// A tool's Invoke returns one of three kinds of error:
//
//   - *InvalidArgsError: the arguments did not match the tool's schema. This is
//     the one recoverable kind: a runner may feed the problems back to the model
//     and let it try again.
//   - *DeniedError: the call was refused (a safety boundary, a permission rule,
//     an unsatisfiable precondition). A refusal is final; it is not retried.
//   - anything else is "other". [Other] wraps an arbitrary error in *OtherError
//     so that it can be told apart from a bare error when that matters, but a
//     plain error returned from Invoke is classified as other too.
//
// Callers branch with [errors.As] on the concrete types, with [errors.Is]
// against the sentinels [ErrInvalidArgs] and [ErrDenied], or with [KindOf].

// ErrInvalidArgs matches every *InvalidArgsError with [errors.Is].
var ErrInvalidArgs = errors.New("invalid arguments")

// ErrDenied matches every *DeniedError with [errors.Is].
var ErrDenied = errors.New("denied")

// InvalidArgsError reports that a tool's arguments did not match its schema.
// Problems lists every violation found, each in words a model can act on
// (which field, what was expected, what was given).
type InvalidArgsError struct {
	Tool     string   // the tool's name, when known
	Problems []string // one entry per violation; never empty
}

// InvalidArgs returns an *InvalidArgsError listing problems.
func InvalidArgs(problems ...string) error {
	if len(problems) == 0 {
		problems = []string{"the arguments are invalid"}
	}
	return &InvalidArgsError{Problems: problems}
}

// Error returns "invalid arguments[ for tool NAME]: " followed by the
// problems, separated by semicolons.
func (e *InvalidArgsError) Error() string {
	var b strings.Builder
	b.WriteString("invalid arguments")
	if e.Tool != "" {
		b.WriteString(" for tool ")
		b.WriteString(e.Tool)
	}
	b.WriteString(": ")
	b.WriteString(strings.Join(e.Problems, "; "))
	return b.String()
}

// Is reports whether target is [ErrInvalidArgs].
func (e *InvalidArgsError) Is(target error) bool { return target == ErrInvalidArgs }

// DeniedError reports that a call was refused. Reason says why, in words a
// human and a model can read, and what to do instead where there is something.
type DeniedError struct {
	// Reason is shown to the model as is; it should name what was refused
	// and why.
	Reason string
}

// Denied returns a *DeniedError whose reason is formatted from format and args
// as by [fmt.Sprintf].
func Denied(format string, args ...any) error {
	return &DeniedError{Reason: fmt.Sprintf(format, args...)}
}

// Error returns "denied: " followed by the reason.
func (e *DeniedError) Error() string { return "denied: " + e.Reason }

// Is reports whether target is [ErrDenied].
func (e *DeniedError) Is(target error) bool { return target == ErrDenied }

// OtherError wraps any failure that is neither invalid arguments nor a denial.
type OtherError struct {
	// Err is the underlying failure; its message is what the model sees.
	Err error
}

// Other wraps err as an *OtherError. It returns nil for a nil err, and err
// itself when err already is one of the three tool errors.
func Other(err error) error {
	if err == nil {
		return nil
	}
	var ia *InvalidArgsError
	var de *DeniedError
	var oe *OtherError
	if errors.As(err, &ia) || errors.As(err, &de) || errors.As(err, &oe) {
		return err
	}
	return &OtherError{Err: err}
}

// Error returns the wrapped error's message unchanged.
func (e *OtherError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *OtherError) Unwrap() error { return e.Err }

// ErrorKind classifies a tool error.
type ErrorKind string

// The kinds of tool error. The string values are the ones used on the wire
// (the CLI's JSON errors, MCP results).
const (
	KindInvalidArgs ErrorKind = "invalid_args"
	KindDenied      ErrorKind = "denied"
	KindOther       ErrorKind = "other"
)

// KindOf classifies err. A nil err has kind "". Any error that is not an
// *InvalidArgsError or a *DeniedError (anywhere in its chain) is [KindOther].
func KindOf(err error) ErrorKind {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, ErrDenied):
		return KindDenied
	case errors.Is(err, ErrInvalidArgs):
		return KindInvalidArgs
	default:
		return KindOther
	}
}

// SchemaErrors returns the schema problems carried by err when it is (or
// wraps) an *InvalidArgsError, and nil otherwise.
func SchemaErrors(err error) []string {
	var ia *InvalidArgsError
	if errors.As(err, &ia) {
		return ia.Problems
	}
	return nil
}
