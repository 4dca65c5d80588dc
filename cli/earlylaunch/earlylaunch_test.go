package earlylaunch_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
	"github.com/paigasus/helikon/cli/earlylaunch"
)

func TestWanted(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	wd, _ = filepath.EvalSymlinks(wd)
	tests := []struct {
		name string
		args []string
		euid int
		root string // "" for not wanted
	}{
		{"plain exec", []string{"exec", "--", "true"}, 1000, wd},
		{"program without --", []string{"exec", "true"}, 1000, wd},
		{"root caller", []string{"exec", "--", "true"}, 0, ""},
		{"another command", []string{"run", "fix it"}, 1000, ""},
		{"exec alone", []string{"exec"}, 1000, ""},
		{"--root", []string{"exec", "--root", dir, "--", "true"}, 1000, dir},
		{"-root=", []string{"exec", "-root=" + dir, "--", "true"}, 1000, dir},
		{"root through a link", []string{"exec", "--root", link, "--", "true"}, 1000, dir},
		{"missing root", []string{"exec", "--root", filepath.Join(dir, "nope"), "--", "true"}, 1000, ""},
		{"backend os", []string{"exec", "--backend", "os", "--", "true"}, 1000, wd},
		{"backend local", []string{"exec", "--backend=local", "--", "true"}, 1000, wd},
		{"backend host", []string{"exec", "--backend", "host", "--", "true"}, 1000, ""},
		{"backend docker", []string{"exec", "--backend=docker", "--", "true"}, 1000, ""},
		{"egress", []string{"exec", "--egress-allow", "example.com", "--", "true"}, 1000, wd},
		{"loopback before --root", []string{"exec", "--loopback", "--root", dir, "--", "true"}, 1000, dir},
		{"session", []string{"exec", "--session", "s1", "--", "true"}, 1000, ""},
		{"help", []string{"exec", "--help"}, 1000, ""},
		{"-h", []string{"exec", "-h"}, 1000, ""},
		{"map-root-user", []string{"exec", "--map-root-user", "--", "true"}, 1000, ""},
		{"map-root-user=true", []string{"exec", "--map-root-user=true", "--", "true"}, 1000, ""},
		{"map-root-user=false", []string{"exec", "--map-root-user=false", "--", "true"}, 1000, wd},
		{"map-root-user=bad", []string{"exec", "--map-root-user=maybe", "--", "true"}, 1000, ""},
		{"bool flag before --root", []string{"exec", "--allow-network", "--root", dir, "--", "true"}, 1000, dir},
		{"value that looks like a flag", []string{"exec", "--env", "--backend", "--", "true"}, 1000, wd},
		{"flag missing its value", []string{"exec", "--timeout"}, 1000, ""},
		{"the program's own flags", []string{"exec", "--", "prog", "--backend", "host"}, 1000, wd},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, ok := earlylaunch.Wanted(tt.args, tt.euid)
			if ok != (tt.root != "") || root != tt.root {
				t.Errorf("Wanted(%q) = %q, %v; want %q", tt.args, root, ok, tt.root)
			}
		})
	}
}

// TestBoolFlagsMatchExec holds BoolFlags to the flags helikon exec defines,
// read from its usage: a flag that takes no value is listed alone, one that
// takes a value with the value's name.
func TestBoolFlagsMatchExec(t *testing.T) {
	_, stdout, stderr := clitest.Run(t, "", "exec", "--help")
	usage := stdout + stderr
	// A one-letter flag's usage follows it on its line, after a tab.
	flags := regexp.MustCompile(`(?m)^  -([a-z-]+)( [^\s]+)?(\t.*)?$`).FindAllStringSubmatch(usage, -1)
	if len(flags) < 10 {
		t.Fatalf("read %d flags from helikon exec's usage:\n%s", len(flags), usage)
	}
	var bools []string
	for _, f := range flags {
		if f[2] == "" {
			bools = append(bools, f[1])
		}
	}
	slices.Sort(bools)
	want := slices.Sorted(slices.Values(earlylaunch.BoolFlags))
	if !slices.Equal(bools, want) {
		t.Errorf("helikon exec's flags without a value are %q; earlylaunch.BoolFlags is %q", bools, want)
	}
	if !strings.Contains(usage, "-root DIR") {
		t.Errorf("helikon exec has no --root DIR flag:\n%s", usage)
	}
}
