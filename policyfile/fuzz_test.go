package policyfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/policyfile"
)

// FuzzLoad feeds arbitrary bytes to both file formats: Load never panics, an
// invalid file is an *Error with a line and column inside the file, and every
// rule it accepts is one helikon reads back unchanged.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		`{"permissions": {"allow": ["Bash(npm run test:*)", "Edit(src/**)"], "deny": ["Read(./.env)"]}}`,
		`{"permissions": {"deny": ["WebFetch(domain:example.com)", "mcp__a__b"], "defaultMode": "plan"}}`,
		"{\n \"permissions\": {\"ask\": [\"Bash(git push)\"], \"mode\": \"dont-ask\"},\n \"limits\": {\"timeout\": \"1s\"}}",
		`{"a": [1, {"b": null}]}`, "{", "", "[]", `{"permissions": {"allow": ["Read(~/x)", "Read(//a/**)", "Bash(a *)"]}}`,
	} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, content string, claude bool) {
		root := t.TempDir()
		file := filepath.Join(root, ".helikon", "settings.json")
		if claude {
			file = filepath.Join(root, ".claude", "settings.json")
		}
		os.MkdirAll(filepath.Dir(file), 0o755)
		if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		pol, err := policyfile.Load(&policyfile.Options{Root: root, NoUserFile: true, Claude: claude, TrustProject: true, Home: "/home/u"})
		if err != nil {
			var pe *policyfile.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error without a place: %v", err)
			}
			lines := strings.Count(content, "\n") + 1
			if pe.Line < 1 || pe.Line > lines || pe.Column < 1 {
				t.Fatalf("error at %d:%d in a file of %d lines: %v", pe.Line, pe.Column, lines, err)
			}
			return
		}
		for _, r := range append(append(pol.Allow, pol.Deny...), pol.Ask...) {
			back, err := helikon.ParseRule(r.String())
			if err != nil || back != r {
				t.Fatalf("rule %+v does not read back: %+v, %v", r, back, err)
			}
		}
	})
}
