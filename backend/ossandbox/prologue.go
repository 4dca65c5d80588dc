package ossandbox

import (
	"fmt"
	"strings"

	"github.com/paigasus/helikon/backend"
)

// shellKind selects the unit ulimit counts file sizes in.
type shellKind int

const (
	// kindBash: bash (not in POSIX mode) counts -f in 1024-byte blocks.
	kindBash shellKind = iota
	// kindSh: dash, and bash started as sh (POSIX mode), count -f in
	// 512-byte blocks.
	kindSh
)

// hardLimits returns the current hard limit of the resource ulimit's flag
// names, or -1 for unlimited; limits above it are lowered to it because an
// unprivileged process cannot raise a hard limit (and a root caller loses
// CAP_SYS_RESOURCE in the sandbox).
type hardLimits func(flag byte) int64

// prologue returns the ulimit command that applies l in the shell that runs
// a sandboxed command: Go cannot run code between fork and exec, and
// setrlimit in this process would limit the whole program, so the shell the
// command runs in sets the limits first, as soft and hard limit, and they
// hold for everything it starts. The shell exits with 125 if ulimit fails,
// so a command never runs without its limits. procs is -1 where the process
// cap is applied by a pids cgroup instead.
func prologue(kind shellKind, l backend.ResourceLimits, procs int64, hard hardLimits) string {
	fsizeUnit := int64(1024)
	if kind == kindSh {
		fsizeUnit = 512
	}
	var b strings.Builder
	// One resource per ulimit: dash's ulimit takes a single option.
	b.WriteString("ulimit -c 0")
	add := func(flag byte, v, unit int64) {
		if v <= 0 {
			return // zero was replaced by a default; negative is unlimited
		}
		n := v / unit
		if n == 0 {
			n = 1 // a limit smaller than the unit still limits
		}
		if h := hard(flag); h >= 0 && n > h/unit {
			n = h / unit
		}
		fmt.Fprintf(&b, " && ulimit -%c %d", flag, n)
	}
	add('t', l.CPUSeconds, 1)
	add('f', l.FileSize, fsizeUnit)
	add('v', l.AddressSpace, 1024)
	add('n', l.OpenFiles, 1)
	add('u', procs, 1)
	b.WriteString(" || exit 125; ")
	return b.String()
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
