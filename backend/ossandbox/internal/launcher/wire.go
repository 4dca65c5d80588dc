//go:build linux

package launcher

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The long-lived launcher (see serve) and the backend talk over a
// SOCK_SEQPACKET socket pair, one message per datagram: a type byte, the
// command's id (a uvarint) and the type's payload. The backend sends
// MsgRun (payload: a [Request] in the encoding of [Request.Encode], with
// the command's standard input, output and error attached as SCM_RIGHTS,
// and, with [Request].InFD, a fourth descriptor holding the request
// instead) and MsgKill (no payload; the command is killed whether it has
// started yet or not). The launcher sends MsgReady (id 0) once it can
// confine commands (with [Config].Net [NetProxy], carrying the egress
// proxy's listening socket as SCM_RIGHTS), then per command one of:
// MsgExit (payload: the exit code and the signal, varints) once the
// command and everything it started are gone; MsgUnavailable (nothing was started: confining it
// failed); MsgStartFailed (the program could not be executed), with a
// reason.
const (
	MsgRun  = 'r'
	MsgKill = 'k'
	// MsgDial (payload: a TCP port, a uvarint) asks for a connection to
	// 127.0.0.1:port of the session's network namespace ([Config].Net);
	// the launcher answers MsgDialed with the connected socket attached,
	// or MsgUnavailable with why.
	MsgDial        = 'd'
	MsgDialed      = 'D'
	MsgReady       = 'R'
	MsgExit        = 'x'
	MsgUnavailable = 'u'
	MsgStartFailed = 'e'
)

// MaxInline is the largest request sent inside its message; a larger one
// travels in a memfd attached to it (a datagram cannot exceed the
// socket's buffer).
const MaxInline = 32 << 10

// MaxRequest bounds a request the launcher reads.
const MaxRequest = 16 << 20

// Request is one command for the long-lived launcher.
type Request struct {
	// Path is the program executed; Argv[0] is the name it is invoked by.
	Path string
	Argv []string
	Env  []string
	// TmpSize is the size of the command's tmpfs in bytes (0: the
	// kernel's default).
	TmpSize int64
	// TraceMe: the command is started traced and Limits are set at its
	// exec (LimitAtExec); otherwise Limits must be empty (the command
	// sets its own with a ulimit prologue).
	TraceMe bool
	Limits  []Rlimit
	// InFD: this request is in a descriptor attached to its message
	// (only in the message's header; never encoded).
	InFD bool
}

const (
	reqTraceMe = 1 << iota
	reqKnown   = 1<<iota - 1
)

// Encode returns r in the request encoding: a flags byte, the path, the
// arguments and the environment (counts and length-prefixed strings), the
// tmpfs size, and the limits (resource, value).
func (r *Request) Encode() []byte {
	var flags byte
	if r.TraceMe {
		flags |= reqTraceMe
	}
	b := []byte{flags}
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	strs := func(ss []string) {
		b = binary.AppendUvarint(b, uint64(len(ss)))
		for _, s := range ss {
			str(s)
		}
	}
	str(r.Path)
	strs(r.Argv)
	strs(r.Env)
	b = binary.AppendVarint(b, r.TmpSize)
	b = binary.AppendUvarint(b, uint64(len(r.Limits)))
	for _, l := range r.Limits {
		b = binary.AppendUvarint(b, uint64(l.Resource))
		str(l.Name)
		b = binary.AppendUvarint(b, l.Value)
	}
	return b
}

// DecodeRequest decodes [Request.Encode]'s encoding. Anything malformed,
// or a request without a program, is an error.
func DecodeRequest(b []byte) (*Request, error) {
	d := decoder{b: b}
	flags := d.byte()
	if flags&^reqKnown != 0 && d.err == nil {
		return nil, fmt.Errorf("launcher request: unknown flags %#x", flags)
	}
	r := &Request{TraceMe: flags&reqTraceMe != 0}
	r.Path = d.str()
	r.Argv = d.strs()
	r.Env = d.strs()
	r.TmpSize = d.varint()
	n := d.count(3)
	for range n {
		res := d.uvarint()
		l := Rlimit{Name: d.str(), Value: d.uvarint()}
		if res > 64 {
			d.fail(fmt.Errorf("launcher request: resource %d", res))
		}
		l.Resource = int(res)
		r.Limits = append(r.Limits, l)
	}
	if d.err == nil && len(d.b) > 0 {
		d.fail(fmt.Errorf("launcher request: %d trailing bytes", len(d.b)))
	}
	if d.err != nil {
		return nil, d.err
	}
	if r.Path == "" || len(r.Argv) == 0 {
		return nil, errors.New("launcher request: no program")
	}
	if !r.TraceMe && len(r.Limits) > 0 {
		return nil, errors.New("launcher request: limits without a traced start")
	}
	return r, nil
}

func (d *decoder) strs() []string {
	n := d.count(1)
	var ss []string
	for range n {
		ss = append(ss, d.str())
	}
	return ss
}

// Message returns a message of type t for command id with payload.
func Message(t byte, id uint64, payload []byte) []byte {
	b := binary.AppendUvarint([]byte{t}, id)
	return append(b, payload...)
}

// ParseMessage splits a message into its type, id and payload.
func ParseMessage(b []byte) (t byte, id uint64, payload []byte, err error) {
	if len(b) == 0 {
		return 0, 0, nil, errTruncated
	}
	id, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return 0, 0, nil, errTruncated
	}
	return b[0], id, b[1+n:], nil
}

// ExitPayload is MsgExit's payload: the exit code (-1 when killed by a
// signal) and the signal.
func ExitPayload(code, signal int) []byte {
	return binary.AppendVarint(binary.AppendVarint(nil, int64(code)), int64(signal))
}

// ParseExit reads MsgExit's payload.
func ParseExit(b []byte) (code, signal int, err error) {
	d := decoder{b: b}
	code, signal = d.int(), d.int()
	if d.err == nil && len(d.b) > 0 {
		d.fail(errors.New("launcher exit: trailing bytes"))
	}
	return code, signal, d.err
}
