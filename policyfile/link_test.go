package policyfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/paigasus/helikon/policyfile"
)

// TestRootThroughALinkIsTheProject: a root named through a symbolic link
// has its policy files protected under their resolved paths (the ones the
// sandbox opens and the tools report), and trustedProjects compares
// resolved directories, so an entry naming the project through a link
// trusts it and an entry naming another directory does not.
func TestRootThroughALinkIsTheProject(t *testing.T) {
	root := project(t, map[string]string{".helikon/settings.json": `{"permissions": {"allow": ["Bash"]}}`})
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	links := t.TempDir()
	link, other := filepath.Join(links, "link"), filepath.Join(links, "other")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), other); err != nil {
		t.Fatal(err)
	}
	pol, err := load(link, false, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{".helikon/settings.json", ".claude/settings.json", ".claude/settings.local.json"} {
		if want := filepath.Join(real, f); !slices.Contains(pol.Protected, want) {
			t.Errorf("%s is not protected under the resolved root: %q", want, pol.Protected)
		}
	}
	tests := []struct {
		root, trusted string
		ok            bool
	}{
		{link, real, true},
		{real, link, true},
		{link, link, true},
		{link, other, false},
		{real, other, false},
	}
	for _, tt := range tests {
		user := filepath.Join(t.TempDir(), "settings.json")
		if err := os.WriteFile(user, []byte(`{"trustedProjects": [`+quote(tt.trusted)+`]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := policyfile.Load(&policyfile.Options{Root: tt.root, UserFile: user})
		if tt.ok && err != nil || !tt.ok && !errors.Is(err, policyfile.ErrUntrusted) {
			t.Errorf("root %s, trustedProjects [%s]: %v, want trusted=%v", tt.root, tt.trusted, err, tt.ok)
		}
	}
}
