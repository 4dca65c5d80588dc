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
	fsizeUnit := int64(512) // sh (POSIX) counts -f in 512-byte blocks
	if isBash {
		fsizeUnit = 1024
	}
	var parts []string
	add := func(flag string, v int64, unit int64, res resource) {
		if v <= 0 {
			return
		}
		if hard, ok := hardLimit(res); ok && uint64(v) > hard {
			v = int64(hard)
		}
		n := max(v/unit, 1)
		parts = append(parts, "ulimit "+flag+" "+strconv.FormatInt(n, 10))
	}
	add("-t", limits.CPUSeconds, 1, resCPU)
	add("-f", limits.FileSize, fsizeUnit, resFileSize)
	add("-v", limits.AddressSpace, 1024, resAddressSpace)
	add("-n", limits.OpenFiles, 1, resOpenFiles)
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, " && ") + " || exit 125"
}

// resource names a resource limit independently of the platform.
type resource int

const (
	resCPU resource = iota
	resFileSize
	resAddressSpace
	resOpenFiles
)
