// Package seccomp assembles and installs the seccomp-bpf filter of the
// OS-sandbox backend.
//
// The filter is hand-assembled with golang.org/x/net/bpf rather than built
// with a seccomp library because the Go libraries at hand get two details
// wrong that matter for containment: they allow a syscall made through a
// foreign architecture's entry point (a 64-bit process can still enter the
// kernel with int 0x80 as i386, with the i386 numbering, or as x32 on
// x86-64), and they compare 64-bit arguments where the kernel reads only the
// low 32 bits (socket's domain, ioctl's request, clone's flags), so a
// forbidden value with high bits set slips past the comparison and is then
// honoured by the kernel.
//
// # Guarantees
//
// A process under the filter:
//   - is killed (SECCOMP_RET_KILL_PROCESS) when it makes a syscall through an
//     architecture other than the native one: i386 via int 0x80 on x86-64,
//     x32 (syscall numbers with bit 30 set), AArch32 on arm64;
//   - gets EPERM from the syscalls that reach kernel attack surface or other
//     processes: ptrace and process_vm_*, pidfd_getfd, kcmp,
//     process_madvise, mount and the new mount API, pivot_root, chroot,
//     setns, unshare, bpf, perf_event_open, userfaultfd, kexec_*, module
//     loading, keyctl/add_key/request_key, open_by_handle_at and
//     name_to_handle_at, reboot, swapon/swapoff, io_uring_*, acct,
//     quotactl, iopl/ioperm, syslog, vhangup, clock and time setting,
//     fanotify_init (with [Policy].TraceMe, ptrace still allows
//     PTRACE_TRACEME and PTRACE_DETACH, compared on the full 64-bit
//     request);
//   - gets EPERM from prlimit64 setting another process's limits (reading
//     them stays allowed; with [Policy].TraceMe, whose command has a pid
//     namespace of its own, setting them is allowed) and from setpriority
//     on anything but the caller itself or its own process group (who 0,
//     not PRIO_USER): Landlock does not confine either, and another
//     process of the same user (this program) would be reachable;
//   - gets EPERM from clone with any namespace-creating flag, and ENOSYS from
//     clone3 (whose flags live in memory the filter cannot read) so that libc
//     falls back to clone;
//   - gets EPERM from the TIOCSTI and TIOCLINUX ioctls (typing into the
//     controlling terminal);
//   - gets EPERM from socket for every family but AF_UNIX unless the policy
//     allows the network, and from socketpair for every family but AF_UNIX;
//   - when the policy does not allow Unix sockets (the kernel cannot confine
//     pathname-socket connects, see [Policy]), gets EPERM from
//     socket(AF_UNIX) and from socketpair of any type but SOCK_STREAM and
//     SOCK_SEQPACKET (a datagram pair can be re-connected or sent to any
//     path);
//   - when the policy allows TCP only ([Policy].TCPOnly), gets EPERM from
//     socket for every family but AF_INET and AF_INET6 with type
//     SOCK_STREAM and protocol 0 or IPPROTO_TCP (no UDP, raw, netlink or
//     packet sockets), and from sendto, sendmsg and sendmmsg with
//     MSG_FASTOPEN (which would connect without connect(2)).
//
// Arguments are compared on their low 32 bits wherever the kernel reads only
// those.
//
// # Not guaranteed
//
// The filter sees syscall numbers and register arguments, never memory: it
// cannot inspect paths, socket addresses or clone3's argument structure.
// Filesystem and network access by address are Landlock's job. Sockets
// received already open (inherited or passed with SCM_RIGHTS) are not
// affected. Only amd64 and arm64 are supported; [ForArch] fails on others.
package seccomp

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/net/bpf"
)

// Return values of a seccomp filter (linux/seccomp.h).
const (
	RetKillProcess uint32 = 0x80000000
	RetErrno       uint32 = 0x00050000
	RetAllow       uint32 = 0x7fff0000
)

// Errno values returned by the filter.
const (
	errnoEPERM  = 1
	errnoENOSYS = 38
)

// Offsets into struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// argLow is the offset of the low 32 bits of argument i. Both supported
// architectures are little-endian, so the low half comes first.
func argLow(i int) uint32 { return uint32(offArgs + 8*i) }

