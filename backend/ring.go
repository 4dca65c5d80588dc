package backend

import (
	"context"
	"sync"
)

// Ring keeps the most recent bytes written to it, up to its size, and
// numbers every byte ever written: a reader holds a cursor (the number of the
// next byte it wants), gets what was written since, and learns how many bytes
// it missed because they were overwritten before it read them. Memory is
// bounded by the size whatever is written, so a process flooding its output
// costs its ring and no more, and the writer never waits for a reader.
//
// A Ring is safe for concurrent use. The zero value is not usable: use
// [NewRing].
type Ring struct {
	mu      sync.Mutex
	buf     []byte // circular, allocated as it fills
	size    int
	total   int64         // bytes ever written
	closed  bool          // no more writes
	changed chan struct{} // closed and replaced at every write and at Close
}

// NewRing returns a ring that keeps the last size bytes; size ≤ 0 means
// [DefaultRingSize].
func NewRing(size int64) *Ring {
	if size <= 0 {
		size = DefaultRingSize
	}
	return &Ring{size: int(min(size, int64(maxCap))), changed: make(chan struct{})}
}

// Write appends p, overwriting the oldest bytes beyond the size. It never
// fails, and after Close it discards p and still reports it written (a
// process's last words after its end are not an error of the process).
func (r *Ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || len(p) == 0 {
		return len(p), nil
	}
	n := len(p)
	r.total += int64(n)
	if n >= r.size {
		p = p[n-r.size:]
	}
	if r.total <= int64(r.size) {
		// Still filling: grow, as most processes write far less than
		// the size. Byte number i is at index i.
		r.buf = append(r.buf, p...)
		p = nil
	} else if len(r.buf) < r.size {
		r.buf = append(r.buf, make([]byte, r.size-len(r.buf))...)
	}
	// Full: byte number i is at index i mod size.
	for len(p) > 0 {
		at := int((r.total - int64(len(p))) % int64(r.size))
		k := copy(r.buf[at:], p)
		p = p[k:]
	}
	close(r.changed)
	r.changed = make(chan struct{})
	return n, nil
}

// Close marks the end of the output: readers waiting for more return.
func (r *Ring) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		close(r.changed)
	}
}

// Chunk is what [Ring.Read] returns.
type Chunk struct {
	// Data is the output from the cursor (or from the oldest byte kept,
	// when the cursor's bytes were overwritten), at most the asked
	// maximum.
	Data []byte `json:"data"`
	// Next is the cursor to read on from.
	Next int64 `json:"next"`
	// Missed is the number of bytes after the cursor that were
	// overwritten before they were read.
	Missed int64 `json:"missed"`
	// Total is the number of bytes written so far.
	Total int64 `json:"total"`
	// Closed is true when no more output will come; with Next == Total
	// the reader has everything.
	Closed bool `json:"closed"`
}

// Read returns up to max bytes from cursor on (max ≤ 0: all that is kept).
// A cursor below zero is read as zero, one past the end as the end.
func (r *Ring) Read(cursor int64, max int) Chunk {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.read(cursor, max)
}

func (r *Ring) read(cursor int64, max int) Chunk {
	c := Chunk{Total: r.total, Closed: r.closed}
	cursor = min(max64(cursor, 0), r.total)
	oldest := r.total - int64(len(r.buf))
	if cursor < oldest {
		c.Missed = oldest - cursor
		cursor = oldest
	}
	n := int(r.total - cursor)
	if max > 0 && n > max {
		n = max
	}
	c.Data = make([]byte, n)
	if len(r.buf) < r.size {
		copy(c.Data, r.buf[cursor:])
	} else {
		at := int(cursor % int64(r.size))
		k := copy(c.Data, r.buf[at:])
		copy(c.Data[k:], r.buf)
	}
	c.Next = cursor + int64(n)
	return c
}

// Wait blocks until there are bytes after cursor, the ring is closed or ctx
// ends, and then reads as [Ring.Read] does. The error is ctx's, with the
// chunk read at that moment.
func (r *Ring) Wait(ctx context.Context, cursor int64, max int) (Chunk, error) {
	for {
		r.mu.Lock()
		if r.total > max64(cursor, 0) || r.closed {
			c := r.read(cursor, max)
			r.mu.Unlock()
			return c, nil
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return r.Read(cursor, max), ctx.Err()
		}
	}
}

// Total returns the number of bytes written so far.
func (r *Ring) Total() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

func max64(a, b int64) int64 { return max(a, b) }
