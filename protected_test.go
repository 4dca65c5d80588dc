package helikon_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
)

// TestProtectedFilesCannotBeWritten is the attack test of the policy-file
// guard: an agent trying to loosen its own policy through Write, Edit or a
// shell command is refused in every mode, with guards off and an approver
// that would say yes.
func TestProtectedFilesCannotBeWritten(t *testing.T) {
	root := "/w/proj"
	protected := []helikon.ProtectedFile{
		{Path: root + "/.helikon/settings.json", Dir: root},
		{Path: root + "/.claude/settings.json", Dir: root},
		{Path: root + "/.claude/settings.local.json", Dir: root},
		{Path: "/home/u/.config/helikon/settings.json", Dir: root},
	}
	write := func(p string) helikon.Targets {
		return helikon.Targets{Paths: []helikon.PathTarget{{Path: p, Root: root, Access: helikon.AccessWrite}}}
	}
	read := func(p string) helikon.Targets {
		return helikon.Targets{Paths: []helikon.PathTarget{{Path: p, Root: root, Access: helikon.AccessRead}}}
	}
	sh := func(args ...string) helikon.Targets {
		return helikon.Targets{Commands: []helikon.Command{{Args: args}}}
	}
	yes := helikon.ApproverFunc(func(context.Context, *helikon.ApprovalRequest) (bool, error) { return true, nil })
	tests := []struct {
		name    string
		tool    string
		t       helikon.Targets
		refused bool
	}{
		{"Write of the project file", "Write", write(root + "/.helikon/settings.json"), true},
		{"Edit of Claude's local settings, other case", "Edit", write(root + "/.Claude/Settings.Local.json"), true},
		{"redirection through ..", "Bash", write(root + "/src/../.claude/settings.json"), true},
		{"sed -i", "Bash", sh("sed", "-i", "s/deny/x/", ".helikon/settings.json"), true},
		{"cp over it, absolute", "Bash", sh("cp", "/tmp/evil", root+"/.claude/settings.json"), true},
		{"glob", "Bash", sh("sed", "-i", "s/a/b/", ".claude/settings*.json"), true},
		{"move the directory away", "Bash", sh("mv", ".claude", "old"), true},
		{"remove the directory", "Bash", sh("rm", "-rf", "./.helikon/"), true},
		{"option=value", "Bash", sh("tool", "--out=.claude/settings.json"), true},
		{"dd of=", "Bash", sh("dd", "if=/tmp/x", "of=.helikon/settings.json"), true},
		{"the user's file, outside the root", "Bash", sh("sed", "-i", "x", "/home/u/.config/helikon/settings.json"), true},
		{"the user's config directory is not protected", "Bash", sh("rm", "-r", "/home/u/.config/other"), false},
		{"Read is fine", "Read", read(root + "/.claude/settings.json"), false},
		{"cat is fine", "Bash", sh("cat", ".claude/settings.json"), false},
		{"other files in the directory", "Write", write(root + "/.claude/commands/x.md"), false},
		{"a command on the root itself", "Bash", sh("git", "add", "."), false},
		{"other settings.json", "Bash", sh("sed", "-i", "x", "src/settings.json"), false},
	}
	for _, mode := range []helikon.PermissionMode{helikon.ModeDefault, helikon.ModeBypass} {
		for _, tt := range tests {
			p := helikon.Permissions{Protected: protected, NoGuards: true, Allow: must(helikon.ParseRules(tt.tool)), Approver: yes}
			d := p.Check(context.Background(), call(tt.tool, helikon.EffectWrite, mode, fakeTargeter{t: tt.t}))
			if d.Allowed == tt.refused {
				t.Errorf("%s in %s: allowed=%v (%s), want refused=%v", tt.name, mode, d.Allowed, d.Reason, tt.refused)
			}
			if tt.refused && (d.Stage != helikon.StageGuard || d.Asked || !strings.Contains(d.Reason, "policy-file")) {
				t.Errorf("%s: stage %s asked=%v reason %q; want a guard refusal without asking", tt.name, d.Stage, d.Asked, d.Reason)
			}
		}
	}
}

