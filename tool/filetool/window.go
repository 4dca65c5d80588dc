package filetool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// The line window is hand-written rather than built on bufio.Scanner: a
// Scanner must hold a whole line in memory (or fail on a long one), while
// Read has to skip a million lines at memory speed, cut a 1 GB line after
// its first bytes and count lines past the window without keeping them.

// windowLimits bounds one window. All fields are positive.
type windowLimits struct {
	maxBytes     int   // content bytes returned
	maxLineBytes int   // bytes kept of one line, before the cut marker
	countBytes   int64 // bytes scanned past the window to count total lines
}

// window is a range of lines read from a file.
type window struct {
	content   []byte
	start     int // first line returned (1-based)
	end       int // last line returned; start-1 when none
	total     int // lines in the file, or -1 when not counted
	truncated bool
	cutLines  int // lines cut at maxLineBytes
}

// sniffBytes is how much of a file's start is checked for NUL bytes, as git
// and grep do to tell binary files from text.
const sniffBytes = 8000

// chunkSize is the read size: large enough that skipping lines runs at
// memory speed, small enough to be negligible next to the window.
const chunkSize = 256 << 10

var bufPool = sync.Pool{New: func() any { b := make([]byte, chunkSize); return &b }}

var (
	errBinary  = errors.New("binary content")
	errNotUTF8 = errors.New("invalid UTF-8")
)

// pastEndError reports an offset beyond the last line.
type pastEndError struct{ offset, total int }

func (e *pastEndError) Error() string {
	return fmt.Sprintf("offset %d is past the end of the file, which has %d lines", e.offset, e.total)
}

// contentError reports where the content stopped being text.
type contentError struct {
	line int
	err  error
}

func (e *contentError) Error() string {
	if e.line == 0 {
		return fmt.Sprintf("in the first %d bytes: %v", sniffBytes, e.err)
	}
	return fmt.Sprintf("line %d: %v", e.line, e.err)
}
func (e *contentError) Unwrap() error { return e.err }

// readWindow reads lines offset..offset+limit-1 (limit <= 0: no line limit)
// from r, within lim. Memory use is bounded by lim and chunkSize, never by
// the size of r.
func readWindow(ctx context.Context, r io.Reader, offset, limit int, lim windowLimits) (*window, error) {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	s := windowScanner{
		r: r, buf: *bp, offset: offset, limit: limit, lim: lim,
		w:     &window{start: offset, total: -1},
		phase: phaseSkip, line: 1, lastNL: true, first: true,
	}
	cur := lineBuf{kept: make([]byte, 0, min(lim.maxLineBytes, 4096))}
	if offset <= 1 {
		s.phase = phaseWindow
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, rerr, err := s.read()
		if err != nil {
			return nil, err
		}
		var spent bool
		if spent, cur, err = s.scan(data, cur); err != nil {
			return nil, err
		}
		if spent {
			return s.result(), nil
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, rerr
		}
		if s.phase == phaseCount && s.counted >= lim.countBytes {
			// Spent exactly at a chunk boundary: is there more?
			if s.more() {
				return s.result(), nil
			}
			break
		}
	}
	return s.finish(cur)
}

// windowScanner is the state of one readWindow as it moves through the
// phases: skipping the lines before the window, collecting the window,
// counting the lines after it. The line being collected is a lineBuf of
// its own.
type windowScanner struct {
	r      io.Reader
	buf    []byte // chunkSize bytes, from bufPool
	offset int
	limit  int
	lim    windowLimits
	w      *window // the window being built

	phase   readPhase
	line    int   // the line the next byte belongs to
	nls     int   // newlines seen
	lastNL  bool  // the last byte seen was a newline (or none seen)
	first   bool  // nothing read yet
	counted int64 // bytes scanned in phaseCount
	lines   int   // lines returned
}

