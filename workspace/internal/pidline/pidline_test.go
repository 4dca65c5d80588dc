package pidline

import (
	"bytes"
	"testing"
)

func TestWriterTakesOnlyAPidLine(t *testing.T) {
	for _, tt := range []struct {
		name, prefix, stream, out string
		pid                       int
		ok                        bool
	}{
		{"bare pid", "", "42\nhello\n", "hello\n", 42, true},
		{"prefixed pid", "pid:", "pid:7\nerr", "err", 7, true},
		{"a terminal's line end", "", "42\r\nhello\r\n", "hello\r\n", 42, true},
		{"no prefix passes whole", "pid:", "boom\nerr", "boom\nerr", 0, false},
		{"short non-pid line is taken", "", "x\nrest", "rest", 0, false},
		{"a line too long passes whole", "", "01234567890123456789\nrest", "01234567890123456789\nrest", 0, false},
		{"zero is no pid", "", "0\nrest", "rest", 0, false},
	} {
		for cut := 1; cut <= len(tt.stream); cut++ {
			var out bytes.Buffer
			w := New(&out, tt.prefix, 16)
			for i := 0; i < len(tt.stream); i += cut {
				chunk := tt.stream[i:min(i+cut, len(tt.stream))]
				if n, err := w.Write([]byte(chunk)); err != nil || n != len(chunk) {
					t.Fatalf("%s: Write(%q) = %d, %v", tt.name, chunk, n, err)
				}
			}
			pid, ok := w.PID()
			if out.String() != tt.out || pid != tt.pid && tt.ok || ok != tt.ok {
				t.Errorf("%s, writes of %d: out %q pid %d %v; want %q %d %v", tt.name, cut, out.String(), pid, ok, tt.out, tt.pid, tt.ok)
			}
			select {
			case <-w.Ready():
			default:
				t.Errorf("%s: not ready after the first line", tt.name)
			}
		}
	}
}
