package launcher

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/net/bpf"

	"github.com/paigasus/helikon/internal/landlock"
)

// Config is what the launcher needs to confine one command. It is passed
// on [ConfigFD] in the encoding of [Config.Encode]: a launcher starts per
// command, and decoding JSON (reflection over the rules and the filter)
// cost more than everything else the launcher reads.
type Config struct {
	// Probe: confine a thread, start nothing, exit 0. With Serve: confine
	// a throwaway thread as a command's would be before reporting ready
	// (without it, the first command's confinement is the check: if it
	// fails, that command is refused as unavailable and nothing ran).
	Probe bool
	// Serve: the long-lived launcher (see serve), which confines and
	// starts each command the backend sends over [SocketFD].
	Serve   bool
	Root    string
	Tmp     string
	TmpFS   bool  // Tmp is the mount point of a fresh tmpfs
	TmpSize int64 // its size in bytes, 0 for the kernel's default
	RootRW  bool  // the root's host mount is writable
	TmpRW   bool  // the temporary directory's host mount is writable
	// PidNS: the launcher is the first process of a pid namespace of its
	// own, with [ParentFD] a pidfd of the caller.
	PidNS   bool
	LastCap int
	ABI     int
	// Rules is the Landlock ruleset (Opened is not passed: the launcher
	// opens its paths itself).
	Rules  landlock.Config
	Filter []bpf.RawInstruction
	// ReadOnly are directories beneath Root, relative to it, that each
	// command finds mounted read-only in its mount namespace
	// ([ProtectPaths]).
	ReadOnly []string
	// Net is the long-lived launcher's network: [NetNone], or one network
	// namespace for all its commands ([NetLoopback]), with the egress
	// proxy's listening socket in it ([NetProxy]), which the launcher
	// sends the backend with its ready message.
	Net byte
	// Writable are absolute directories outside Root (the session home,
	// the named caches) that each command finds mounted writable over
	// themselves in its mount namespace ([WritablePaths]).
	Writable []string
	// Overlays are named caches reading a directory of the user's
	// beneath a writable layer ([MountOverlays]), mounted after Writable.
	Overlays []Overlay
}

// configVersion starts an encoded Config; a launcher of another build
// (which cannot happen through /proc/self/exe) would refuse it.
const configVersion = 3

const (
	flagProbe = 1 << iota
	flagTmpFS
	flagRootRW
	flagTmpRW
	flagPidNS
	flagAllowNetwork
	flagServe
	flagsKnown = 1<<iota - 1
)

// Encode returns c in the launcher's configuration encoding: a version
// byte, a flags byte, then the strings (length-prefixed), the integers
// (varints), the rules, the ports, the filter (8 bytes per instruction,
// as struct sock_filter, little-endian), the read-only paths, the writable
// paths, the overlays and the network mode (a byte).
func (c *Config) Encode() []byte {
	var flags byte
	for _, f := range [...]struct {
		bit byte
		set bool
	}{{flagProbe, c.Probe}, {flagTmpFS, c.TmpFS}, {flagRootRW, c.RootRW}, {flagTmpRW, c.TmpRW}, {flagPidNS, c.PidNS}, {flagAllowNetwork, c.Rules.AllowNetwork}, {flagServe, c.Serve}} {
		if f.set {
			flags |= f.bit
		}
	}
	b := []byte{configVersion, flags}
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	str(c.Root)
	str(c.Tmp)
	b = binary.AppendVarint(b, c.TmpSize)
	b = binary.AppendVarint(b, int64(c.LastCap))
	b = binary.AppendVarint(b, int64(c.ABI))
	b = binary.AppendUvarint(b, uint64(len(c.Rules.Rules)))
	for _, r := range c.Rules.Rules {
		str(r.Path)
		b = binary.AppendUvarint(b, r.Access)
		if r.Optional {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(c.Rules.ConnectTCP)))
	for _, p := range c.Rules.ConnectTCP {
		b = binary.AppendUvarint(b, uint64(p))
	}
	b = binary.AppendUvarint(b, uint64(len(c.Filter)))
	for _, in := range c.Filter {
		b = binary.LittleEndian.AppendUint16(b, in.Op)
		b = append(b, in.Jt, in.Jf)
		b = binary.LittleEndian.AppendUint32(b, in.K)
	}
	b = binary.AppendUvarint(b, uint64(len(c.ReadOnly)))
	for _, p := range c.ReadOnly {
		str(p)
	}
	b = binary.AppendUvarint(b, uint64(len(c.Writable)))
	for _, p := range c.Writable {
		str(p)
	}
	b = binary.AppendUvarint(b, uint64(len(c.Overlays)))
	for _, o := range c.Overlays {
		str(o.Lower)
		str(o.Upper)
		str(o.Work)
		str(o.Target)
	}
	return append(b, c.Net)
}

// errTruncated is returned for an encoding that ends early.
var errTruncated = errors.New("launcher configuration: truncated")

