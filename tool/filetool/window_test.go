package filetool

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// refWindow is the obvious implementation of readWindow over a whole file in
// memory; the fuzz target checks the streaming one against it.
func refWindow(content []byte, offset, limit int, lim windowLimits) (*window, error) {
	if bytes.IndexByte(content[:min(len(content), sniffBytes)], 0) >= 0 {
		return nil, &contentError{err: errBinary}
	}
	lines := bytes.SplitAfter(content, nl)
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	total := len(lines)
	if offset < 1 {
		offset = 1
	}
	pos := 0
	for _, l := range lines[:min(offset-1, total)] {
		pos += len(l)
	}
	if i := bytes.IndexByte(content[:pos], 0); i >= 0 { // in the lines skipped
		return nil, &contentError{line: 1 + bytes.Count(content[:i], nl), err: errBinary}
	}
	if offset > 1 && offset > total {
		return nil, &pastEndError{offset: offset, total: total}
	}
	w := &window{start: offset}
	i, n := offset-1, 0
	for i < total {
		if limit > 0 && n == limit {
			break
		}
		l := lines[i]
		body, term := bytes.CutSuffix(l, nl)
		if bytes.IndexByte(body, 0) >= 0 {
			return nil, &contentError{line: i + 1, err: errBinary}
		}
		kept := body[:min(len(body), lim.maxLineBytes)]
		if err := checkText(kept, len(kept) < len(body)); err != nil {
			return nil, &contentError{line: i + 1, err: err}
		}
		text, cut := renderLine(kept, len(body), term)
		pos += len(l)
		if n > 0 && len(w.content)+len(text) > lim.maxBytes {
			break
		}
		w.content = append(w.content, text...)
		if cut {
			w.cutLines++
		}
		n++
		i++
	}
	w.end = offset + n - 1
	w.truncated = i < total
	w.total = total
	if w.truncated && int64(len(content)-pos) > lim.countBytes {
		w.total = -1
	}
	return w, nil
}

// chunkReader returns at most n bytes a call, to exercise chunk boundaries.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

func sameWindow(a, b *window) bool {
	return bytes.Equal(a.content, b.content) && a.start == b.start && a.end == b.end &&
		a.total == b.total && a.truncated == b.truncated && a.cutLines == b.cutLines
}

func FuzzReadWindow(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), 1, 0, 100, 10, 100, 3)
	f.Add([]byte("a\nb\nc"), 2, 1, 100, 10, 100, 1)
	f.Add([]byte("line one is long\nshort\n"), 1, 0, 12, 5, 1, 7)
	f.Add([]byte("\r\n\r\nx\r\n"), 3, 2, 4, 2, 1, 2)
	f.Add([]byte("héllo wörld ✓\n日本語テキスト\n"), 1, 0, 40, 7, 5, 4)
	f.Add([]byte("bin\x00ary\n"), 1, 0, 100, 100, 100, 100)
	f.Add([]byte("ok\n\xff\xfe bad\n"), 1, 0, 100, 100, 100, 100)
	f.Add([]byte(""), 1, 0, 10, 10, 10, 10)
	f.Add([]byte("x"), 5, 0, 10, 10, 10, 10)
	f.Add([]byte(strings.Repeat("abc\n", 50)), 10, 20, 30, 3, 16, 9)
	f.Add([]byte(strings.Repeat("text\n", 2000)+"\x00\x00\nafter\n"), 2003, 0, 100, 100, 100, 4096)
	f.Add([]byte(strings.Repeat("text\n", 2000)+"\x00\x00\nafter\n"), 2002, 0, 100, 100, 100, 7)
	f.Fuzz(func(t *testing.T, content []byte, offset, limit, maxBytes, maxLine, countBytes, chunk int) {
		// windowLimits are all positive: read.go turns CountBytes <= 0 into the default.
		if offset < 1 || offset > 1<<16 || limit < 0 || limit > 1<<16 || maxBytes < 1 || maxBytes > 1<<20 ||
			maxLine < 1 || maxLine > maxBytes || countBytes < 1 || countBytes > 1<<20 || chunk < 1 {
			return
		}
		lim := windowLimits{maxBytes: maxBytes, maxLineBytes: maxLine, countBytes: int64(countBytes)}
		want, werr := refWindow(content, offset, limit, lim)
		got, gerr := readWindow(context.Background(), &chunkReader{r: bytes.NewReader(content), n: chunk}, offset, limit, lim)
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("errors differ: got %v, want %v", gerr, werr)
		}
		if werr != nil {
			return
		}
		if !sameWindow(got, want) {
			t.Fatalf("window differs:\n got %+v %q\nwant %+v %q", *got, got.content, *want, want.content)
		}
		if len(got.content) > maxBytes && got.end > got.start {
			t.Fatalf("content %d bytes over the %d cap with more than one line", len(got.content), maxBytes)
		}
		if utf8.Valid(content) && !utf8.Valid(got.content) {
			t.Fatalf("cutting made valid UTF-8 invalid: %q", got.content)
		}
	})
}

