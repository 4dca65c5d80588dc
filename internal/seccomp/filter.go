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
//     fanotify_init (with [Options].TraceMe, ptrace still allows
//     PTRACE_TRACEME and PTRACE_DETACH, compared on the full 64-bit
//     request);
//   - gets EPERM from prlimit64 setting another process's limits (reading
//     them stays allowed; with [Options].TraceMe, whose command has a pid
//     namespace of its own, setting them is allowed) and from setpriority
//     on anything but the caller itself or its own process group (who 0,
//     not PRIO_USER): Landlock does not confine either, and another
//     process of the same user (this program) would be reachable;
//   - gets EPERM from clone with any namespace-creating flag, and ENOSYS from
//     clone3 (whose flags live in memory the filter cannot read) so that libc
//     falls back to clone;
//   - gets EPERM from every call that would give a file the set-user-ID or
//     set-group-ID bit: chmod, fchmod, fchmodat and fchmodat2 with either
//     bit in the mode; mknod and mknodat with either bit in the mode; creat
//     with either bit; open and openat with either bit in the mode when the
//     flags have O_CREAT or O_TMPFILE (the only opens whose mode the kernel
//     reads). openat2, whose mode lives in memory the filter cannot read,
//     gets ENOSYS, so that callers fall back to openat (glibc's and Go's
//     open never use it). mkdir and mkdirat need no rule: the kernel drops
//     both bits from their mode. A set-user-ID program left in a directory
//     another user can reach would run with the identity of its owner, the
//     caller: root for a root caller (see Not guaranteed for directories);
//   - gets EPERM from the TIOCSTI and TIOCLINUX ioctls (typing into the
//     controlling terminal);
//   - gets EPERM from socket for every family but AF_UNIX unless the options
//     allow the network, and from socketpair for every family but AF_UNIX;
//   - when the options do not allow Unix sockets (the kernel cannot confine
//     pathname-socket connects, see [Options]), gets EPERM from
//     socket(AF_UNIX) and from socketpair of any type but SOCK_STREAM and
//     SOCK_SEQPACKET (a datagram pair can be re-connected or sent to any
//     path);
//   - when the options allow TCP only ([Options].TCPOnly), gets EPERM from
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
// The set-ID rule cannot tell files from directories (chmod's argument is a
// path or a descriptor), so a directory cannot be given the set-group-ID
// bit either: git init --shared, install -d -m 2775, and GNU chmod with a
// numeric mode on a directory that already has the bit (chmod keeps it by
// passing it back) fail with EPERM; so does a chmod that keeps the bit of a
// file that already has one (chmod g-w). A directory made inside a
// set-group-ID directory still inherits the bit: the kernel sets it, not a
// call the filter sees. Set-ID files that already exist keep their bits
// until written (a write by a process without CAP_FSETID clears them).
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

// The mode bits the filter refuses, and the open flags under which it looks.
const (
	// setIDBits are S_ISUID and S_ISGID. The mode arguments are umode_t
	// (16 bits in the kernel), so the low 32 bits hold every bit read.
	setIDBits = 0o4000 | 0o2000
	// createFlags are the open flags with which the kernel reads the mode:
	// O_CREAT and __O_TMPFILE (O_TMPFILE without its O_DIRECTORY), the
	// same values on amd64 and arm64 (flags is an int).
	createFlags = 0o100 | 0o20000000
)

