package capture

import (
	"bytes"
	"io"
	"testing"

	"github.com/paigasus/helikon/backend"
)

func TestCapLetsARequestLowerButNotRaise(t *testing.T) {
	tests := []struct {
		name           string
		max, requested int64
		want           int64
	}{
		{"request unset", 100, 0, 100},
		{"request lowers", 100, 10, 10},
		{"request cannot raise", 100, 1000, 100},
		{"negative request ignored", 100, -5, 100},
		{"backend unset", 0, 0, backend.DefaultOutputCap},
		{"backend unset, request lowers", -1, 10, 10},
		{"backend unset, request cannot raise", 0, backend.DefaultOutputCap + 1, backend.DefaultOutputCap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cap(tt.max, tt.requested); got != tt.want {
				t.Errorf("Cap(%d, %d) = %d, want %d", tt.max, tt.requested, got, tt.want)
			}
		})
	}
}

func TestOutputCapturesOnlyTheStreamsTheRequestLeaves(t *testing.T) {
	var own bytes.Buffer
	tests := []struct {
		name                   string
		req                    backend.Request
		wantStdout, wantStderr string
		wantTruncated          bool
	}{
		{"both captured", backend.Request{}, "out", "err", false},
		{"request's stdout", backend.Request{Stdout: &own}, "", "err", false},
		{"request's stderr", backend.Request{Stderr: &own}, "out", "", false},
		{"request's cap", backend.Request{OutputCap: 2}, "ou", "er", true},
		{"stderr alone truncated", backend.Request{Stdout: &own, OutputCap: 2}, "", "er", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			own.Reset()
			o := New(&tt.req, 3)
			io.WriteString(o.Stdout, "out")
			io.WriteString(o.Stderr, "err")
			var res backend.Result
			o.Fill(&res)
			if string(res.Stdout) != tt.wantStdout || string(res.Stderr) != tt.wantStderr || res.Truncated != tt.wantTruncated {
				t.Errorf("stdout %q stderr %q truncated %v; want %q %q %v", res.Stdout, res.Stderr, res.Truncated, tt.wantStdout, tt.wantStderr, tt.wantTruncated)
			}
			if tt.req.Stdout != nil && own.String() != "out" || tt.req.Stderr != nil && own.String() != "err" {
				t.Errorf("the request's writer got %q", own.String())
			}
		})
	}
}

func TestFillCopiesTheBytes(t *testing.T) {
	o := New(&backend.Request{}, 10)
	io.WriteString(o.Stdout, "abc")
	var res backend.Result
	o.Fill(&res)
	res.Stdout[0] = 'X'
	var again backend.Result
	o.Fill(&again)
	if string(again.Stdout) != "abc" {
		t.Errorf("a change to the result reached the buffer: %q", again.Stdout)
	}
}
