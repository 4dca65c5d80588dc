package policyfile_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/policyfile"
)

// TestAddAllowRulesKeepsTheRestAndLoads: the rules added are read back by
// Load (trusting the project), the file's other keys and rules stay, and a
// rule already there is not repeated.
func TestAddAllowRulesKeepsTheRestAndLoads(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, ".helikon"), 0o755)
	os.WriteFile(filepath.Join(root, ".helikon", "settings.json"), []byte(`{"permissions": {"deny": ["Bash(rm)"], "allow": ["Read"]}, "backend": "os"}`), 0o644)
	path, err := policyfile.AddAllowRules(root, helikon.MustParseRules("Edit(/src/x.go)", "Read"))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, ".helikon", "settings.json"); path != want {
		t.Errorf("path %s, want %s", path, want)
	}
	pol, err := policyfile.Load(&policyfile.Options{Root: root, NoUserFile: true, TrustProject: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := formatRules(pol.Allow); got != "Read Edit(/src/x.go)" {
		t.Errorf("allow %q", got)
	}
	if got := formatRules(pol.Deny); got != "Bash(rm)" || pol.Backend.Value != "os" {
		t.Errorf("deny %q, backend %q: the file's other keys were lost", got, pol.Backend.Value)
	}
}

func TestAddAllowRulesCreatesTheFile(t *testing.T) {
	root := t.TempDir()
	if _, err := policyfile.AddAllowRules(root, helikon.MustParseRules("Bash(=go test ./...)")); err != nil {
		t.Fatal(err)
	}
	pol, err := policyfile.Load(&policyfile.Options{Root: root, NoUserFile: true, TrustProject: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := formatRules(pol.Allow); got != "Bash(=go test ./...)" {
		t.Errorf("allow %q", got)
	}
}

func TestAddAllowRulesRefusesAnInvalidFile(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, ".helikon"), 0o755)
	os.WriteFile(filepath.Join(root, ".helikon", "settings.json"), []byte(`{"permissions": `), 0o644)
	if _, err := policyfile.AddAllowRules(root, helikon.MustParseRules("Read")); err == nil {
		t.Fatal("an invalid file was overwritten")
	}
}

func TestDirsHoldEveryProjectFile(t *testing.T) {
	dirs := policyfile.Dirs()
	for _, f := range append([]string{policyfile.ProjectFile}, policyfile.ClaudeFiles...) {
		if !slices.Contains(dirs, filepath.Dir(f)) {
			t.Errorf("Dirs %v leave out the directory of %s", dirs, f)
		}
	}
}

func formatRules(rules []helikon.Rule) string {
	var s []string
	for _, r := range rules {
		s = append(s, r.String())
	}
	return strings.Join(s, " ")
}
