package seccomp

import (
	"encoding/binary"
	"maps"
	"slices"
	"testing"

	"golang.org/x/net/bpf"
)

// call is one syscall as the filter sees it.
type call struct {
	arch uint32
	nr   uint32
	args [6]uint64
}

// data encodes c as struct seccomp_data for x/net/bpf's VM. The VM loads
// words big-endian while the kernel loads them in native (little-endian)
// order, so each 32-bit word is stored big-endian at the offset where the
// kernel would find it: the low half of an argument at its lower address.
func (c call) data() []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[offNr:], c.nr)
	binary.BigEndian.PutUint32(b[offArch:], c.arch)
	for i, v := range c.args {
		binary.BigEndian.PutUint32(b[argLow(i):], uint32(v))
		binary.BigEndian.PutUint32(b[argLow(i)+4:], uint32(v>>32))
	}
	return b
}

func run(t testing.TB, prog []bpf.Instruction, c call) uint32 {
	t.Helper()
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatalf("NewVM: %v", err)
	}
	v, err := vm.Run(c.data())
	if err != nil {
		t.Fatalf("vm.Run: %v", err)
	}
	return uint32(v)
}

// The uapi values the reference spells out on its own rather than taking
// from the filter (tables_linux_test.go checks them against x/sys/unix).
const (
	sISUID   = 0o4000
	sISGID   = 0o2000
	oCreat   = 0o100
	oTmpfile = 0o20000000 // __O_TMPFILE; O_TMPFILE adds O_DIRECTORY
)

// expect is the reference the filter is checked against: the options written
// as plain Go, with the kernel's own truncation of the arguments.
func expect(arch *Arch, p Options, c call) uint32 {
	if c.arch != arch.Audit || arch.X32 && c.nr >= x32SyscallBit {
		return RetKillProcess
	}
	eperm := RetErrno | errnoEPERM
	name := ""
	for n, nr := range arch.nr {
		if nr == c.nr {
			name = n
		}
	}
	low := func(i int) uint32 { return uint32(c.args[i]) }
	// setID reports whether mode argument i, a umode_t, has a set-ID bit.
	setID := func(i int) bool { return uint16(c.args[i])&(sISUID|sISGID) != 0 }
	switch {
	case name == "ptrace" && p.TraceMe:
		if c.args[0] == ptraceTraceMe || c.args[0] == ptraceDetach {
			return RetAllow
		}
		return eperm
	case slices.Contains(Denied, name):
		return eperm
	case p.AllowNetwork && p.TCPOnly && (name == "sendto" || name == "sendmmsg") && low(3)&msgFastOpen != 0:
		return eperm
	case p.AllowNetwork && p.TCPOnly && name == "sendmsg" && low(2)&msgFastOpen != 0:
		return eperm
	case name == "prlimit64" && !p.TraceMe && low(0) != 0 && c.args[2] != 0:
		return eperm
	case name == "setpriority" && (low(0) == prioUser || low(1) != 0):
		return eperm
	case name == "clone3" || name == "openat2":
		return RetErrno | errnoENOSYS
	case (name == "chmod" || name == "fchmod" || name == "mknod" || name == "creat") && setID(1):
		return eperm
	case (name == "fchmodat" || name == "fchmodat2" || name == "mknodat") && setID(2):
		return eperm
	case name == "open" && low(1)&(oCreat|oTmpfile) != 0 && setID(2):
		return eperm
	case name == "openat" && low(2)&(oCreat|oTmpfile) != 0 && setID(3):
		return eperm
	case name == "clone" && low(0)&cloneNamespace != 0:
		return eperm
	case name == "ioctl" && (low(1) == tiocsti || low(1) == tioclinux):
		return eperm
	case name == "socket":
		if low(0) == afUnix {
			if p.AllowUnixSockets {
				return RetAllow
			}
			return eperm
		}
		if !p.AllowNetwork {
			return eperm
		}
		if p.TCPOnly && (low(0) != afInet && low(0) != afInet6 || low(1)&sockTypeMask != sockStream || low(2) != 0 && low(2) != ipprotoTCP) {
			return eperm
		}
	case name == "socketpair":
		if low(0) != afUnix {
			return eperm
		}
		if t := low(1) & sockTypeMask; !p.AllowUnixSockets && t != sockStream && t != sockSeqpacket {
			return eperm
		}
	}
	return RetAllow
}

