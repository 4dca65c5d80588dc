package bashtool

import (
	"strings"
	"testing"
)

func TestSplitInputKeepsWhatTheShellHasNotRun(t *testing.T) {
	for _, tt := range []struct {
		pending, input, judged, next string
		bad                          bool
	}{
		{input: "ls\n", judged: "ls\n"},
		{input: "r", judged: "r", next: "r"},
		{pending: "r", input: "m -rf /\n", judged: "rm -rf /\n"},
		{input: "echo a\nrm -r", judged: "echo a\nrm -r", next: "rm -r"},
		{input: "for i in 1; do\n", judged: "for i in 1; do\n", next: "for i in 1; do\n"},
		{pending: "for i in 1; do\n", input: "echo $i\ndone\n", judged: "for i in 1; do\necho $i\ndone\n"},
		{input: "echo 'a\n", judged: "echo 'a\n", next: "echo 'a\n"},
		{input: "cat <<X\nrm\n", judged: "cat <<X\nrm\n", next: "cat <<X\nrm\n"},
		{input: "echo a \\\n", judged: "echo a \\\n", next: "echo a \\\n"},
		{input: "echo \x7f", bad: true},
		{input: "echo \r", bad: true},
		{input: "echo \x03", bad: true},
		{input: "echo \xff", bad: true},
		{input: "echo \u0085", bad: true},
		{pending: strings.Repeat("x", maxPending), input: "y", bad: true},
	} {
		judged, next, err := splitInput(tt.pending, tt.input)
		if tt.bad {
			if err == nil {
				t.Errorf("splitInput(%q, %q) accepted it", tt.pending, tt.input)
			}
			if next != tt.pending {
				t.Errorf("splitInput(%q, %q) refused, but next = %q", tt.pending, tt.input, next)
			}
			continue
		}
		if err != nil || judged != tt.judged || next != tt.next {
			t.Errorf("splitInput(%q, %q) = %q, %q, %v; want %q, %q", tt.pending, tt.input, judged, next, err, tt.judged, tt.next)
		}
	}
}

// FuzzSplitInput feeds text to a shell in arbitrary pieces and checks the
// property the permission check rests on: every piece is judged with all
// the text before it that the shell has not run, so what the shell runs
// (the text up to a newline where no construct is open) was inside one
// judged text, whole.
func FuzzSplitInput(f *testing.F) {
	f.Add("rm -rf /\n", uint8(1))
	f.Add("for i in 1; do\nrm x\ndone\n", uint8(3))
	f.Add("echo 'a\n'; rm x\n", uint8(5))
	f.Add("cat <<E\nx\nE\nrm y\n", uint8(2))
	f.Fuzz(func(t *testing.T, text string, cut uint8) {
		step := int(cut%7) + 1
		var pending, consumed string
		for i := 0; i < len(text); i += step {
			piece := text[i:min(i+step, len(text))]
			judged, next, err := splitInput(pending, piece)
			if err != nil {
				if next != pending {
					t.Fatalf("refused %q but changed pending from %q to %q", piece, pending, next)
				}
				continue // the piece is not written
			}
			if judged != pending+piece {
				t.Fatalf("judged %q, want pending %q + piece %q", judged, pending, piece)
			}
			if !strings.HasSuffix(judged, next) {
				t.Fatalf("next %q is not the end of judged %q", next, judged)
			}
			if ran := judged[:len(judged)-len(next)]; ran != "" {
				if !strings.HasSuffix(ran, "\n") {
					t.Fatalf("the shell is taken to have run %q, which does not end a line", ran)
				}
				consumed += ran
			}
			if strings.Contains(next, "\n") && next != judged {
				t.Fatalf("next %q holds a finished line but is not all of judged %q", next, judged)
			}
			pending = next
		}
		if len(consumed)+len(pending) > len(text) {
			t.Fatalf("consumed %q and pending %q are more than the text %q", consumed, pending, text)
		}
	})
}
