package docker

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// setIDModeArg names the calls that take a file mode the kernel can give a
// set-user-ID or set-group-ID bit from, and the argument that holds it.
// mkdir and mkdirat are not among them: the kernel drops both bits from
// their mode.
var setIDModeArg = map[string]uint{
	"chmod": 1, "fchmod": 1, "creat": 1, "mknod": 1,
	"fchmodat": 2, "fchmodat2": 2, "mknodat": 2,
	"open": 2, "openat": 3,
}

// createFlagsArg names the calls whose mode counts only when their flags
// create a file (O_CREAT, O_TMPFILE), and the argument that holds them.
var createFlagsArg = map[string]uint{"open": 1, "openat": 2}

// Values the profile's rules compare against.
const (
	setIDBits   = unix.S_ISUID | unix.S_ISGID
	createFlags = unix.O_CREAT | unix.O_TMPFILE&^unix.O_DIRECTORY // __O_TMPFILE
)

// setIDProfile returns Docker's default seccomp profile (from
// github.com/moby/profiles/seccomp, the daemon's own source) with the calls
// of [setIDModeArg] allowed only without a set-ID bit in their mode, and
// openat2 (whose mode lives in memory seccomp cannot read) failing with
// ENOSYS, so that callers fall back to openat. Everything else the default
// profile decides stays as it is, including its conditions on the
// container's capabilities, architecture and kernel, which the daemon
// evaluates.
//
// The default profile allows these calls unconditionally; the profile
// removes them from that rule and adds, for each, allow rules that hold
// only for a mode without either bit (or, for open and openat, for flags
// that create nothing). A call that no rule allows gets the profile's
// default action, EPERM. The comparisons are masked
// (SCMP_CMP_MASKED_EQ) with a mask of zero in the high 32 bits, so bits
// set there change nothing, as in the kernel, whose mode is 16 bits and
// flags an int.
func setIDProfile() ([]byte, error) {
	p := seccomp.DefaultProfile()
	found := map[string]bool{}
	var kept []*seccomp.Syscall
	for _, r := range p.Syscalls {
		for _, name := range r.Names {
			if _, ok := setIDModeArg[name]; !ok && name != "openat2" {
				continue
			}
			// Only an unconditional allow can be narrowed by removing
			// the name: anything else would be changed in meaning.
			if r.Action != specs.ActAllow || len(r.Args) > 0 || r.Includes != nil || r.Excludes != nil {
				return nil, fmt.Errorf("docker: the default seccomp profile has a rule of its own for %s (%s)", name, r.Action)
			}
			found[name] = true
		}
		r.Names = slices.DeleteFunc(r.Names, func(n string) bool { return found[n] })
		if len(r.Names) > 0 {
			kept = append(kept, r)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(setIDModeArg)) {
		if !found[name] {
			continue // the default refuses it already
		}
		kept = append(kept, allowMasked(name, setIDModeArg[name], setIDBits))
		if i, ok := createFlagsArg[name]; ok {
			kept = append(kept, allowMasked(name, i, createFlags))
		}
	}
	if found["openat2"] {
		enosys := uint(unix.ENOSYS)
		kept = append(kept, &seccomp.Syscall{LinuxSyscall: specs.LinuxSyscall{Names: []string{"openat2"}, Action: specs.ActErrno, ErrnoRet: &enosys}})
	}
	p.Syscalls = kept
	return json.Marshal(p)
}

// allowMasked allows name when argument i has none of bits.
func allowMasked(name string, i uint, bits uint64) *seccomp.Syscall {
	return &seccomp.Syscall{
		LinuxSyscall: specs.LinuxSyscall{
			Names:  []string{name},
			Action: specs.ActAllow,
			Args:   []specs.LinuxSeccompArg{{Index: i, Value: bits, ValueTwo: 0, Op: specs.OpMaskedEqual}},
		},
		Comment: setIDComment,
	}
}
