package proc

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"

	"github.com/paigasus/helikon/backend"
)

var (
	shellOnce sync.Once
	shellPath string
	shellBash bool
	shellErr  error
)

// Shell returns the shell commands run with: bash when it is installed,
// otherwise sh. isBash tells which, since their ulimit units differ.
func Shell() (path string, isBash bool, err error) {
	shellOnce.Do(func() {
		for _, cand := range []string{"bash", "/bin/bash", "/usr/bin/bash"} {
			if p, err := exec.LookPath(cand); err == nil {
				shellPath, shellBash = p, true
				return
			}
		}
		for _, cand := range []string{"sh", "/bin/sh"} {
			if p, err := exec.LookPath(cand); err == nil {
				shellPath = p
				return
			}
		}
		shellErr = fmt.Errorf("proc: neither bash nor sh is installed: %w", backend.ErrUnavailable)
	})
	return shellPath, shellBash, shellErr
}

// ShellArgv returns the argument vector that runs command with bash -c (sh
// -c where bash is missing) under limits: the shell applies the limits with
// ulimit on a first line of its own, then runs command. Because the limits
// line is a complete command of its own, nothing in command can change how
// it is parsed; error messages of the shell count command's first line as
// line 2.
func ShellArgv(command string, limits backend.ResourceLimits) ([]string, error) {
	sh, isBash, err := Shell()
	if err != nil {
		return nil, err
	}
	script := command
	if p := Prologue(limits, isBash); p != "" {
		script = p + "\n" + command
	}
	return []string{sh, "-c", script}, nil
}

// ExecArgv returns the argument vector that runs argv (a program and its
// arguments, which no shell interprets) under limits. The program is looked
// up in the PATH of the command's environment.
func ExecArgv(argv []string, limits backend.ResourceLimits) ([]string, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("proc: empty argument vector")
	}
	sh, isBash, err := Shell()
	if err != nil {
		return nil, err
	}
	script := `exec "$@"`
	if p := Prologue(limits, isBash); p != "" {
		script = p + "\n" + script
	}
	return append([]string{sh, "-c", script, "helikon"}, argv...), nil
}

// Prologue returns the shell line that applies limits with ulimit (both the
// soft and the hard limit, so the command cannot raise them), or "" when
// limits sets nothing. The line exits with status 125 when a limit cannot be
// applied: a command never runs with weaker limits than asked for. Values
// are converted to the shell's units, rounded down (but not to zero when the
// limit is positive), and lowered to this program's own hard limits.
// Processes is not applied (see the package documentation).
func Prologue(limits backend.ResourceLimits, isBash bool) string {
	var parts []string
	for _, l := range rlimits(limits, isBash) {
		parts = append(parts, "ulimit "+l.flag+" "+strconv.FormatInt(l.n, 10))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " && ") + " || exit 125"
}

// rlimit is one resource limit as ulimit sets it: n units of unit bytes (or
// seconds, or descriptors).
type rlimit struct {
	res  resource
	flag string
	n    int64
	unit int64
}

// value is the limit in the kernel's units, as ulimit sets it.
func (l rlimit) value() uint64 { return uint64(l.n) * uint64(l.unit) }

// rlimits converts limits to ulimit's units, rounded down (but not to zero
// when the limit is positive) after lowering them to this program's own
// hard limits. Processes is not applied.
func rlimits(limits backend.ResourceLimits, isBash bool) []rlimit {
	fsizeUnit := int64(512) // sh (POSIX) counts -f in 512-byte blocks
	if isBash {
		fsizeUnit = 1024
	}
	var out []rlimit
	add := func(flag string, v int64, unit int64, res resource) {
		if v <= 0 {
			return
		}
		if hard, ok := hardLimit(res); ok && uint64(v) > hard {
			v = int64(hard)
		}
		out = append(out, rlimit{res: res, flag: flag, n: max(v/unit, 1), unit: unit})
	}
	add("-t", limits.CPUSeconds, 1, resCPU)
	add("-f", limits.FileSize, fsizeUnit, resFileSize)
	add("-v", limits.AddressSpace, 1024, resAddressSpace)
	add("-n", limits.OpenFiles, 1, resOpenFiles)
	return out
}

// resource names a resource limit independently of the platform.
type resource int

const (
	resCPU resource = iota
	resFileSize
	resAddressSpace
	resOpenFiles
)
