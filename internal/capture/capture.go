// Package capture holds what the backends and workspaces do alike with a
// command's output: the cap a request runs with ([Cap]), and capped buffers
// that stand in for the writers a request does not give and whose bytes go
// into its [backend.Result] ([Output]).
package capture

import (
	"bytes"
	"io"

	"github.com/paigasus/helikon/backend"
)

// Cap returns the cap per captured stream of a request that asks for
// requested bytes (its OutputCap) from a backend whose cap is max: a request
// may lower the cap, never raise it. A max of zero or less means
// [backend.DefaultOutputCap].
func Cap(max, requested int64) int64 {
	if max <= 0 {
		max = backend.DefaultOutputCap
	}
	if requested > 0 && requested < max {
		return requested
	}
	return max
}

// Output is where a command's standard output and error go: the request's
// own writers where it gives them, capped buffers otherwise.
type Output struct {
	// Stdout and Stderr are the writers to connect to the command.
	Stdout, Stderr io.Writer
	// outBuf and errBuf are the buffers behind Stdout and Stderr; nil for a
	// stream the request has its own writer for.
	outBuf, errBuf *backend.CappedBuffer
}

// New returns the output of req on a backend whose cap is max (see [Cap]).
func New(req *backend.Request, max int64) *Output {
	o := &Output{Stdout: req.Stdout, Stderr: req.Stderr}
	limit := Cap(max, req.OutputCap)
	if o.Stdout == nil {
		o.outBuf = backend.NewCappedBuffer(limit)
		o.Stdout = o.outBuf
	}
	if o.Stderr == nil {
		o.errBuf = backend.NewCappedBuffer(limit)
		o.Stderr = o.errBuf
	}
	return o
}

// Fill puts what the buffers captured into res: a copy of their bytes (a
// writer the command leaves behind may still write to them) and Truncated
// when either overflowed. The streams the request had its own writers for
// stay empty.
func (o *Output) Fill(res *backend.Result) {
	if o.outBuf != nil {
		res.Stdout = bytes.Clone(o.outBuf.Bytes())
		res.Truncated = o.outBuf.Truncated()
	}
	if o.errBuf != nil {
		res.Stderr = bytes.Clone(o.errBuf.Bytes())
		res.Truncated = res.Truncated || o.errBuf.Truncated()
	}
}