// argHigh is the offset of the high 32 bits of argument i.
func argHigh(i int) uint32 { return argLow(i) + 4 }

// Constants the filter compares against (linux uapi).
const (
	afUnix         = 1
	sockTypeMask   = 0xf
	sockStream     = 1
	sockSeqpacket  = 5
	afInet         = 2
	afInet6        = 10
	ipprotoTCP     = 6
	msgFastOpen    = 0x20000000
	ptraceTraceMe  = 0
	ptraceDetach   = 17
	prioUser       = 2 // PRIO_USER
	tiocsti        = 0x5412
	tioclinux      = 0x541c
	x32SyscallBit  = 0x40000000
	cloneNamespace = 0x00020000 | // CLONE_NEWNS
		0x02000000 | // CLONE_NEWCGROUP
		0x04000000 | // CLONE_NEWUTS
		0x08000000 | // CLONE_NEWIPC
		0x10000000 | // CLONE_NEWUSER
		0x20000000 | // CLONE_NEWPID
		0x40000000 // CLONE_NEWNET
)

// Policy selects the variable parts of the filter. The zero value is the
// strictest: no network, no socket(AF_UNIX).
type Policy struct {
	// AllowNetwork lets socket create sockets of every family.
	AllowNetwork bool
	// AllowUnixSockets lets socket create AF_UNIX sockets and socketpair
	// create pairs of any type. Set it only when something else confines
	// connect and sendto on pathname sockets (Landlock ABI 9 and later);
	// otherwise a command can connect to any listening socket it can name
	// (a Docker daemon, an SSH agent, the session bus).
	AllowUnixSockets bool
	// TCPOnly, with AllowNetwork, narrows the network to TCP: socket
	// creates only AF_INET and AF_INET6 stream sockets with protocol 0 or
	// IPPROTO_TCP, and sends with MSG_FASTOPEN are refused. Where the
	// addresses are confined elsewhere (a network namespace, Landlock TCP
	// port rules) this leaves no datagram or raw path around them.
	TCPOnly bool
	// TraceMe lets ptrace make two requests, PTRACE_TRACEME and
	// PTRACE_DETACH (compared on all 64 bits: the kernel reads a long),
	// and still refuses every other. A launcher uses them to stop a child
	// at exec and set its resource limits before it runs (see
	// backend/ossandbox); for the command they give no access to any
	// process: becoming traced by one's parent hands the parent nothing
	// but PTRACE_DETACH.
	TraceMe bool
}

// Arch describes one architecture the filter supports.
type Arch struct {
	Name string // the GOARCH it serves, such as "amd64"
	// Audit is the AUDIT_ARCH_* value the kernel reports for the native
	// syscall entry.
	Audit uint32
	// X32 is true where syscall numbers with bit 30 set select the x32 ABI
	// under the native audit architecture (x86-64).
	X32 bool
	nr  map[string]uint32
}

// Nr returns the number of the syscall name on a and whether a has it.
func (a *Arch) Nr(name string) (uint32, bool) {
	n, ok := a.nr[name]
	return n, ok
}

// ErrUnsupportedArch is returned by [ForArch] for an architecture the filter
// has no syscall table for.
var ErrUnsupportedArch = errors.New("seccomp: unsupported architecture")

// ForArch returns the description of the GOARCH-named architecture.
func ForArch(goarch string) (*Arch, error) {
	switch goarch {
	case "amd64":
		return amd64, nil
	case "arm64":
		return arm64, nil
	}
	return nil, fmt.Errorf("%w %q: the OS sandbox supports amd64 and arm64", ErrUnsupportedArch, goarch)
}

// Denied lists the syscalls the filter answers with EPERM whatever their
// arguments. A name an architecture lacks (iopl on arm64) is skipped there.
var Denied = []string{
	// Other processes' memory and file descriptors.
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp", "process_madvise",
	// Mount topology and namespaces (Landlock also refuses mounts).
	"mount", "umount2", "pivot_root", "chroot", "setns", "unshare",
	"open_tree", "open_tree_attr", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
	// Kernel attack surface rarely needed by ordinary tools.
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"keyctl", "add_key", "request_key",
	// File handles bypass path-based checks.
	"open_by_handle_at", "name_to_handle_at",
	// Machine administration.
	"reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "iopl", "ioperm", "syslog",
	"vhangup", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "fanotify_init",
}