func TestFilterDecisions(t *testing.T) {
	x := amd64
	nr := func(n string) uint32 { v, _ := x.Nr(n); return v }
	const (
		eperm  = RetErrno | errnoEPERM
		enosys = RetErrno | errnoENOSYS
		afInet = 2
	)
	strict := Options{}
	tcp := Options{AllowNetwork: true, TCPOnly: true}
	tests := []struct {
		name string
		p    Options
		c    call
		want uint32
	}{
		{"read allowed", strict, call{x.Audit, 0, [6]uint64{}}, RetAllow},
		{"i386 via int 0x80 killed", strict, call{0x40000003, 0, [6]uint64{}}, RetKillProcess},
		{"i386 socketcall killed", strict, call{0x40000003, 102, [6]uint64{}}, RetKillProcess},
		{"x32 write killed", strict, call{x.Audit, x32SyscallBit | 1, [6]uint64{}}, RetKillProcess},
		{"aarch32 on amd64 killed", strict, call{0x40000028, 0, [6]uint64{}}, RetKillProcess},
		{"ptrace denied", strict, call{x.Audit, nr("ptrace"), [6]uint64{}}, eperm},
		{"io_uring_setup denied", strict, call{x.Audit, nr("io_uring_setup"), [6]uint64{}}, eperm},
		{"mount denied", strict, call{x.Audit, nr("mount"), [6]uint64{}}, eperm},
		{"clone3 enosys", strict, call{x.Audit, nr("clone3"), [6]uint64{}}, enosys},
		{"plain fork via clone allowed", strict, call{x.Audit, nr("clone"), [6]uint64{17}}, RetAllow},
		{"clone newuser denied", strict, call{x.Audit, nr("clone"), [6]uint64{0x10000000 | 17}}, eperm},
		{"clone newnet high bits denied", strict, call{x.Audit, nr("clone"), [6]uint64{0xffffffff_40000000}}, eperm},
		{"clone high bits only allowed like the kernel", strict, call{x.Audit, nr("clone"), [6]uint64{0xffffffff_00000011}}, RetAllow},
		{"socket inet denied", strict, call{x.Audit, nr("socket"), [6]uint64{afInet, 1}}, eperm},
		{"socket inet high bits denied", strict, call{x.Audit, nr("socket"), [6]uint64{0x1_00000002, 1}}, eperm},
		{"socket unix with high bits is still unix", Options{AllowUnixSockets: true}, call{x.Audit, nr("socket"), [6]uint64{0xffff_00000001, 1}}, RetAllow},
		{"socket inet allowed with network", Options{AllowNetwork: true}, call{x.Audit, nr("socket"), [6]uint64{afInet, 1}}, RetAllow},
		{"socket unix denied without unix sockets", Options{AllowNetwork: true}, call{x.Audit, nr("socket"), [6]uint64{afUnix, 1}}, eperm},
		{"socketpair stream allowed", strict, call{x.Audit, nr("socketpair"), [6]uint64{afUnix, sockStream | 0x80000}}, RetAllow},
		{"socketpair seqpacket allowed", strict, call{x.Audit, nr("socketpair"), [6]uint64{afUnix, sockSeqpacket}}, RetAllow},
		{"socketpair dgram denied", strict, call{x.Audit, nr("socketpair"), [6]uint64{afUnix, 2}}, eperm},
		{"socketpair dgram allowed with unix sockets", Options{AllowUnixSockets: true}, call{x.Audit, nr("socketpair"), [6]uint64{afUnix, 2}}, RetAllow},
		{"socketpair inet denied", Options{AllowNetwork: true, AllowUnixSockets: true}, call{x.Audit, nr("socketpair"), [6]uint64{afInet, 1}}, eperm},
		{"tiocsti denied", strict, call{x.Audit, nr("ioctl"), [6]uint64{0, tiocsti}}, eperm},
		{"tiocsti high bits denied", strict, call{x.Audit, nr("ioctl"), [6]uint64{0, 0xdead0000_00005412}}, eperm},
		{"tioclinux denied", strict, call{x.Audit, nr("ioctl"), [6]uint64{0, tioclinux}}, eperm},
		{"tcgets allowed", strict, call{x.Audit, nr("ioctl"), [6]uint64{0, 0x5401}}, RetAllow},
		{"tcp socket allowed", tcp, call{x.Audit, nr("socket"), [6]uint64{afInet, sockStream | 0x80800}}, RetAllow},
		{"tcp6 socket with IPPROTO_TCP allowed", tcp, call{x.Audit, nr("socket"), [6]uint64{afInet6, sockStream, ipprotoTCP}}, RetAllow},
		{"udp socket denied", tcp, call{x.Audit, nr("socket"), [6]uint64{afInet, 2}}, eperm},
		{"udp with high bits denied", tcp, call{x.Audit, nr("socket"), [6]uint64{afInet, 0xffffffff_00000002}}, eperm},
		{"stream with high bits is stream", tcp, call{x.Audit, nr("socket"), [6]uint64{afInet, 0xffffffff_00000001}}, RetAllow},
		{"mptcp denied", tcp, call{x.Audit, nr("socket"), [6]uint64{afInet, sockStream, 262}}, eperm},
		{"raw inet denied", tcp, call{x.Audit, nr("socket"), [6]uint64{afInet, 3, 1}}, eperm},
		{"netlink denied", tcp, call{x.Audit, nr("socket"), [6]uint64{16, 3}}, eperm},
		{"packet denied", tcp, call{x.Audit, nr("socket"), [6]uint64{17, 3}}, eperm},
		{"sendto fastopen denied", tcp, call{x.Audit, nr("sendto"), [6]uint64{3, 0, 0, msgFastOpen}}, eperm},
		{"sendto fastopen high bits denied", tcp, call{x.Audit, nr("sendto"), [6]uint64{3, 0, 0, 0xffffffff_20000000}}, eperm},
		{"sendmsg fastopen denied", tcp, call{x.Audit, nr("sendmsg"), [6]uint64{3, 0, msgFastOpen}}, eperm},
		{"sendmmsg fastopen denied", tcp, call{x.Audit, nr("sendmmsg"), [6]uint64{3, 0, 1, msgFastOpen}}, eperm},
		{"sendto plain allowed", tcp, call{x.Audit, nr("sendto"), [6]uint64{3, 0, 0, 0x4000}}, RetAllow},
		{"sendmsg plain allowed", tcp, call{x.Audit, nr("sendmsg"), [6]uint64{3, 0, 0x40}}, RetAllow},
		{"prlimit of self allowed", strict, call{x.Audit, nr("prlimit64"), [6]uint64{0, 7, 0x7fff0000}}, RetAllow},
		{"prlimit of another process denied", strict, call{x.Audit, nr("prlimit64"), [6]uint64{42, 7, 0x7fff0000}}, eperm},
		{"prlimit of another process disguised as self by high bits denied", strict, call{x.Audit, nr("prlimit64"), [6]uint64{0x1_00000000 | 42, 7, 0x7fff0000}}, eperm},
		{"prlimit of self with high bits allowed (the kernel reads pid 0)", strict, call{x.Audit, nr("prlimit64"), [6]uint64{0x1_00000000, 7, 0x7fff0000}}, RetAllow},
		{"prlimit with a new limit above 4 GiB denied", strict, call{x.Audit, nr("prlimit64"), [6]uint64{42, 7, 0x7fff_00000000}}, eperm},
		{"prlimit reading another process allowed", strict, call{x.Audit, nr("prlimit64"), [6]uint64{42, 7, 0, 0x7fff0000}}, RetAllow},
		{"prlimit of another process allowed with traceme", Options{TraceMe: true}, call{x.Audit, nr("prlimit64"), [6]uint64{42, 7, 0x7fff0000}}, RetAllow},
		{"setpriority of self allowed", strict, call{x.Audit, nr("setpriority"), [6]uint64{0, 0, 10}}, RetAllow},
		{"setpriority of another process denied", strict, call{x.Audit, nr("setpriority"), [6]uint64{0, 42, 19}}, eperm},
		{"setpriority of another process disguised by high bits denied", strict, call{x.Audit, nr("setpriority"), [6]uint64{0, 0xffffffff_0000002a, 19}}, eperm},
		{"setpriority of the user denied", strict, call{x.Audit, nr("setpriority"), [6]uint64{prioUser, 0, 19}}, eperm},
		{"traceme denied by default", strict, call{x.Audit, nr("ptrace"), [6]uint64{ptraceTraceMe}}, eperm},
		{"traceme allowed", Options{TraceMe: true}, call{x.Audit, nr("ptrace"), [6]uint64{ptraceTraceMe}}, RetAllow},
		{"detach allowed", Options{TraceMe: true}, call{x.Audit, nr("ptrace"), [6]uint64{ptraceDetach, 42}}, RetAllow},
		{"attach denied with traceme", Options{TraceMe: true}, call{x.Audit, nr("ptrace"), [6]uint64{16, 42}}, eperm},
		{"seize denied with traceme", Options{TraceMe: true}, call{x.Audit, nr("ptrace"), [6]uint64{0x4206, 42}}, eperm},
		{"attach disguised as traceme by high bits denied", Options{TraceMe: true}, call{x.Audit, nr("ptrace"), [6]uint64{0x1_00000000}}, eperm},
		{"peekdata disguised as detach denied", Options{TraceMe: true}, call{x.Audit, nr("ptrace"), [6]uint64{0xffffffff_00000011}}, eperm},
		{"sendto fastopen allowed with full network", Options{AllowNetwork: true}, call{x.Audit, nr("sendto"), [6]uint64{3, 0, 0, msgFastOpen}}, RetAllow},
		{"chmod 0755 allowed", strict, call{x.Audit, nr("chmod"), [6]uint64{0, 0o755}}, RetAllow},
		{"chmod 4755 denied", strict, call{x.Audit, nr("chmod"), [6]uint64{0, 0o4755}}, eperm},
		{"chmod 2755 denied", strict, call{x.Audit, nr("chmod"), [6]uint64{0, 0o2755}}, eperm},
		{"chmod with only the set-ID bit denied", strict, call{x.Audit, nr("chmod"), [6]uint64{0, 0o4000}}, eperm},
		{"chmod sticky allowed", strict, call{x.Audit, nr("chmod"), [6]uint64{0, 0o1777}}, RetAllow},
		{"chmod 4755 with high bits denied", strict, call{x.Audit, nr("chmod"), [6]uint64{0, 0xffffffff_00000000 | 0o4755}}, eperm},
		{"chmod with the bits only above 32 allowed like the kernel", strict, call{x.Audit, nr("chmod"), [6]uint64{0, 0x6000_00000000 | 0o755}}, RetAllow},
		{"chmod with bits above umode_t allowed", strict, call{x.Audit, nr("chmod"), [6]uint64{0, 0xffff0000 | 0o755}}, RetAllow},
		{"chmod with the first argument set-ID-like allowed", strict, call{x.Audit, nr("chmod"), [6]uint64{0o4755, 0o755}}, RetAllow},
		{"fchmod 4755 denied", strict, call{x.Audit, nr("fchmod"), [6]uint64{3, 0o4755}}, eperm},
		{"fchmod 0644 allowed", strict, call{x.Audit, nr("fchmod"), [6]uint64{3, 0o644}}, RetAllow},
		{"fchmodat 6755 denied", strict, call{x.Audit, nr("fchmodat"), [6]uint64{0xffffff9c, 0, 0o6755}}, eperm},
		{"fchmodat 0755 allowed", strict, call{x.Audit, nr("fchmodat"), [6]uint64{0xffffff9c, 0, 0o755}}, RetAllow},
		{"fchmodat2 4755 denied", strict, call{x.Audit, nr("fchmodat2"), [6]uint64{0xffffff9c, 0, 0o4755, 0x100}}, eperm},
		{"fchmodat2 with the flags set-ID-like allowed", strict, call{x.Audit, nr("fchmodat2"), [6]uint64{0xffffff9c, 0, 0o755, 0o4000}}, RetAllow},
		{"mknod regular 4755 denied", strict, call{x.Audit, nr("mknod"), [6]uint64{0, 0o100000 | 0o4755, 0}}, eperm},
		{"mknod fifo allowed", strict, call{x.Audit, nr("mknod"), [6]uint64{0, 0o10000 | 0o644, 0}}, RetAllow},
		{"mknodat regular 2755 denied", strict, call{x.Audit, nr("mknodat"), [6]uint64{0xffffff9c, 0, 0o100000 | 0o2755, 0}}, eperm},
		{"creat 4755 denied", strict, call{x.Audit, nr("creat"), [6]uint64{0, 0o4755}}, eperm},
		{"creat 0644 allowed", strict, call{x.Audit, nr("creat"), [6]uint64{0, 0o644}}, RetAllow},
		{"open O_CREAT 4755 denied", strict, call{x.Audit, nr("open"), [6]uint64{0, oCreat | 1, 0o4755}}, eperm},
		{"open O_CREAT 0644 allowed", strict, call{x.Audit, nr("open"), [6]uint64{0, oCreat | 1, 0o644}}, RetAllow},
		{"open without O_CREAT ignores the mode", strict, call{x.Audit, nr("open"), [6]uint64{0, 2, 0o4755}}, RetAllow},
		{"open O_TMPFILE 4755 denied", strict, call{x.Audit, nr("open"), [6]uint64{0, oTmpfile | 0o200000 | 1, 0o4755}}, eperm},
		{"open O_CREAT in high bits is no create (the kernel reads an int)", strict, call{x.Audit, nr("open"), [6]uint64{0, oCreat << 32, 0o4755}}, RetAllow},
		{"openat O_CREAT 4755 denied", strict, call{x.Audit, nr("openat"), [6]uint64{0xffffff9c, 0, oCreat | 0o1000 | 1, 0o4755}}, eperm},
		{"openat O_CREAT 2755 with high bits denied", strict, call{x.Audit, nr("openat"), [6]uint64{0xffffff9c, 0, 0xffffffff_00000000 | oCreat, 0xdead0000_00000000 | 0o2755}}, eperm},
		{"openat O_CREAT 0666 allowed", strict, call{x.Audit, nr("openat"), [6]uint64{0xffffff9c, 0, oCreat | 1, 0o666}}, RetAllow},
		{"openat O_TMPFILE 6777 denied", strict, call{x.Audit, nr("openat"), [6]uint64{0xffffff9c, 0, oTmpfile | 0o200000 | 2, 0o6777}}, eperm},
		{"openat read-only ignores the mode", strict, call{x.Audit, nr("openat"), [6]uint64{0xffffff9c, 0, 0, 0o6777}}, RetAllow},
		{"openat2 enosys", strict, call{x.Audit, nr("openat2"), [6]uint64{0xffffff9c, 0, 0, 24}}, enosys},
		{"mkdir 6777 allowed (the kernel drops the bits)", strict, call{x.Audit, 83, [6]uint64{0, 0o6777}}, RetAllow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prog, err := Build(x, tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if got := run(t, prog, tt.c); got != tt.want {
				t.Errorf("filter = %#x, want %#x", got, tt.want)
			}
			if ref := expect(x, tt.p, tt.c); ref != tt.want {
				t.Errorf("reference = %#x, want %#x (test table and reference disagree)", ref, tt.want)
			}
		})
	}
}

