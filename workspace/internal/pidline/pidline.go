// Package pidline strips the line a remote engine's command wrapper prints
// first, its process id, from the command's output: the Docker and
// Kubernetes engines kill a timed-out command's processes by that pid
// through a second exec, since neither API can kill an exec.
package pidline

import (
	"bytes"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Writer passes a stream on to its destination after taking its first
// line when that is a pid line: at most max bytes before its newline (a
// terminal's "\r\n" included) and starting with the prefix. Any other
// stream passes on whole, so nothing a command prints is lost. It is safe
// for concurrent use.
type Writer struct {
	dst    io.Writer
	prefix []byte
	max    int
	ready  chan struct{}

	mu   sync.Mutex
	line []byte
	done bool
	pid  int
	ok   bool
}

// New returns a Writer to dst for pid lines of prefix (which may be empty)
// at most max bytes long.
func New(dst io.Writer, prefix string, max int) *Writer {
	return &Writer{dst: dst, prefix: []byte(prefix), max: max, ready: make(chan struct{})}
}

// Ready is closed once the first line has been taken or found missing.
func (w *Writer) Ready() <-chan struct{} { return w.ready }

// Write takes the pid line from what arrives first and passes the rest on.
func (w *Writer) Write(b []byte) (int, error) {
	w.mu.Lock()
	if w.done {
		w.mu.Unlock()
		return w.dst.Write(b)
	}
	total := len(b)
	i := bytes.IndexByte(b, '\n')
	if i >= 0 && len(w.line)+i > w.max {
		i = -1 // a line too long for a pid: there is no pid line
	}
	if i < 0 && len(w.line)+len(b) <= w.max {
		w.line = append(w.line, b...)
		w.mu.Unlock()
		return total, nil
	}
	var rest []byte
	if i >= 0 && bytes.HasPrefix(append(w.line, b[:i]...), w.prefix) {
		w.line = append(w.line, b[:i]...)
		// A terminal ends its lines with a carriage return too.
		n, err := strconv.Atoi(strings.TrimSuffix(string(w.line[len(w.prefix):]), "\r"))
		w.pid, w.ok = n, err == nil && n > 0
		rest = b[i+1:]
	} else {
		rest = append(w.line, b...) // no pid line: pass everything on
	}
	w.done = true
	close(w.ready)
	w.mu.Unlock()
	if len(rest) > 0 {
		if _, err := w.dst.Write(rest); err != nil {
			return 0, err
		}
	}
	return total, nil
}

// PID returns the process id the pid line gave, and whether there was one.
func (w *Writer) PID() (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pid, w.ok
}
