package docker

import (
	"bytes"
	"strconv"
	"testing"
)

// FuzzPidWriter splits the wrapper's output (its pid line, then the
// command's output) at arbitrary points: the command's output must come
// through whole and unchanged, and the pid must be the one printed.
func FuzzPidWriter(f *testing.F) {
	f.Add(uint32(7), []byte("hello\n"), uint8(1), uint8(3))
	f.Add(uint32(4194303), []byte(""), uint8(0), uint8(0))
	f.Add(uint32(12), []byte("\n\n12\n"), uint8(2), uint8(200))
	f.Fuzz(func(t *testing.T, pid uint32, payload []byte, a, b uint8) {
		pid = pid%4194302 + 2
		stream := append([]byte(strconv.FormatUint(uint64(pid), 10)+"\n"), payload...)
		var out bytes.Buffer
		w := newPidWriter(&out)
		i, j := min(int(a), len(stream)), min(int(b), len(stream))
		if i > j {
			i, j = j, i
		}
		for _, chunk := range [][]byte{stream[:i], stream[i:j], stream[j:]} {
			if n, err := w.Write(chunk); err != nil || n != len(chunk) {
				t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
			}
		}
		if !bytes.Equal(out.Bytes(), payload) {
			t.Errorf("output %q, want %q", out.Bytes(), payload)
		}
		if got, ok := wrapperPid(w); !ok || got != int(pid) {
			t.Errorf("pid %d %v, want %d", got, ok, pid)
		}
	})
}

// FuzzPidWriterWithoutPid feeds output that does not start with a pid
// line: nothing may be lost, and no pid may be reported.
func FuzzPidWriterWithoutPid(f *testing.F) {
	f.Add([]byte("not a pid\nrest"))
	f.Add([]byte("0123456789012345678901234567890"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		line, _, _ := bytes.Cut(stream, []byte("\n"))
		if n, err := strconv.Atoi(string(line)); err == nil && n > 1 && bytes.IndexByte(stream, '\n') >= 0 {
			t.Skip()
		}
		var out bytes.Buffer
		w := newPidWriter(&out)
		w.Write(stream)
		if _, ok := wrapperPid(w); ok {
			t.Errorf("a pid was read from %q", stream)
		}
		nl := bytes.IndexByte(stream, '\n')
		var want []byte
		switch {
		case nl >= 0 && nl <= maxPidLine:
			want = stream[nl+1:] // the first line is taken for the (invalid) pid line
		case len(stream) <= maxPidLine:
			want = nil // still waiting for the end of the line
		default:
			want = stream
		}
		if !bytes.Equal(out.Bytes(), want) {
			t.Errorf("output %q, want %q", out.Bytes(), want)
		}
	})
}