func TestFilterArm64KillsAArch32(t *testing.T) {
	prog, err := Build(arm64, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, prog, call{arch: 0x40000028, nr: 63}); got != RetKillProcess {
		t.Errorf("aarch32 read = %#x, want kill", got)
	}
	// Bit 30 is not special on arm64: a huge number is just unknown.
	if got := run(t, prog, call{arch: arm64.Audit, nr: x32SyscallBit | 63}); got != RetAllow {
		t.Errorf("arm64 nr with bit 30 = %#x, want allow", got)
	}
	ptrace, _ := arm64.Nr("ptrace")
	if got := run(t, prog, call{arch: arm64.Audit, nr: ptrace}); got != RetErrno|errnoEPERM {
		t.Errorf("arm64 ptrace = %#x, want EPERM", got)
	}
}

func TestEveryDeniedSyscallIsDenied(t *testing.T) {
	for _, arch := range []*Arch{amd64, arm64} {
		prog, err := Build(arch, Options{AllowNetwork: true, AllowUnixSockets: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range Denied {
			n, ok := arch.Nr(name)
			if !ok {
				if name != "iopl" && name != "ioperm" {
					t.Errorf("%s: table lacks %s", arch.Name, name)
				}
				continue
			}
			if got := run(t, prog, call{arch: arch.Audit, nr: n}); got != RetErrno|errnoEPERM {
				t.Errorf("%s %s = %#x, want EPERM", arch.Name, name, got)
			}
		}
	}
}

func TestAssembleRaw(t *testing.T) {
	raw, err := Assemble(amd64, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 10 {
		t.Fatalf("filter has %d instructions", len(raw))
	}
	if _, err := ForArch("mips"); err == nil {
		t.Error("ForArch(mips) succeeded")
	}
}

// FuzzFilter checks the assembled filter against the reference on arbitrary
// syscalls, on both architectures and all options.
func FuzzFilter(f *testing.F) {
	f.Add(uint8(0), uint32(0xc000003e), uint32(41), uint64(2), uint64(1), uint64(0), uint64(0))
	f.Add(uint8(1), uint32(0xc000003e), uint32(16), uint64(0), uint64(0x5412), uint64(0), uint64(0))
	f.Add(uint8(2), uint32(0xc00000b7), uint32(220), uint64(0x10000000), uint64(0), uint64(0), uint64(0))
	f.Add(uint8(3), uint32(0xc000003e), uint32(0x40000001), uint64(0), uint64(0), uint64(0), uint64(0))
	f.Add(uint8(9), uint32(0xc000003e), uint32(41), uint64(2), uint64(2), uint64(0), uint64(0))
	f.Add(uint8(16), uint32(0xc000003e), uint32(101), uint64(17), uint64(2), uint64(0), uint64(0))
	f.Add(uint8(0), uint32(0xc000003e), uint32(90), uint64(0), uint64(0o4755), uint64(0), uint64(0))
	f.Add(uint8(0), uint32(0xc000003e), uint32(257), uint64(0), uint64(0), uint64(oCreat), uint64(0xffffffff_00000000|0o2755))
	f.Add(uint8(4), uint32(0xc00000b7), uint32(53), uint64(0), uint64(0), uint64(0o6755), uint64(0))
	f.Add(uint8(4), uint32(0xc00000b7), uint32(56), uint64(0), uint64(0), uint64(oTmpfile|0o40000), uint64(0o4755))
	progs := map[uint8][]bpf.Instruction{}
	options := func(sel uint8) Options {
		return Options{AllowNetwork: sel&1 != 0, AllowUnixSockets: sel&2 != 0, TCPOnly: sel&8 != 0, TraceMe: sel&16 != 0}
	}
	for i := range uint8(32) {
		arch := amd64
		if i&4 != 0 {
			arch = arm64
		}
		prog, err := Build(arch, options(i))
		if err != nil {
			f.Fatal(err)
		}
		progs[i] = prog
	}
	f.Fuzz(func(t *testing.T, sel uint8, auditArch, nr uint32, a0, a1, a2, a3 uint64) {
		sel &= 31
		arch := amd64
		if sel&4 != 0 {
			arch = arm64
		}
		// Bias towards the native architecture and known syscalls so that
		// the interesting branches are reached.
		if auditArch&1 == 0 {
			auditArch = arch.Audit
		}
		if nr&0x80000000 != 0 {
			nr &= 0x1ff
		}
		p := options(sel)
		c := call{arch: auditArch, nr: nr, args: [6]uint64{a0, a1, a2, a3}}
		if got, want := run(t, progs[sel], c), expect(arch, p, c); got != want {
			t.Fatalf("%s %+v nr=%d args=%#x,%#x,%#x,%#x: filter %#x, reference %#x", arch.Name, p, nr, a0, a1, a2, a3, got, want)
		}
	})
}

// allOptions returns every combination of the switches of Options.
func allOptions() []Options {
	var out []Options
	for sel := range 16 {
		out = append(out, Options{AllowNetwork: sel&1 != 0, AllowUnixSockets: sel&2 != 0, TCPOnly: sel&4 != 0, TraceMe: sel&8 != 0})
	}
	return out
}

// TestFilterMatchesReferenceOnEverySyscall runs every syscall number of both
// tables' range (and the numbers just past it, and the x32 range) through
// the filter of every Options with argument patterns that reach each rule's
// branches, and compares with the reference.
func TestFilterMatchesReferenceOnEverySyscall(t *testing.T) {
	argSets := [][6]uint64{
		{},
		{afUnix, sockStream},
		{afUnix, 2},
		{afInet, sockStream, ipprotoTCP},
		{afInet6, 2},
		{0x1_00000002, 0xffffffff_00000001},
		{0, tiocsti},
		{0, 0xdead0000_0000541c},
		{0x10000000 | 17},
		{0xffffffff_00000011},
		{ptraceDetach, 42},
		{42, 7, 0x7fff0000},
		{0, 42, 19},
		{prioUser, 0, 0},
		{3, 0, msgFastOpen, msgFastOpen},
		// The set-ID rules: the mode in each argument a rule reads, with
		// and without the create flags, with bits above 32 and above 16.
		{0, 0o4755, 0o2755, 0o6755},
		{0, oCreat | 1, 0o4755},
		{0, 0, oCreat, 0o2755},
		{0, 0, oTmpfile | 0o200000, 0xffffffff_00000000 | 0o4000},
		{0, oCreat << 32, 0o4755, 0o4755},
		{0, 0x6000_00000000 | 0o755, 0xffff0000 | 0o755, 0o1777},
		{0, 0, 0, 0o6777},
	}
	for _, arch := range []*Arch{amd64, arm64} {
		for _, p := range allOptions() {
			prog, err := Build(arch, p)
			if err != nil {
				t.Fatal(err)
			}
			vm, err := bpf.NewVM(prog)
			if err != nil {
				t.Fatal(err)
			}
			nrs := []uint32{x32SyscallBit, x32SyscallBit | 1, x32SyscallBit | 41, 0xffffffff}
			for nr := range uint32(1024) {
				nrs = append(nrs, nr)
			}
			for _, nr := range nrs {
				for _, args := range argSets {
					c := call{arch: arch.Audit, nr: nr, args: args}
					got, err := vm.Run(c.data())
					if err != nil {
						t.Fatal(err)
					}
					if want := expect(arch, p, c); uint32(got) != want {
						t.Fatalf("%s %+v nr %d args %#x: filter %#x, reference %#x", arch.Name, p, nr, args, got, want)
					}
				}
			}
		}
	}
}

// steps returns how many instructions prog executes on c. It knows the
// instructions Build emits; x/net/bpf's VM does not count.
func steps(t *testing.T, prog []bpf.Instruction, c call) int {
	t.Helper()
	data := c.data()
	var acc uint32
	for pc, n := 0, 1; pc < len(prog); pc, n = pc+1, n+1 {
		switch ins := prog[pc].(type) {
		case bpf.LoadAbsolute:
			acc = binary.BigEndian.Uint32(data[ins.Off:])
		case bpf.ALUOpConstant:
			acc &= ins.Val
		case bpf.Jump:
			pc += int(ins.Skip)
		case bpf.JumpIf:
			var ok bool
			switch ins.Cond {
			case bpf.JumpEqual:
				ok = acc == ins.Val
			case bpf.JumpGreaterOrEqual:
				ok = acc >= ins.Val
			case bpf.JumpBitsSet:
				ok = acc&ins.Val != 0
			default:
				t.Fatalf("steps: unexpected condition %v", ins.Cond)
			}
			if ok {
				pc += int(ins.SkipTrue)
			} else {
				pc += int(ins.SkipFalse)
			}
		case bpf.RetConstant:
			return n
		default:
			t.Fatalf("steps: unexpected instruction %T", ins)
		}
	}
	t.Fatal("steps: fell off the program")
	return 0
}

// TestAllowedSyscallsTakeFewSteps bounds the instructions an allowed
// syscall runs through. The kernel emulates the filter for every syscall
// number when it is installed, with a spin lock held and interrupts off, to
// learn which ones it always allows; with a linear chain of comparisons that
// cost about 100 µs per command (a chain compares every allowed syscall
// against each of the ~60 rules), with the search tree a fraction of it.
func TestAllowedSyscallsTakeFewSteps(t *testing.T) {
	for _, arch := range []*Arch{amd64, arm64} {
		for _, p := range allOptions() {
			prog, err := Build(arch, p)
			if err != nil {
				t.Fatal(err)
			}
			worst, total, count := 0, 0, 0
			for nr := range uint32(512) {
				if slices.Contains(slices.Collect(maps.Values(arch.nr)), nr) {
					continue // a syscall with a rule
				}
				count++
				n := steps(t, prog, call{arch: arch.Audit, nr: nr})
				worst = max(worst, n)
				total += n
			}
			if worst > 16 || count < 400 {
				t.Errorf("%s %+v: an allowed syscall runs %d instructions (a linear chain?)", arch.Name, p, worst)
			}
			t.Logf("%s %+v: %d instructions; an allowed syscall runs at most %d, %.1f on average", arch.Name, p, len(prog), worst, float64(total)/float64(count))
		}
	}
}
