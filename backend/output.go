package backend

import (
	"sync"
	"unicode/utf8"
)

// CappedBuffer is an [io.Writer] that keeps the first Cap bytes written to it
// and counts, but discards, the rest. Its memory use is bounded by the cap
// whatever is written, so a command that floods its output costs at most the
// cap per stream. Bytes never cuts a UTF-8 character in half at the cap.
//
// Write never fails and always reports the whole of p as written, so a
// command writing into a full buffer keeps running as it would with its output
// redirected to a file; the backend, not the buffer, decides when to stop it.
// A CappedBuffer is safe for concurrent use.
//
// [io.Writer]: https://pkg.go.dev/io#Writer
type CappedBuffer struct {
	mu        sync.Mutex
	cap       int
	buf       []byte
	total     int64
	truncated bool
	next      byte // the first byte that did not fit, when truncated
}

// NewCappedBuffer returns a buffer that keeps at most limit bytes. A limit
// below zero is treated as zero.
func NewCappedBuffer(limit int64) *CappedBuffer {
	if limit < 0 {
		limit = 0
	}
	// Allocate lazily: most commands write far less than the cap.
	return &CappedBuffer{cap: int(min(limit, int64(maxCap)))}
}

// maxCap bounds the cap so that it fits an int on every platform.
const maxCap = 1<<31 - 1

// Write appends what fits under the cap and discards the rest.
func (b *CappedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += int64(len(p))
	room := b.cap - len(b.buf)
	if room >= len(p) {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	if !b.truncated {
		b.buf = append(b.buf, p[:room]...)
		b.truncated = true
		b.next = p[room]
	}
	return len(p), nil
}

// Bytes returns the kept bytes. When the output was truncated in the middle
// of a UTF-8 encoded character, the partial character is dropped (so the
// result may be up to three bytes shorter than the cap). Output that is not
// UTF-8 at all is returned as it is. The returned slice aliases the buffer
// and must not be modified.
func (b *CappedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.truncated || utf8.RuneStart(b.next) {
		return b.buf
	}
	return b.buf[:utf8Boundary(b.buf)]
}

// utf8Boundary returns the length of buf without a trailing character whose
// encoding continues past the end of buf. It looks back at most
// utf8.UTFMax-1 bytes: a rune start further back cannot belong to a
// character that is still incomplete.
func utf8Boundary(buf []byte) int {
	for i := len(buf) - 1; i >= 0 && i >= len(buf)-(utf8.UTFMax-1); i-- {
		c := buf[i]
		if !utf8.RuneStart(c) {
			continue
		}
		if c < utf8.RuneSelf {
			return len(buf) // an ASCII byte followed by stray continuation bytes: not ours to fix
		}
		if !utf8.FullRune(buf[i:]) {
			return i
		}
		return len(buf)
	}
	return len(buf)
}

// Truncated reports whether more than the cap was written.
func (b *CappedBuffer) Truncated() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.truncated
}

// Total returns the number of bytes written, kept or not.
func (b *CappedBuffer) Total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}
