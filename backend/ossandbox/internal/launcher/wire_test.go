//go:build linux

package launcher

import (
	"fmt"
	"reflect"
	"testing"
)

func sampleRequest() *Request {
	return &Request{
		Path: "/usr/bin/env", Argv: []string{"env", "-i", ""}, Env: []string{"HOME=/tmp/x", "A="},
		TmpSize: 1 << 30, TraceMe: true,
		Limits: []Rlimit{{Resource: 4, Name: "core"}, {Resource: 0, Name: "cpu", Value: 25}, {Resource: 6, Name: "processes", Value: 1 << 40}},
	}
}

// TestRequestRoundTrip: the launcher decodes exactly the request the
// backend encoded.
func TestRequestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    *Request
	}{
		{"full", sampleRequest()},
		{"no limits, no environment", &Request{Path: "/bin/true", Argv: []string{"true"}}},
		{"negative size", &Request{Path: "/bin/true", Argv: []string{"true"}, TmpSize: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeRequest(tc.r.Encode())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.r) {
				t.Fatalf("DecodeRequest(Encode(r)) = %+v; want %+v", got, tc.r)
			}
		})
	}
}

// TestDecodeRequestRejectsMalformed: a request cut short, with more than
// the encoding, without a program, or with limits it would not set, is
// refused: the launcher never starts a command from a half-read request
// or without the limits it was sent.
func TestDecodeRequestRejectsMalformed(t *testing.T) {
	good := sampleRequest().Encode()
	noTrace := sampleRequest()
	noTrace.TraceMe = false
	cases := map[string][]byte{
		"empty":                   nil,
		"unknown flag":            append([]byte{0x80}, good[1:]...),
		"trailing byte":           append(append([]byte(nil), good...), 0),
		"no program":              (&Request{Argv: []string{"x"}}).Encode(),
		"no arguments":            (&Request{Path: "/bin/true"}).Encode(),
		"limits without tracing":  noTrace.Encode(),
		"resource out of range":   (&Request{Path: "/p", Argv: []string{"p"}, TraceMe: true, Limits: []Rlimit{{Resource: 65}}}).Encode(),
		"huge count":              {0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f},
		"long varint in a length": {0, 0x80, 0},
	}
	for i := 1; i < len(good); i += 5 {
		cases[fmt.Sprintf("cut at %d", i)] = good[:i]
	}
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			if r, err := DecodeRequest(b); err == nil {
				t.Fatalf("DecodeRequest(%x) = %+v; want an error", b, r)
			}
		})
	}
}

// TestMessages: a message's type, id and payload, and an exit report,
// read back as written; a message without an id is refused.
func TestMessages(t *testing.T) {
	typ, id, payload, err := ParseMessage(Message(MsgRun, 1<<40, []byte("abc")))
	if err != nil || typ != MsgRun || id != 1<<40 || string(payload) != "abc" {
		t.Fatalf("ParseMessage = %q %d %q %v", typ, id, payload, err)
	}
	for _, b := range [][]byte{nil, {MsgRun}, {MsgRun, 0x80}} {
		if _, _, _, err := ParseMessage(b); err == nil {
			t.Errorf("ParseMessage(%x): want an error", b)
		}
	}
	code, sig, err := ParseExit(ExitPayload(-1, 9))
	if err != nil || code != -1 || sig != 9 {
		t.Fatalf("ParseExit = %d %d %v", code, sig, err)
	}
	if _, _, err := ParseExit(append(ExitPayload(0, 0), 1)); err == nil {
		t.Error("ParseExit with a trailing byte: want an error")
	}
}

// FuzzDecodeRequest: DecodeRequest never panics, and what it accepts
// encodes back to the same bytes.
func FuzzDecodeRequest(f *testing.F) {
	f.Add(sampleRequest().Encode())
	f.Add((&Request{Path: "/bin/true", Argv: []string{"true"}}).Encode())
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRequest(b)
		if err != nil {
			return
		}
		if got := r.Encode(); string(got) != string(b) {
			t.Fatalf("Encode(DecodeRequest(%x)) = %x", b, got)
		}
	})
}