// lineBuf is the line being collected. The scanner's methods take it and
// return it by value rather than hold it in a field or behind a pointer:
// escape analysis does not tell a struct's fields apart, and the scanner's
// window and buffer escape, so either would move a short kept buffer (up
// to 32 bytes, which the compiler keeps on readWindow's stack) to the heap.
type lineBuf struct {
	kept []byte // at most lim.maxLineBytes
	full int    // full length so far
}

// read reads the next chunk. The first read fills the whole sniff window
// before any line is looked at, so that binary content is reported as such
// (err), whatever comes first. The reader's own error, io.EOF included, is
// rerr: the chunk's bytes are scanned before it is acted on.
func (s *windowScanner) read() (data []byte, rerr, err error) {
	var n int
	if s.first {
		s.first = false
		n, rerr = io.ReadFull(s.r, s.buf[:sniffBytes])
		if rerr == io.ErrUnexpectedEOF {
			rerr = io.EOF
		}
		if bytes.IndexByte(s.buf[:n], 0) >= 0 {
			return nil, nil, &contentError{err: errBinary}
		}
	} else {
		n, rerr = s.r.Read(s.buf)
	}
	data = s.buf[:n]
	if n > 0 {
		s.lastNL = data[n-1] == '\n'
	}
	return data, rerr, nil
}

// scan runs the phases over one chunk. spent reports that the count budget
// ran out inside it: the window is done and the total stays unknown.
func (s *windowScanner) scan(data []byte, cur lineBuf) (spent bool, _ lineBuf, err error) {
	for len(data) > 0 {
		switch s.phase {
		case phaseSkip:
			data, err = s.skip(data)
		case phaseWindow:
			data, cur, err = s.collect(data, cur)
		case phaseCount:
			if s.count(data) {
				return true, cur, nil
			}
			data = nil
		}
		if err != nil {
			return false, cur, err
		}
	}
	return false, cur, nil
}

// skip passes over the lines before the window in data, counting their
// newlines, and returns the rest of data; at the start of line offset it
// moves to phaseWindow.
func (s *windowScanner) skip(data []byte) ([]byte, error) {
	need := s.offset - s.line
	c := bytes.Count(data, nl)
	skip := len(data) // bytes before the window
	if c >= need {
		skip = 0
		for range need {
			skip += bytes.IndexByte(data[skip:], '\n') + 1
		}
	}
	// A NUL in the lines skipped makes the file binary: a sparse file with
	// a text head would otherwise be scanned to its end, terabytes of
	// zeros, for lines that are not text.
	if i := bytes.IndexByte(data[:skip], 0); i >= 0 {
		return nil, &contentError{line: s.line + bytes.Count(data[:i], nl), err: errBinary}
	}
	s.line += min(c, need)
	s.nls += min(c, need)
	if c >= need {
		s.phase = phaseWindow
	}
	return data[skip:], nil
}

// collect adds data up to its first newline to cur, keeping at most
// lim.maxLineBytes of the line, and returns the bytes after that newline
// and cur.
// At the newline the line is emitted; when the window is full (line or byte
// limit) it moves to phaseCount.
func (s *windowScanner) collect(data []byte, cur lineBuf) ([]byte, lineBuf, error) {
	i := bytes.IndexByte(data, '\n')
	seg := data
	if i >= 0 {
		seg = data[:i]
	}
	// Also in the part of a line that is cut: a line of gigabytes of zeros
	// is binary, not a line to scan to its end for its length.
	if bytes.IndexByte(seg, 0) >= 0 {
		return nil, cur, &contentError{line: s.line, err: errBinary}
	}
	if room := s.lim.maxLineBytes - len(cur.kept); room > 0 {
		cur.kept = append(cur.kept, seg[:min(room, len(seg))]...)
	}
	cur.full += len(seg)
	if i < 0 {
		return nil, cur, nil
	}
	s.nls++
	full, err := s.emit(cur, true)
	if err != nil {
		return nil, cur, err
	}
	s.line++
	cur = lineBuf{kept: cur.kept[:0]}
	if full || s.limit > 0 && s.lines == s.limit {
		s.phase = phaseCount
	}
	return data[i+1:], cur, nil
}

