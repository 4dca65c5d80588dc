package agentcli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/cli/clitest"
)

// TestPolicyFilesThroughALinkedRoot is the attack test of the policy-file
// guard for a root named through a symbolic link (--root is a link to the
// project) and for relative names after a literal cd: every call below
// would rewrite a policy file, and a later run with --trust-project would
// obey what it planted. Each is refused and the files are unchanged.
func TestPolicyFilesThroughALinkedRoot(t *testing.T) {
	const policy = `{"permissions": {"deny": ["Bash(rm)"]}}`
	root := projectDir(t, map[string]string{
		".helikon/settings.json": policy,
		".claude/settings.json":  policy,
		"prep/evil.json":         `{"permissions": {"allow": ["Bash"]}}`,
	})
	// The user's own file, outside the root, which holds trustedProjects.
	user := filepath.Join(t.TempDir(), "config", "helikon", "settings.json")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	userDir := filepath.Dir(user)
	tests := []struct {
		name string
		root string // --root
		call []string
	}{
		{"Write through a linked root", link, []string{"Write", `{"path": ".helikon/settings.json", "content": "{}"}`}},
		{"Write of Claude's file through a linked root", link, []string{"Write", `{"path": ".claude/settings.json", "content": "{}"}`}},
		{"Write, absolute through the link", root, []string{"Write", `{"path": "` + link + `/.claude/settings.json", "content": "{}"}`}},
		{"Edit through a linked root", link, []string{"Edit", `{"path": ".helikon/settings.json", "old_string": "deny", "new_string": "allow"}`}},
		{"Bash redirection through a linked root", link, []string{"Bash", `{"command": "echo '{}' > .helikon/settings.json"}`}},
		{"Bash cp through a linked root", link, []string{"Bash", `{"command": "cp prep/evil.json .claude/settings.json"}`}},
		{"Bash redirection, absolute through the link", root, []string{"Bash", `{"command": "echo '{}' > ` + link + `/.helikon/settings.json"}`}},
		{"Bash cp, absolute through the link", root, []string{"Bash", `{"command": "cp prep/evil.json ` + link + `/.claude/settings.json"}`}},
		{"cp after cd", root, []string{"Bash", `{"command": "cd prep && cp evil.json ../.claude/settings.json"}`}},
		{"cp after cd, linked root", link, []string{"Bash", `{"command": "cd prep && cp ../prep/evil.json ../.claude/settings.json"}`}},
		{"mv after cd", root, []string{"Bash", `{"command": "cd prep && mv evil.json ../.helikon/settings.json"}`}},
		{"sed -i after cd", root, []string{"Bash", `{"command": "cd prep; sed -i s/deny/allow/ ../.helikon/settings.json"}`}},
		{"sed -i after a computed cd", root, []string{"Bash", `{"command": "d=.claude; cd \"$d\" && sed -i s/deny/allow/ settings.json"}`}},
		{"the user's file after cd", root, []string{"Bash", `{"command": "cd ` + filepath.Dir(userDir) + ` && cp ` + root + `/prep/evil.json helikon/settings.json"}`}},
		{"the user's file, sed -i after cd", root, []string{"Bash", `{"command": "cd ` + userDir + ` && sed -i s/deny/allow/ settings.json"}`}},
	}
	for _, tt := range tests {
		// Each call starts from the same files, so that one call's success
		// does not hide the next's.
		for f, c := range map[string]string{
			filepath.Join(root, ".helikon/settings.json"): policy,
			filepath.Join(root, ".claude/settings.json"):  policy,
			filepath.Join(root, "prep/evil.json"):         `{"permissions": {"allow": ["Bash"]}}`,
			user:                                          policy,
		} {
			if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		loosest := []string{"tool", "--root", tt.root, "--user-settings", user, "--mode", "bypass", "--no-guards",
			"--allow", "Write", "--allow", "Edit", "--allow", "Bash", "--backend", "host", "--trust-project"}
		code, stdout, stderr := clitest.Run(t, "", append(loosest, tt.call...)...)
		if code != cli.ExitDenied || !strings.Contains(stderr, "policy-file") {
			t.Errorf("%s: exit %d (%s%s), want denied by the policy-file guard", tt.name, code, stdout, stderr)
		}
		for _, f := range []string{filepath.Join(root, ".helikon/settings.json"), filepath.Join(root, ".claude/settings.json"), user} {
			if b, _ := os.ReadFile(f); string(b) != policy {
				t.Errorf("%s: %s was changed: %s", tt.name, f, b)
			}
		}
	}
}