// Options selects the variable parts of the filter. The zero value is the
// strictest: no network, no socket(AF_UNIX).
type Options struct {
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

// Labels of the filter: the four verdicts, and where each rule's code
// starts.
const (
	lKill   label = "kill"
	lAllow  label = "allow"
	lEPERM  label = "eperm"
	lENOSYS label = "enosys"

	lPrlim    label = "prlimit64"
	lPrio     label = "setpriority"
	lClone    label = "clone"
	lPtrace   label = "ptrace"
	lIoctl    label = "ioctl"
	lSocket   label = "socket"
	lTCP      label = "tcp"
	lSend     label = "send"
	lSendmsg  label = "sendmsg"
	lSendmmsg label = "sendmmsg"
	lPair     label = "socketpair"
	lMode1    label = "mode-in-arg1"
	lMode2    label = "mode-in-arg2"
	lOpen     label = "open"
	lOpenat   label = "openat"
)

// filter is a filter under assembly for one architecture and its options.
type filter struct {
	asm
	arch *Arch
	p    Options
}

// rule is the part of the filter that decides some syscalls: the syscalls
// dispatched to it and the label they go to. A rule with code emits it
// starting at that label and ending in a jump to a verdict; a rule without
// code sends its syscalls straight to the verdict its label names.
type rule struct {
	calls []string
	at    label
	emit  func(*filter)
}

// Build returns the filter for arch under p, as BPF instructions.
func Build(arch *Arch, p Options) ([]bpf.Instruction, error) {
	f := &filter{arch: arch, p: p}
	f.checkArch()
	rules := f.rules()
	// Every syscall with a rule, and where its rule starts. The rest are
	// allowed.
	var special []dispatch
	for _, r := range rules {
		for _, name := range r.calls {
			special = append(special, dispatch{f.need(name), r.at})
		}
	}
	if err := f.dispatchTree(special, lAllow); err != nil {
		return nil, err
	}
	for _, r := range rules {
		if r.emit != nil {
			f.mark(r.at)
			r.emit(f)
		}
	}
	f.verdicts()
	return f.assemble()
}

// need returns the number of the syscall name, which every supported
// architecture has: a table without it is a bug of this package.
func (f *filter) need(name string) uint32 {
	n, ok := f.arch.nr[name]
	if !ok {
		panic("seccomp: syscall table of " + f.arch.Name + " lacks " + name)
	}
	return n
}

// checkArch kills a syscall made through a foreign entry point, which has
// its own syscall numbering, before the number is read, and leaves the
// number of any other in the accumulator.
func (f *filter) checkArch() {
	f.load(offArch)
	f.jif(bpf.JumpEqual, f.arch.Audit, "", lKill)
	f.load(offNr)
	if f.arch.X32 {
		f.jif(bpf.JumpGreaterOrEqual, x32SyscallBit, lKill, "")
	}
}

// rules returns the rules the options call for, in the order their code is
// laid out. socketpair comes last: under [Options].AllowUnixSockets its code
// ends by falling through into the allow verdict, which follows it.
func (f *filter) rules() []rule {
	p := f.p
	tcpOnly := p.AllowNetwork && p.TCPOnly
	all := []struct {
		when bool
		rule
	}{
		{true, rule{f.denied(), lEPERM, nil}},
		{true, rule{[]string{"clone3", "openat2"}, lENOSYS, nil}},
		{true, rule{f.have("chmod", "fchmod", "mknod", "creat"), lMode1, (*filter).modeArg1}},
		{true, rule{[]string{"fchmodat", "fchmodat2", "mknodat"}, lMode2, (*filter).modeArg2}},
		{true, rule{f.have("open"), lOpen, (*filter).open}},
		{true, rule{[]string{"openat"}, lOpenat, (*filter).openat}},
		{!p.TraceMe, rule{[]string{"prlimit64"}, lPrlim, (*filter).prlimit64}},
		{true, rule{[]string{"setpriority"}, lPrio, (*filter).setpriority}},
		{true, rule{[]string{"clone"}, lClone, (*filter).clone}},
		{p.TraceMe, rule{[]string{"ptrace"}, lPtrace, (*filter).ptrace}},
		{true, rule{[]string{"ioctl"}, lIoctl, (*filter).ioctl}},
		{true, rule{[]string{"socket"}, lSocket, (*filter).socket}},
		{tcpOnly, rule{[]string{"sendto", "sendmsg", "sendmmsg"}, lSend, (*filter).send}},
		{true, rule{[]string{"socketpair"}, lPair, (*filter).socketpair}},
	}
	var out []rule
	for _, r := range all {
		if r.when && len(r.calls) > 0 {
			out = append(out, r.rule)
		}
	}
	return out
}

// denied returns the names of [Denied] that arch has and that get EPERM
// whatever their arguments: ptrace has a rule of its own under
// [Options].TraceMe.
func (f *filter) denied() []string {
	var out []string
	for _, name := range Denied {
		if _, ok := f.arch.nr[name]; ok && !(name == "ptrace" && f.p.TraceMe) {
			out = append(out, name)
		}
	}
	return out
}

// have returns those of names that arch has: chmod, open, creat and mknod
// exist on amd64 only (arm64 has only their *at forms).
func (f *filter) have(names ...string) []string {
	var out []string
	for _, name := range names {
		if _, ok := f.arch.nr[name]; ok {
			out = append(out, name)
		}
	}
	return out
}

// modeArg1 refuses a set-ID bit in the mode of chmod(path, mode),
// fchmod(fd, mode), mknod(path, mode, dev) and creat(path, mode).
func (f *filter) modeArg1() {
	f.load(argLow(1))
	f.jset(setIDBits, lEPERM)
	f.jumpTo(lAllow)
}

// modeArg2 refuses a set-ID bit in the mode of fchmodat(dfd, path, mode),
// fchmodat2(dfd, path, mode, flags) and mknodat(dfd, path, mode, dev).
func (f *filter) modeArg2() {
	f.load(argLow(2))
	f.jset(setIDBits, lEPERM)
	f.jumpTo(lAllow)
}

// open(path, flags, mode) refuses a set-ID bit in mode when flags create a
// file; without O_CREAT or O_TMPFILE the kernel ignores mode.
func (f *filter) open() {
	f.load(argLow(1))
	f.jif(bpf.JumpBitsSet, createFlags, "", lAllow)
	f.load(argLow(2))
	f.jset(setIDBits, lEPERM)
	f.jumpTo(lAllow)
}

// openat(dfd, path, flags, mode): as open, one argument later.
func (f *filter) openat() {
	f.load(argLow(2))
	f.jif(bpf.JumpBitsSet, createFlags, "", lAllow)
	f.load(argLow(3))
	f.jset(setIDBits, lEPERM)
	f.jumpTo(lAllow)
}

// prlimit64(pid, resource, new, old): pid is an int, new a pointer.
// Another process's limits (this program's: RLIMIT_CPU would have the
// kernel kill it) may be read, not set. Only without [Options].TraceMe: with
// it the launcher sets the command's limits through prlimit64, and the
// command runs in a pid namespace of its own, where no other pid can be
// named.
func (f *filter) prlimit64() {
	f.load(argLow(0))
	f.jeq(0, lAllow)
	f.load(argLow(2))
	f.jif(bpf.JumpEqual, 0, "", lEPERM)
	f.load(argHigh(2))
	f.jeq(0, lAllow)
	f.jumpTo(lEPERM)
}

// setpriority(which, who, prio): which and who are ints. It allows only
// the caller itself or its own process group (who 0); PRIO_USER reaches
// every process of the user, this program included.
func (f *filter) setpriority() {
	f.load(argLow(0))
	f.jeq(prioUser, lEPERM)
	f.load(argLow(1))
	f.jeq(0, lAllow)
	f.jumpTo(lEPERM)
}

// clone(flags, ...) refuses every namespace-creating flag, compared on the
// low 32 bits of flags, which are all the kernel uses.
func (f *filter) clone() {
	f.load(argLow(0))
	f.jset(cloneNamespace, lEPERM)
	f.jumpTo(lAllow)
}

// ptrace(request, ...), under [Options].TraceMe, allows PTRACE_TRACEME and
// PTRACE_DETACH, compared on all 64 bits of request (a long).
func (f *filter) ptrace() {
	f.load(argHigh(0))
	f.jif(bpf.JumpEqual, 0, "", lEPERM)
	f.load(argLow(0))
	f.jeq(ptraceTraceMe, lAllow)
	f.jeq(ptraceDetach, lAllow)
	f.jumpTo(lEPERM)
}

// ioctl(fd, request, ...) refuses TIOCSTI and TIOCLINUX; request is an
// unsigned int in the kernel.
func (f *filter) ioctl() {
	f.load(argLow(1))
	f.jeq(tiocsti, lEPERM)
	f.jeq(tioclinux, lEPERM)
	f.jumpTo(lAllow)
}

// socket(domain, type, protocol) decides on domain, an int: AF_UNIX as
// [Options].AllowUnixSockets says, every other family as
// [Options].AllowNetwork says, narrowed by [Options].TCPOnly to TCP.
func (f *filter) socket() {
	f.load(argLow(0))
	if f.p.AllowUnixSockets {
		f.jeq(afUnix, lAllow)
	} else {
		f.jeq(afUnix, lEPERM)
	}
	switch {
	case f.p.AllowNetwork && f.p.TCPOnly:
		f.tcpSocket()
	case f.p.AllowNetwork:
		f.jumpTo(lAllow)
	default:
		f.jumpTo(lEPERM)
	}
}

// tcpSocket, with domain in the accumulator, allows socket(AF_INET or
// AF_INET6, SOCK_STREAM | flags, 0 or IPPROTO_TCP): type and protocol are
// ints too.
func (f *filter) tcpSocket() {
	f.jeq(afInet, lTCP)
	f.jeq(afInet6, lTCP)
	f.jumpTo(lEPERM)
	f.mark(lTCP)
	f.load(argLow(1))
	f.emit(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockTypeMask})
	f.jif(bpf.JumpEqual, sockStream, "", lEPERM)
	f.load(argLow(2))
	f.jeq(0, lAllow)
	f.jeq(ipprotoTCP, lAllow)
	f.jumpTo(lEPERM)
}