// TestProtectedFilesThroughLinksAndCd is the attack test of the policy-file
// guard against other spellings of a policy file: a root reached through a
// symbolic link (the protected paths spelt through it and the targets not,
// or the other way round), relative names after a literal cd, after a cd
// the line cannot follow, and ~ or $HOME spellings of the user's file. Each
// call is refused with guards off, in bypass mode and with an approver that
// would say yes.
func TestProtectedFilesThroughLinksAndCd(t *testing.T) {
	real := t.TempDir()
	for _, d := range []string{".claude", ".helikon", "prep", "home/u/.config/helikon"} {
		if err := os.MkdirAll(filepath.Join(real, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	// A link inside the root that an earlier call made.
	if err := os.Symlink(".claude", filepath.Join(real, "c")); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(real, "home/u")
	userFile := filepath.Join(home, ".config/helikon/settings.json")
	protectedIn := func(root string) []helikon.ProtectedFile {
		return []helikon.ProtectedFile{
			{Path: root + "/.helikon/settings.json", Dir: root},
			{Path: root + "/.claude/settings.json", Dir: root},
			{Path: userFile, Dir: root},
		}
	}
	write := func(root, p string, computed bool) helikon.Targets {
		return helikon.Targets{Paths: []helikon.PathTarget{{Path: p, Root: root, Access: helikon.AccessWrite, Computed: computed}}}
	}
	// sh runs args in dirs (nil: the tool does not say), maybe after a cd
	// the line cannot follow.
	sh := func(dirs []string, unknown string, args ...string) helikon.Targets {
		return helikon.Targets{Commands: []helikon.Command{{Args: args, Dirs: dirs, DirUnknown: unknown}}}
	}
	yes := helikon.ApproverFunc(func(context.Context, *helikon.ApprovalRequest) (bool, error) { return true, nil })
	tests := []struct {
		name      string
		protected string // the root the protected files are spelt under
		tool      string
		t         helikon.Targets
		refused   bool
	}{
		{"Write, files spelt through the link, target resolved", link, "Write", write(real, real+"/.helikon/settings.json", false), true},
		{"Write, files resolved, target through the link", real, "Write", write(link, link+"/.claude/settings.json", false), true},
		{"redirection through the link", real, "Bash", write(link, link+"/.claude/settings.json", false), true},
		{"redirection through a link inside the root", real, "Bash", write(real, real+"/c/settings.json", false), true},
		{"cp, absolute through the link", real, "Bash", sh(nil, "", "cp", "/tmp/evil", link+"/.claude/settings.json"), true},
		{"cp, relative to a linked Dir", link, "Bash", sh(nil, "", "cp", "/tmp/evil", ".claude/settings.json"), true},
		{"mv of the directory through the link", real, "Bash", sh(nil, "", "mv", link+"/.claude", "/tmp/x"), true},
		{"glob through the link", real, "Bash", sh(nil, "", "sed", "-i", "x", link+"/.cla*/settings.json"), true},
		{"glob in the directory through the link", real, "Bash", sh(nil, "", "sed", "-i", "x", filepath.Dir(link)+"/l*/.claude/settings.json"), true},
		{"patterns in several directory elements", real, "Bash", sh(nil, "", "sed", "-i", "x", "/*/*/x/settings.json"), true},
		{"cp after cd", real, "Bash", sh([]string{real, real + "/prep"}, "", "cp", "../evil.json", "../.claude/settings.json"), true},
		{"cp after cd, linked root", link, "Bash", sh([]string{real, real + "/prep"}, "", "cp", "evil.json", "../.helikon/settings.json"), true},
		{"sed -i after cd into the directory", real, "Bash", sh([]string{real, real + "/.claude"}, "", "sed", "-i", "x", "settings.json"), true},
		{"sed -i after cd through a link inside the root", real, "Bash", sh([]string{real, real + "/c"}, "", "sed", "-i", "x", "settings.json"), true},
		{"rm -r . after cd into the directory", real, "Bash", sh([]string{real, real + "/.claude"}, "", "rm", "-r", "."), true},
		{"the user's file after cd outside the root", real, "Bash", sh([]string{real, home + "/.config"}, "", "cp", "x", "helikon/settings.json"), true},
		{"the user's file after cd to its directory", real, "Bash", sh([]string{real, home + "/.config/helikon"}, "", "sed", "-i", "x", "settings.json"), true},
		{"after a computed cd", real, "Bash", sh([]string{real}, `cd "$d"`, "sed", "-i", "x", "settings.json"), true},
		{"the directory after a computed cd", real, "Bash", sh([]string{real}, `cd "$d"`, "mv", ".claude", "old"), true},
		{"up after a computed cd", real, "Bash", sh([]string{real}, "env -C", "cp", "x", "../../helikon/settings.json"), true},
		{"the user's file by ~", real, "Bash", sh([]string{real}, "", "cp", "x", "~/.config/helikon/settings.json"), true},
		{"the user's file by $HOME", real, "Bash", sh([]string{real}, "", "sed", "-i", "x", "${HOME}/.config/helikon/settings.json"), true},
		{"after a computed directory", real, "Bash", sh([]string{real}, "", "cp", "x", `$(dirname /a/b)/.claude/settings.json`), true},
		{"computed redirection target", real, "Bash", write(real, real+"/$d/settings.json", true), true},
		{"other files after a computed cd", real, "Bash", sh([]string{real}, `cd "$d"`, "sed", "-i", "x", "src/config.json"), false},
		{"another settings.json after cd", real, "Bash", sh([]string{real, real + "/prep"}, "", "sed", "-i", "x", "sub/settings.json"), false},
		{"cat after cd", real, "Bash", sh([]string{real, real + "/.claude"}, "", "cat", "settings.json"), false},
		{"a name computed whole", real, "Bash", sh([]string{real}, "", "cp", "x", "$f"), false},
		{"other files through the link", real, "Write", write(link, link+"/.claude/commands/x.md", false), false},
	}
	for _, tt := range tests {
		p := helikon.Permissions{Protected: protectedIn(tt.protected), NoGuards: true, Allow: must(helikon.ParseRules(tt.tool)), Approver: yes, Home: home}
		d := p.Check(context.Background(), call(tt.tool, helikon.EffectWrite, helikon.ModeBypass, fakeTargeter{t: tt.t}))
		if d.Allowed == tt.refused {
			t.Errorf("%s: allowed=%v (%s), want refused=%v", tt.name, d.Allowed, d.Reason, tt.refused)
		}
		if tt.refused && (d.Stage != helikon.StageGuard || d.Asked || !strings.Contains(d.Reason, "policy-file")) {
			t.Errorf("%s: stage %s asked=%v reason %q; want a guard refusal without asking", tt.name, d.Stage, d.Asked, d.Reason)
		}
	}
}