// Decode decodes [Config.Encode]'s encoding. Anything malformed (another
// version, unknown flags, truncation, trailing bytes, an out-of-range
// value) is an error.
func Decode(b []byte) (*Config, error) {
	d := decoder{b: b}
	if v := d.byte(); v != configVersion && d.err == nil {
		return nil, fmt.Errorf("launcher configuration: version %d, want %d", v, configVersion)
	}
	flags := d.byte()
	if flags&^flagsKnown != 0 && d.err == nil {
		return nil, fmt.Errorf("launcher configuration: unknown flags %#x", flags)
	}
	c := &Config{
		Probe: flags&flagProbe != 0, TmpFS: flags&flagTmpFS != 0, RootRW: flags&flagRootRW != 0,
		TmpRW: flags&flagTmpRW != 0, PidNS: flags&flagPidNS != 0, Serve: flags&flagServe != 0,
	}
	c.Rules.AllowNetwork = flags&flagAllowNetwork != 0
	c.Root = d.str()
	c.Tmp = d.str()
	c.TmpSize = d.varint()
	c.LastCap = d.int()
	c.ABI = d.int()
	// Each count is checked against the bytes left before anything is
	// allocated for it: every element takes at least one byte (a filter
	// instruction eight).
	n := d.count(1)
	for range n {
		r := landlock.Rule{Path: d.str(), Access: d.uvarint()}
		switch d.byte() {
		case 0:
		case 1:
			r.Optional = true
		default:
			d.fail(errors.New("launcher configuration: bad rule"))
		}
		c.Rules.Rules = append(c.Rules.Rules, r)
	}
	n = d.count(1)
	for range n {
		p := d.uvarint()
		if p > 0xffff {
			d.fail(fmt.Errorf("launcher configuration: port %d", p))
		}
		c.Rules.ConnectTCP = append(c.Rules.ConnectTCP, uint16(p))
	}
	n = d.count(8)
	if n > 0 {
		c.Filter = make([]bpf.RawInstruction, n)
	}
	for i := range c.Filter {
		in := d.take(8)
		if in == nil {
			break
		}
		c.Filter[i] = bpf.RawInstruction{Op: binary.LittleEndian.Uint16(in), Jt: in[2], Jf: in[3], K: binary.LittleEndian.Uint32(in[4:])}
	}
	n = d.count(1)
	for range n {
		c.ReadOnly = append(c.ReadOnly, d.str())
	}
	n = d.count(1)
	for range n {
		c.Writable = append(c.Writable, d.str())
	}
	n = d.count(4)
	for range n {
		c.Overlays = append(c.Overlays, Overlay{Lower: d.str(), Upper: d.str(), Work: d.str(), Target: d.str()})
	}
	if c.Net = d.byte(); c.Net > NetProxy {
		d.fail(fmt.Errorf("launcher configuration: network mode %d", c.Net))
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail(fmt.Errorf("launcher configuration: %d trailing bytes", len(d.b)))
	}
	if d.err != nil {
		return nil, d.err
	}
	return c, nil
}

// decoder reads an encoded Config; after the first error every read
// returns zero values and err keeps that error.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) take(n int) []byte {
	if d.err != nil || n < 0 || n > len(d.b) {
		d.fail(errTruncated)
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 || n > 1 && d.b[n-1] == 0 { // a longer form than Encode writes
		d.fail(errTruncated)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 || n > 1 && d.b[n-1] == 0 {
		d.fail(errTruncated)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// int reads a varint that must fit an int32 (a capability number, an ABI).
func (d *decoder) int() int {
	v := d.varint()
	if v < -1<<31 || v >= 1<<31 {
		d.fail(fmt.Errorf("launcher configuration: value %d out of range", v))
		return 0
	}
	return int(v)
}

// count reads a count of elements of at least size bytes each.
func (d *decoder) count(size int) int {
	v := d.uvarint()
	if v > uint64(len(d.b)/size) {
		d.fail(errTruncated)
		return 0
	}
	return int(v)
}

func (d *decoder) str() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail(errTruncated)
		return ""
	}
	return string(d.take(int(n)))
}

// Overlay is a named cache that reads a directory of the user's beneath a
// writable layer (MountOverlays, on Linux).
type Overlay struct {
	Lower  string // the user's directory, never written
	Upper  string // the writable layer, kept
	Work   string // overlayfs's work directory, beside Upper (same parent)
	Target string // where commands find the union
}

// Net modes of [Config].Net.
const (
	// NetNone: commands stay in the launcher's network namespace (the
	// filter then denies every socket but AF_UNIX, or allows all).
	NetNone = iota
	// NetLoopback: a network namespace per session with loopback only.
	NetLoopback
	// NetProxy: NetLoopback, plus the egress proxy's listening socket on
	// 127.0.0.1:[ProxyPort] in it, passed back to the backend.
	NetProxy
)
