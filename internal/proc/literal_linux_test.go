package proc

import (
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

func TestLiteralWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"ls", []string{"ls"}},
		{"  ls  -la\tsub ", []string{"ls", "-la", "sub"}},
		{"cat 'a b' \"c d\" e'f'\"g\"", []string{"cat", "a b", "c d", "efg"}},
		{"x ''", []string{"x", ""}},
		{"go test ./... -run=X,Y:z@1%+^", []string{"go", "test", "./...", "-run=X,Y:z@1%+^"}},
		{"sh -c 'echo $HOME; `id` \\ \"'", []string{"sh", "-c", "echo $HOME; `id` \\ \""}},
	}
	for _, tt := range tests {
		if got, ok := literalWords(tt.in); !ok || !slices.Equal(got, tt.want) {
			t.Errorf("literalWords(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
	for _, in := range []string{
		"", "   ", "ls *", "ls ?", "ls [a]", "ls {a,b}", "ls ~", "ls ~/x", "ls $HOME", "ls ${HOME}", "ls `id`",
		"ls $(id)", "ls \"$HOME\"", "ls \"a\\b\"", "ls \"`id`\"", "ls \"!x\"", "ls \\x", "ls #c", "ls; id", "ls && id",
		"ls || id", "ls | id", "ls &", "ls > f", "ls < f", "ls 2>&1", "(ls)", "{ ls; }", "ls\nid", "ls 'a", "ls \"a",
		"ls $'a'", "ls !x", "ls a\x00b", "ls 'a\nb'", "ls 'a\x7f'", "ls <(id)", "ls é",
	} {
		if got, ok := literalWords(in); ok {
			t.Errorf("literalWords(%q) = %q, want not literal", in, got)
		}
	}
}

// FuzzLiteralWords checks literalWords against a real bash parser: whatever
// it accepts must parse as one simple command whose words are exactly the
// words it returned, with no expansion, assignment or redirection.
func FuzzLiteralWords(f *testing.F) {
	for _, s := range []string{"ls -la", "cat 'a b' \"c\"", "x=1 y", "ls *", "a'b'\"c\"d", "echo $x", "a \\b", "ls {a,b}"} {
		f.Add(s)
	}
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f.Fuzz(func(t *testing.T, in string) {
		words, ok := literalWords(in)
		if !ok {
			return
		}
		file, err := parser.Parse(strings.NewReader(in), "")
		if err != nil {
			t.Fatalf("literalWords accepted %q, which bash cannot parse: %v", in, err)
		}
		if len(file.Stmts) != 1 {
			t.Fatalf("literalWords accepted %q: %d statements", in, len(file.Stmts))
		}
		st := file.Stmts[0]
		call, isCall := st.Cmd.(*syntax.CallExpr)
		if !isCall || st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 || len(call.Assigns) > 0 {
			t.Fatalf("literalWords accepted %q, which is not a plain simple command", in)
		}
		var got []string
		for _, w := range call.Args {
			var b strings.Builder
			for _, p := range w.Parts {
				switch p := p.(type) {
				case *syntax.Lit:
					if strings.ContainsAny(p.Value, "*?[]{}~\\$`#!") {
						t.Fatalf("literalWords accepted %q: word part %q is not literal", in, p.Value)
					}
					b.WriteString(p.Value)
				case *syntax.SglQuoted:
					if p.Dollar {
						t.Fatalf("literalWords accepted %q: $'...'", in)
					}
					b.WriteString(p.Value)
				case *syntax.DblQuoted:
					for _, q := range p.Parts {
						lit, isLit := q.(*syntax.Lit)
						if !isLit || strings.ContainsAny(lit.Value, "\\$`") {
							t.Fatalf("literalWords accepted %q: double-quoted part %T", in, q)
						}
						b.WriteString(lit.Value)
					}
				default:
					t.Fatalf("literalWords accepted %q: word part %T", in, p)
				}
			}
			got = append(got, b.String())
		}
		if !slices.Equal(got, words) {
			t.Fatalf("literalWords(%q) = %q, the parser says %q", in, words, got)
		}
	})
}
