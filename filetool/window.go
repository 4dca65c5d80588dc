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
	w := &window{start: offset, total: -1}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	buf := *bp
	var (
		line    = 1    // the line the next byte belongs to
		nls     int    // newlines seen
		lastNL  = true // the last byte seen was a newline (or none seen)
		first   = true
		phase   = phaseSkip
		cur     = make([]byte, 0, min(lim.maxLineBytes, 4096))
		curLen  int   // full length of the current line so far
		counted int64 // bytes scanned in phaseCount
		lines   int   // lines returned
	)
	if offset <= 1 {
		phase = phaseWindow
	}
	// emit appends the current line, or reports that the byte cap is full.
	emit := func(terminated bool) (full bool) {
		text, cut := renderLine(cur, curLen, terminated)
		if lines > 0 && len(w.content)+len(text) > lim.maxBytes {
			return true
		}
		w.content = append(w.content, text...)
		lines++
		if cut {
			w.cutLines++
		}
		return false
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var n int
		var rerr error
		if first {
			// Look at the whole sniff window before any line, so that
			// binary content is reported as such, whatever comes first.
			first = false
			n, rerr = io.ReadFull(r, buf[:sniffBytes])
			if rerr == io.ErrUnexpectedEOF {
				rerr = io.EOF
			}
			if bytes.IndexByte(buf[:n], 0) >= 0 {
				return nil, &contentError{err: errBinary}
			}
		} else {
			n, rerr = r.Read(buf)
		}
		data := buf[:n]
		if n > 0 {
			lastNL = data[n-1] == '\n'
		}
		for len(data) > 0 {
			switch phase {
			case phaseSkip:
				need := offset - line
				c := bytes.Count(data, nl)
				skip := len(data) // bytes before the window
				if c >= need {
					skip = 0
					for range need {
						skip += bytes.IndexByte(data[skip:], '\n') + 1
					}
				}
				// A NUL in the lines skipped makes the file binary: a
				// sparse file with a text head would otherwise be
				// scanned to its end, terabytes of zeros, for lines
				// that are not text.
				if i := bytes.IndexByte(data[:skip], 0); i >= 0 {
					return nil, &contentError{line: line + bytes.Count(data[:i], nl), err: errBinary}
				}
				line += min(c, need)
				nls += min(c, need)
				data = data[skip:]
				if c >= need {
					phase = phaseWindow
				}
			case phaseWindow:
				i := bytes.IndexByte(data, '\n')
				seg := data
				if i >= 0 {
					seg = data[:i]
				}
				// Also in the part of a line that is cut: a line of
				// gigabytes of zeros is binary, not a line to scan
				// to its end for its length.
				if bytes.IndexByte(seg, 0) >= 0 {
					return nil, &contentError{line: line, err: errBinary}
				}
				if room := lim.maxLineBytes - len(cur); room > 0 {
					cur = append(cur, seg[:min(room, len(seg))]...)
				}
				curLen += len(seg)
				if i < 0 {
					data = nil
					continue
				}
				data = data[i+1:]
				nls++
				if err := checkText(cur, curLen > len(cur)); err != nil {
					return nil, &contentError{line: line, err: err}
				}
				if emit(true) {
					w.truncated = true
					phase = phaseCount
					line++
					cur, curLen = cur[:0], 0
					continue
				}
				line++
				cur, curLen = cur[:0], 0
				if limit > 0 && lines == limit {
					phase = phaseCount
				}
			case phaseCount:
				w.truncated = true
				k := min(int64(len(data)), lim.countBytes-counted)
				nls += bytes.Count(data[:k], nl)
				counted += k
				data = data[k:]
				if len(data) > 0 { // the count budget is spent
					w.end = w.start + lines - 1
					w.total = -1
					return w, nil
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return nil, rerr
		}
		if phase == phaseCount && counted >= lim.countBytes {
			// Spent exactly at a chunk boundary: is there more?
			var one [1]byte
			if k, _ := io.ReadFull(r, one[:]); k > 0 {
				w.end = w.start + lines - 1
				return w, nil
			}
			break
		}
	}
	// End of file. A last line without a newline is still a line.
	if phase == phaseWindow && curLen > 0 {
		if err := checkText(cur, curLen > len(cur)); err != nil {
			return nil, &contentError{line: line, err: err}
		}
		if emit(false) {
			w.truncated = true
		}
	}
	w.total = nls
	if !lastNL {
		w.total++
	}
	if offset > 1 && offset > w.total {
		return nil, &pastEndError{offset: offset, total: w.total}
	}
	w.end = w.start + lines - 1
	return w, nil
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
