package backend_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/paigasus/helikon/backend"
)

// model is what a ring must return: every byte ever written, of which only
// the last size are kept.
func checkRing(t *testing.T, size int64, writes [][]byte, cursor int64, limit int) {
	t.Helper()
	r := backend.NewRing(size)
	var all []byte
	for _, w := range writes {
		if n, err := r.Write(w); n != len(w) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		all = append(all, w...)
	}
	total := int64(len(all))
	oldest := max(total-size, 0)
	from := min(max(cursor, 0), total)
	var missed int64
	if from < oldest {
		missed, from = oldest-from, oldest
	}
	want := all[from:]
	if limit > 0 && len(want) > limit {
		want = want[:limit]
	}
	c := r.Read(cursor, limit)
	if !bytes.Equal(c.Data, want) || c.Missed != missed || c.Next != from+int64(len(want)) || c.Total != total {
		t.Fatalf("size %d writes %q Read(%d, %d) = %q next %d missed %d total %d; want %q next %d missed %d total %d",
			size, writes, cursor, limit, c.Data, c.Next, c.Missed, c.Total, want, from+int64(len(want)), missed, total)
	}
}

func TestRingKeepsTheLastBytesAndCountsWhatWasMissed(t *testing.T) {
	tests := []struct {
		name   string
		size   int64
		writes []string
		cursor int64
		max    int
	}{
		{"empty", 4, nil, 0, 0},
		{"fits", 8, []string{"abc", "de"}, 0, 0},
		{"from cursor", 8, []string{"abc", "de"}, 3, 0},
		{"max", 8, []string{"abcdef"}, 1, 2},
		{"wraps", 4, []string{"abc", "def"}, 0, 0},
		{"one write larger than the ring", 4, []string{"ab", "0123456789"}, 0, 0},
		{"cursor inside the kept bytes after a wrap", 4, []string{"abcdefghij"}, 7, 0},
		{"cursor past the end", 4, []string{"ab"}, 9, 0},
		{"negative cursor", 4, []string{"ab"}, -3, 0},
		{"many small writes", 3, []string{"a", "b", "c", "d", "e", "f", "g"}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w [][]byte
			for _, s := range tt.writes {
				w = append(w, []byte(s))
			}
			checkRing(t, tt.size, w, tt.cursor, tt.max)
		})
	}
}

func FuzzRing(f *testing.F) {
	f.Add(int64(4), []byte("abcdefghij"), uint8(3), int64(2), 0)
	f.Add(int64(1), []byte("xy"), uint8(1), int64(0), 1)
	f.Fuzz(func(t *testing.T, size int64, data []byte, chunk uint8, cursor int64, limit int) {
		if size <= 0 || size > 1<<12 || chunk == 0 {
			return
		}
		var writes [][]byte
		for len(data) > 0 {
			k := min(int(chunk), len(data))
			writes, data = append(writes, data[:k]), data[k:]
		}
		checkRing(t, size, writes, cursor, limit)
	})
}

func TestRingWaitReturnsNewOutputOrTheEnd(t *testing.T) {
	r := backend.NewRing(16)
	got := make(chan backend.Chunk)
	go func() {
		c, _ := r.Wait(context.Background(), 0, 0)
		got <- c
	}()
	r.Write([]byte("hi"))
	if c := <-got; string(c.Data) != "hi" || c.Closed {
		t.Fatalf("Wait = %+v, want hi, not closed", c)
	}
	go func() {
		c, _ := r.Wait(context.Background(), 2, 0)
		got <- c
	}()
	r.Close()
	if c := <-got; len(c.Data) != 0 || !c.Closed {
		t.Fatalf("Wait after Close = %+v, want nothing, closed", c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	open := backend.NewRing(16)
	if _, err := open.Wait(ctx, 0, 0); err != context.DeadlineExceeded {
		t.Fatalf("Wait on a silent ring = %v, want the context's error", err)
	}
}