// label marks a position in a program under assembly.
type label string

// insn is an instruction whose jump targets may still be labels.
type insn struct {
	ins         bpf.Instruction
	jumpTrue    label // for JumpIf / JumpIfX: target when true
	jumpFalse   label // target when false; "" means the next instruction
	jumpAlways  label // for Jump
	defineLabel label // a pseudo-instruction that defines a label
}

type asm struct{ prog []insn }

func (a *asm) emit(i bpf.Instruction) { a.prog = append(a.prog, insn{ins: i}) }
func (a *asm) mark(l label)           { a.prog = append(a.prog, insn{defineLabel: l}) }
func (a *asm) ret(v uint32)           { a.emit(bpf.RetConstant{Val: v}) }
func (a *asm) load(off uint32)        { a.emit(bpf.LoadAbsolute{Off: off, Size: 4}) }
func (a *asm) jumpTo(l label)         { a.prog = append(a.prog, insn{ins: bpf.Jump{}, jumpAlways: l}) }
func (a *asm) jeq(v uint32, t label)  { a.jif(bpf.JumpEqual, v, t, "") }
func (a *asm) jset(v uint32, t label) { a.jif(bpf.JumpBitsSet, v, t, "") }
func (a *asm) jif(c bpf.JumpTest, v uint32, t, f label) {
	a.prog = append(a.prog, insn{ins: bpf.JumpIf{Cond: c, Val: v}, jumpTrue: t, jumpFalse: f})
}

// assemble resolves labels into relative skips.
func (a *asm) assemble() ([]bpf.Instruction, error) {
	pos := map[label]int{}
	n := 0
	for _, in := range a.prog {
		if in.defineLabel != "" {
			pos[in.defineLabel] = n
			continue
		}
		n++
	}
	out := make([]bpf.Instruction, 0, n)
	skip := func(from int, l label) (int, error) {
		if l == "" {
			return 0, nil
		}
		p, ok := pos[l]
		if !ok {
			return 0, fmt.Errorf("seccomp: undefined label %q", l)
		}
		s := p - from - 1
		if s < 0 {
			return 0, fmt.Errorf("seccomp: backward jump to %q", l)
		}
		return s, nil
	}
	for _, in := range a.prog {
		if in.defineLabel != "" {
			continue
		}
		i := len(out)
		switch ins := in.ins.(type) {
		case bpf.JumpIf:
			t, err := skip(i, in.jumpTrue)
			if err != nil {
				return nil, err
			}
			f, err := skip(i, in.jumpFalse)
			if err != nil {
				return nil, err
			}
			if t > 255 || f > 255 {
				return nil, errors.New("seccomp: conditional jump too far")
			}
			ins.SkipTrue, ins.SkipFalse = uint8(t), uint8(f)
			out = append(out, ins)
		case bpf.Jump:
			s, err := skip(i, in.jumpAlways)
			if err != nil {
				return nil, err
			}
			ins.Skip = uint32(s)
			out = append(out, ins)
		default:
			out = append(out, in.ins)
		}
	}
	if len(out) > 4096 { // BPF_MAXINSNS
		return nil, errors.New("seccomp: filter too long")
	}
	return out, nil
}

// dispatch sends one syscall number to the rule starting at label to.
type dispatch struct {
	nr uint32
	to label
}

