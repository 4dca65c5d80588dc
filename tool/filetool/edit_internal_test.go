package filetool

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/paigasus/helikon/workspace"
)

// FuzzApplyEdit checks applyEdit against strings.Replace: the result changes
// the matched bytes and nothing else, and the uniqueness rule holds.
func FuzzApplyEdit(f *testing.F) {
	f.Add("a\nb\nc\n", "b", "B", false)
	f.Add("x x x", "x", "y", true)
	f.Add("x x x", "x", "y", false)
	f.Add("one\r\ntwo\r\n", "one\ntwo", "1\n2", false)
	f.Add("one\r\ntwo\r\n", "one\r\n", "", false)
	f.Add("\ufeffbom\nend", "end", "fin", false)
	f.Add("aaa", "aa", "a", true)
	f.Add("bin\x00ary", "bin", "x", false)
	f.Add("", "a", "b", false)
	f.Fuzz(func(t *testing.T, content, old, repl string, all bool) {
		if old == "" || old == repl {
			return // refused before applyEdit runs
		}
		pieces, n, err := applyEdit([]byte(content), old, repl, all, 0)
		out := bytes.Join(pieces, nil)
		exact := strings.Count(content, old)
		switch {
		case strings.IndexByte(content, 0) >= 0:
			if !errors.Is(err, errBinaryEd) {
				t.Fatalf("binary content: err = %v", err)
			}
		case exact > 0:
			if exact > 1 && !all {
				if !errors.Is(err, errNotUnique) || n != exact {
					t.Fatalf("%d occurrences without replace_all: n = %d, err = %v", exact, n, err)
				}
				return
			}
			if err != nil || n != exact || string(out) != strings.ReplaceAll(content, old, repl) {
				t.Fatalf("exact match: got %q, %d, %v", out, n, err)
			}
		case err == nil:
			// Only the CRLF retry may succeed when old does not occur.
			if !strings.Contains(content, "\r\n") || strings.Contains(old, "\r") || !strings.Contains(old, "\n") {
				t.Fatalf("edit succeeded although old_string does not occur: %q", out)
			}
			co := strings.ReplaceAll(old, "\n", "\r\n")
			cr := strings.ReplaceAll(strings.ReplaceAll(repl, "\r\n", "\n"), "\n", "\r\n")
			if n != strings.Count(content, co) || string(out) != strings.ReplaceAll(content, co, cr) {
				t.Fatalf("crlf retry: got %q, %d", out, n)
			}
			if n > 1 && !all {
				t.Fatal("crlf retry ignored the uniqueness rule")
			}
		default:
			if !errors.Is(err, errNotFound) && !errors.Is(err, errNotUnique) {
				t.Fatalf("unexpected error %v", err)
			}
		}
	})
}

// An empty old_string (refused by the schema before applyEdit runs) must
// not loop: it matches at every position without advancing.
func TestApplyEditRefusesEmptyOldString(t *testing.T) {
	for _, all := range []bool{false, true} {
		if _, _, err := applyEdit([]byte("abc"), "", "x", all, 1<<20); err == nil {
			t.Errorf("applyEdit with an empty old_string (replace_all %v) succeeded", all)
		}
	}
}

func TestApplyEditSizeLimit(t *testing.T) {
	_, _, err := applyEdit([]byte("abc"), "b", strings.Repeat("b", 10), false, 5)
	if !errors.Is(err, workspace.ErrTooLarge) {
		t.Fatalf("err = %v", err)
	}
	pieces, _, err := applyEdit([]byte("abc"), "b", "", false, 2)
	out := bytes.Join(pieces, nil)
	if err != nil || !bytes.Equal(out, []byte("ac")) {
		t.Fatalf("shrinking edit: %q, %v", out, err)
	}
}

// replace_all of a frequent string must cost memory in proportion to the
// file, not 48 bytes of slice headers (plus regrowth) per replacement: one
// call replacing every byte of the 10 MiB maximum allocated 2.8 GB.
func TestApplyEditReplaceAllMemoryIsBoundedByTheFile(t *testing.T) {
	content := bytes.Repeat([]byte("ab"), 512<<10) // 1 MiB, 512 Ki matches
	for _, tc := range []struct{ old, repl string }{{"a", "c"}, {"a", ""}, {"b", "xy"}} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		pieces, n, err := applyEdit(content, tc.old, tc.repl, true, 4<<20)
		runtime.ReadMemStats(&after)
		if err != nil || n != 512<<10 {
			t.Fatalf("applyEdit(%q→%q) = %d, %v", tc.old, tc.repl, n, err)
		}
		want := strings.ReplaceAll(string(content), tc.old, tc.repl)
		if got := bytes.Join(pieces, nil); string(got) != want {
			t.Fatalf("applyEdit(%q→%q) built the wrong content", tc.old, tc.repl)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*uint64(len(want))+1<<16 {
			t.Errorf("applyEdit(%q→%q) of %d bytes allocated %d bytes; want about the size of the result", tc.old, tc.repl, len(content), alloc)
		}
	}
	// A result over the limit is refused before it is built.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := applyEdit(content, "a", strings.Repeat("x", 64), true, 4<<20)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, workspace.ErrTooLarge) {
		t.Fatalf("oversized result: %v", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<16 {
		t.Errorf("refusing an oversized result allocated %d bytes", alloc)
	}
}
