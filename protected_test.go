package helikon_test

import (
	"context"
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