// emit checks that cur is text and appends it to the window. full reports
// that the byte cap has no room for it (there is always room for the first
// line): the line is dropped and the window is truncated.
func (s *windowScanner) emit(cur lineBuf, terminated bool) (full bool, err error) {
	if err := checkText(cur.kept, cur.full > len(cur.kept)); err != nil {
		return false, &contentError{line: s.line, err: err}
	}
	text, cut := renderLine(cur.kept, cur.full, terminated)
	if s.lines > 0 && len(s.w.content)+len(text) > s.lim.maxBytes {
		s.w.truncated = true
		return true, nil
	}
	s.w.content = append(s.w.content, text...)
	s.lines++
	if cut {
		s.w.cutLines++
	}
	return false, nil
}

// count counts the newlines of data past the window, within the count
// budget. spent reports that data goes on past the budget.
func (s *windowScanner) count(data []byte) (spent bool) {
	s.w.truncated = true
	k := min(int64(len(data)), s.lim.countBytes-s.counted)
	s.nls += bytes.Count(data[:k], nl)
	s.counted += k
	return int64(len(data)) > k
}

// more reports whether r has a byte left, for a count budget spent exactly
// at the end of a chunk. A read error counts as the end of the file.
func (s *windowScanner) more() bool {
	var one [1]byte
	k, _ := io.ReadFull(s.r, one[:])
	return k > 0
}

// finish ends the scan at the end of the file: a last line without a
// newline (cur) is still a line, and the total is known. An offset past the
// last line is an error.
func (s *windowScanner) finish(cur lineBuf) (*window, error) {
	if s.phase == phaseWindow && cur.full > 0 {
		if _, err := s.emit(cur, false); err != nil {
			return nil, err
		}
	}
	s.w.total = s.nls
	if !s.lastNL {
		s.w.total++
	}
	if s.offset > 1 && s.offset > s.w.total {
		return nil, &pastEndError{offset: s.offset, total: s.w.total}
	}
	return s.result(), nil
}

// result returns the window with its last line set.
func (s *windowScanner) result() *window {
	s.w.end = s.w.start + s.lines - 1
	return s.w
}

type readPhase int

const (
	phaseSkip   readPhase = iota // before the window: count newlines only
	phaseWindow                  // collect lines
	phaseCount                   // after the window: count newlines to learn the total
)

var nl = []byte{'\n'}

// cutMarker is appended to a line cut at the line limit.
const cutMarker = " … [line cut: %d more bytes not shown]"

// renderLine returns a line's text as shown: its kept bytes, a marker when it
// was cut, and its newline unless it is the file's last line without one.
func renderLine(kept []byte, full int, terminated bool) ([]byte, bool) {
	out := make([]byte, 0, len(kept)+48)
	cut := full > len(kept)
	if cut {
		k := trimPartialRune(kept)
		out = append(out, k...)
		out = fmt.Appendf(out, cutMarker, full-len(k))
	} else {
		out = append(out, kept...)
	}
	if terminated {
		out = append(out, '\n')
	}
	return out, cut
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b, left
// there by cutting a line at a byte count.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b // ASCII: nothing partial after it
		}
		if utf8.RuneStart(c) {
			if r, size := utf8.DecodeRune(b[len(b)-i:]); r == utf8.RuneError && size <= 1 {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// checkText reports NUL bytes or invalid UTF-8 in a line's kept bytes; cut
// says the line continues, so a partial rune at the end is not an error.
func checkText(kept []byte, cut bool) error {
	if bytes.IndexByte(kept, 0) >= 0 {
		return errBinary
	}
	if cut {
		kept = trimPartialRune(kept)
	}
	if !utf8.Valid(kept) {
		return errNotUTF8
	}
	return nil
}