func TestReadWindowCases(t *testing.T) {
	lim := windowLimits{maxBytes: 1 << 20, maxLineBytes: 1 << 10, countBytes: 1 << 20}
	for _, tc := range []struct {
		name          string
		content       string
		offset, limit int
		lim           windowLimits
		want          string
		start, end    int
		total         int
		truncated     bool
		err           string
	}{
		{name: "whole", content: "a\nb\n", offset: 1, want: "a\nb\n", start: 1, end: 2, total: 2},
		{name: "no final newline", content: "a\nb", offset: 1, want: "a\nb", start: 1, end: 2, total: 2},
		{name: "empty", content: "", offset: 1, want: "", start: 1, end: 0, total: 0},
		{name: "middle", content: "1\n2\n3\n4\n", offset: 2, limit: 2, want: "2\n3\n", start: 2, end: 3, total: 4, truncated: true},
		{name: "last line", content: "1\n2\n3", offset: 3, want: "3", start: 3, end: 3, total: 3},
		{name: "past end", content: "1\n2\n", offset: 3, err: "offset 3 is past the end of the file, which has 2 lines"},
		{name: "crlf kept", content: "a\r\nb\r\n", offset: 1, want: "a\r\nb\r\n", start: 1, end: 2, total: 2},
		{name: "long line cut", content: "abcdefghij\nk\n", offset: 1, lim: windowLimits{maxBytes: 100, maxLineBytes: 4, countBytes: 10},
			want: "abcd … [line cut: 6 more bytes not shown]\nk\n", start: 1, end: 2, total: 2},
		{name: "cut inside a rune", content: "ab✓cd\n", offset: 1, lim: windowLimits{maxBytes: 100, maxLineBytes: 3, countBytes: 10},
			want: "ab … [line cut: 5 more bytes not shown]\n", start: 1, end: 1, total: 1},
		{name: "byte cap", content: "aaaa\nbbbb\ncccc\n", offset: 1, lim: windowLimits{maxBytes: 11, maxLineBytes: 10, countBytes: 100},
			want: "aaaa\nbbbb\n", start: 1, end: 2, total: 3, truncated: true},
		{name: "byte cap never empties", content: "aaaaaaaaaa\nb\n", offset: 1, lim: windowLimits{maxBytes: 3, maxLineBytes: 3, countBytes: 100},
			want: "aaa … [line cut: 7 more bytes not shown]\n", start: 1, end: 1, total: 2, truncated: true},
		{name: "total unknown past count budget", content: "a\nb\nc\nd\n", offset: 1, limit: 1, lim: windowLimits{maxBytes: 100, maxLineBytes: 10, countBytes: 3},
			want: "a\n", start: 1, end: 1, total: -1, truncated: true},
		{name: "nul", content: "a\x00b\n", offset: 1, err: "in the first 8000 bytes: binary content"},
		{name: "latin1", content: "caf\xe9\n", offset: 1, err: "line 1: invalid UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := tc.lim
			if l.maxBytes == 0 {
				l = lim
			}
			w, err := readWindow(context.Background(), strings.NewReader(tc.content), tc.offset, tc.limit, l)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(w.content) != tc.want || w.start != tc.start || w.end != tc.end || w.total != tc.total || w.truncated != tc.truncated {
				t.Errorf("got %q start %d end %d total %d truncated %v", w.content, w.start, w.end, w.total, w.truncated)
			}
		})
	}
}

func TestReadWindowHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := readWindow(ctx, strings.NewReader("a\n"), 1, 0, windowLimits{maxBytes: 10, maxLineBytes: 10, countBytes: 10})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}