// send, under [Options].TCPOnly, refuses MSG_FASTOPEN (which would connect
// without connect(2)) in the flags, an int, of sendto(fd, buf, len, flags,
// ...), sendmsg(fd, msg, flags) and sendmmsg(fd, vec, vlen, flags).
func (f *filter) send() {
	f.load(offNr)
	f.jeq(f.need("sendmsg"), lSendmsg)
	f.jeq(f.need("sendmmsg"), lSendmmsg)
	f.load(argLow(3))
	f.jset(msgFastOpen, lEPERM)
	f.jumpTo(lAllow)
	f.mark(lSendmsg)
	f.load(argLow(2))
	f.jset(msgFastOpen, lEPERM)
	f.jumpTo(lAllow)
	f.mark(lSendmmsg)
	f.load(argLow(3))
	f.jset(msgFastOpen, lEPERM)
	f.jumpTo(lAllow)
}

// socketpair(domain, type, protocol, sv) allows AF_UNIX only and, unless
// [Options].AllowUnixSockets, only of type SOCK_STREAM or SOCK_SEQPACKET (a
// datagram pair can be re-connected or sent to any path).
func (f *filter) socketpair() {
	f.load(argLow(0))
	f.jif(bpf.JumpEqual, afUnix, "", lEPERM)
	if !f.p.AllowUnixSockets {
		f.load(argLow(1))
		f.emit(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: sockTypeMask})
		f.jeq(sockStream, lAllow)
		f.jeq(sockSeqpacket, lAllow)
		f.jumpTo(lEPERM)
	}
}

// verdicts emits the four return instructions the rules jump to, allow
// first (see [filter.rules]).
func (f *filter) verdicts() {
	f.mark(lAllow)
	f.ret(RetAllow)
	f.mark(lEPERM)
	f.ret(RetErrno | errnoEPERM)
	f.mark(lENOSYS)
	f.ret(RetErrno | errnoENOSYS)
	f.mark(lKill)
	f.ret(RetKillProcess)
}

// Assemble returns the filter for arch under p in the kernel's format.
func Assemble(arch *Arch, p Options) ([]bpf.RawInstruction, error) {
	prog, err := Build(arch, p)
	if err != nil {
		return nil, err
	}
	return bpf.Assemble(prog)
}
