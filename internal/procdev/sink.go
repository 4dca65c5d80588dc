package procdev

import "strings"

// Sink reports whether writing to the clean absolute path p reaches a
// device that ordinary commands write to (/dev/null, /dev/stdout, …) or an
// open descriptor (/dev/fd/N) rather than creating a file. The core's
// protected-path guard lets such writes through, and the Bash tool does not
// report them as a write of a file.
func Sink(p string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	n, ok := strings.CutPrefix(p, "/dev/fd/")
	return ok && n != "" && strings.Trim(n, "0123456789") == ""
}
