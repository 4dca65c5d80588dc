//go:build unix

package procdev

import (
	"os"
	"path/filepath"
	"testing"
)

func TestThroughFollowsLinksAndDotDot(t *testing.T) {
	dir := t.TempDir()
	for _, l := range []struct{ name, target string }{{"self", "/proc/self"}, {"up", "/usr/bin"}, {"rel", "sub"}} {
		if err := os.Symlink(l.target, filepath.Join(dir, l.name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name            string
		through, exists bool
	}{
		{"/proc/self/exe", true, true},
		{"/usr/../proc/self/exe", true, true},
		{"self/exe", true, true},
		{"sub/../self/exe", true, true},
		{"up/../../dev/null", true, true}, // up/.. is /usr, not dir
		{"/dev/fd/0", true, true},
		{"rel/x", false, true},
		{"sub/x", false, true},
		{"sub/missing", false, false},
		{"/usr/bin", false, true},
	} {
		through, exists := Through(c.name, dir)
		if through != c.through || exists != c.exists {
			t.Errorf("Through(%q) = %v, %v, want %v, %v", c.name, through, exists, c.through, c.exists)
		}
	}
}