// dispatchTree emits a binary search over the syscall number in the
// accumulator: each entry's number jumps to its label, every other number to
// otherwise. A linear chain of comparisons would do the same, but the kernel
// runs the filter once per syscall number when it is installed (to cache
// which syscalls it always allows, under a spin lock), and the cost of that
// grows with the comparisons an allowed syscall passes: the tree passes about
// log2(len(entries)) of them instead of all.
func (a *asm) dispatchTree(entries []dispatch, otherwise label) error {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(x, y dispatch) int { return cmp.Compare(x.nr, y.nr) })
	for i := 1; i < len(entries); i++ {
		if entries[i].nr == entries[i-1].nr {
			return fmt.Errorf("seccomp: syscall %d has two rules", entries[i].nr)
		}
	}
	n := 0
	var tree func(e []dispatch)
	tree = func(e []dispatch) {
		// Small ranges: compare each; larger ones: split on the middle
		// number. Every path ends in a jump, so no range falls through
		// into the next one's code.
		if len(e) <= 4 {
			for _, d := range e {
				a.jeq(d.nr, d.to)
			}
			a.jumpTo(otherwise)
			return
		}
		mid := len(e) / 2
		n++
		upper := label(fmt.Sprintf("nr>=%d#%d", e[mid].nr, n))
		a.jif(bpf.JumpGreaterOrEqual, e[mid].nr, upper, "")
		tree(e[:mid])
		a.mark(upper)
		tree(e[mid:])
	}
	tree(entries)
	return nil
}

// Build returns the filter for arch under policy, as BPF instructions.
func Build(arch *Arch, p Policy) ([]bpf.Instruction, error) {
	const (
		lKill   label = "kill"
		lAllow  label = "allow"
		lEPERM  label = "eperm"
		lENOSYS label = "enosys"
		lSocket label = "socket"
		lPair   label = "socketpair"
		lClone  label = "clone"
		lIoctl  label = "ioctl"
		lSend   label = "send"
		lTCP    label = "tcp"
		lPtrace label = "ptrace"
		lPrlim  label = "prlimit64"
		lPrio   label = "setpriority"

		lSendmsg  label = "sendmsg"
		lSendmmsg label = "sendmmsg"
	)
	need := func(name string) uint32 {
		n, ok := arch.nr[name]
		if !ok {
			panic("seccomp: syscall table of " + arch.Name + " lacks " + name)
		}
		return n
	}
	var a asm
	// A foreign entry point has its own syscall numbering: kill before
	// reading the number.
	a.load(offArch)
	a.jif(bpf.JumpEqual, arch.Audit, "", lKill)
	a.load(offNr)
	if arch.X32 {
		a.jif(bpf.JumpGreaterOrEqual, x32SyscallBit, lKill, "")
	}
	// Every syscall with a rule, and where its rule starts. The rest are
	// allowed.
	var special []dispatch
	add := func(nr uint32, l label) { special = append(special, dispatch{nr, l}) }
	for _, name := range Denied {
		if name == "ptrace" && p.TraceMe {
			add(need(name), lPtrace)
			continue
		}
		if n, ok := arch.nr[name]; ok {
			add(n, lEPERM)
		}
	}
	if p.AllowNetwork && p.TCPOnly {
		for _, name := range []string{"sendto", "sendmsg", "sendmmsg"} {
			add(need(name), lSend)
		}
	}
	add(need("clone3"), lENOSYS)
	add(need("clone"), lClone)
	add(need("ioctl"), lIoctl)
	add(need("socket"), lSocket)
	add(need("socketpair"), lPair)
	if !p.TraceMe {
		add(need("prlimit64"), lPrlim)
	}
	add(need("setpriority"), lPrio)
	if err := a.dispatchTree(special, lAllow); err != nil {
		return nil, err
	}

	if !p.TraceMe {
		// prlimit64(pid, resource, new, old): pid is an int, new a
		// pointer. Another process's limits (this program's: RLIMIT_CPU
		// would have the kernel kill it) may be read, not set. With
		// TraceMe the launcher sets the command's limits through it, and
		// the command runs in a pid namespace of its own, where no
		// other pid can be named.
		a.mark(lPrlim)
		a.load(argLow(0))
		a.jeq(0, lAllow)
		a.load(argLow(2))
		a.jif(bpf.JumpEqual, 0, "", lEPERM)
		a.load(argHigh(2))
		a.jeq(0, lAllow)
		a.jumpTo(lEPERM)
	}

	// setpriority(which, who, prio): which and who are ints. Only the
	// caller itself or its own process group (who 0); PRIO_USER reaches
	// every process of the user, this program included.
	a.mark(lPrio)
	a.load(argLow(0))
	a.jeq(prioUser, lEPERM)
	a.load(argLow(1))
	a.jeq(0, lAllow)
	a.jumpTo(lEPERM)

	// clone(flags, ...): the kernel uses the low 32 bits of flags.
	a.mark(lClone)
	a.load(argLow(0))
	a.jset(cloneNamespace, lEPERM)
	a.jumpTo(lAllow)

	if p.TraceMe {
		// ptrace(request, ...): request is a long.
		a.mark(lPtrace)
		a.load(argHigh(0))
		a.jif(bpf.JumpEqual, 0, "", lEPERM)
		a.load(argLow(0))
		a.jeq(ptraceTraceMe, lAllow)
		a.jeq(ptraceDetach, lAllow)
		a.jumpTo(lEPERM)
	}

	// ioctl(fd, request, ...): request is an unsigned int in the kernel.
	a.mark(lIoctl)
	a.load(argLow(1))
	a.jeq(tiocsti, lEPERM)
	a.jeq(tioclinux, lEPERM)
	a.jumpTo(lAllow)

	// socket(domain, type, protocol): domain is an int.
	a.mark(lSocket)
	a.load(argLow(0))
	if p.AllowUnixSockets {
		a.jeq(afUnix, lAllow)
	} else {
		a.jeq(afUnix, lEPERM)
	}
	switch {
	case p.AllowNetwork && p.TCPOnly:
		// socket(AF_INET or AF_INET6, SOCK_STREAM | flags, 0 or
		// IPPROTO_TCP): type and protocol are ints too.
		a.jeq(afInet, lTCP)
		a.jeq(afInet6, lTCP)
		a.jumpTo(lEPERM)
		a.mark(lTCP)
		a.load(argLow(1))
		a.emit(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockTypeMask})
		a.jif(bpf.JumpEqual, sockStream, "", lEPERM)
		a.load(argLow(2))
		a.jeq(0, lAllow)
		a.jeq(ipprotoTCP, lAllow)
		a.jumpTo(lEPERM)
	case p.AllowNetwork:
		a.jumpTo(lAllow)
	default:
		a.jumpTo(lEPERM)
	}

	if p.AllowNetwork && p.TCPOnly {
		// sendto(fd, buf, len, flags, ...), sendmsg(fd, msg, flags) and
		// sendmmsg(fd, vec, vlen, flags): flags is an int.
		a.mark(lSend)
		a.emit(bpf.LoadAbsolute{Off: offNr, Size: 4})
		a.jeq(need("sendmsg"), lSendmsg)
		a.jeq(need("sendmmsg"), lSendmmsg)
		a.load(argLow(3))
		a.jset(msgFastOpen, lEPERM)
		a.jumpTo(lAllow)
		a.mark(lSendmsg)
		a.load(argLow(2))
		a.jset(msgFastOpen, lEPERM)
		a.jumpTo(lAllow)
		a.mark(lSendmmsg)
		a.load(argLow(3))
		a.jset(msgFastOpen, lEPERM)
		a.jumpTo(lAllow)
	}

	// socketpair(domain, type, protocol, sv).
	a.mark(lPair)
	a.load(argLow(0))
	a.jif(bpf.JumpEqual, afUnix, "", lEPERM)
	if !p.AllowUnixSockets {
		a.load(argLow(1))
		a.emit(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockTypeMask})
		a.jeq(sockStream, lAllow)
		a.jeq(sockSeqpacket, lAllow)
		a.jumpTo(lEPERM)
	}

	a.mark(lAllow)
	a.ret(RetAllow)
	a.mark(lEPERM)
	a.ret(RetErrno | errnoEPERM)
	a.mark(lENOSYS)
	a.ret(RetErrno | errnoENOSYS)
	a.mark(lKill)
	a.ret(RetKillProcess)
	return a.assemble()
}

// Assemble returns the filter for arch under policy in the kernel's format.
func Assemble(arch *Arch, p Policy) ([]bpf.RawInstruction, error) {
	prog, err := Build(arch, p)
	if err != nil {
		return nil, err
	}
	return bpf.Assemble(prog)
}
