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

// project makes a root holding files (path relative to the root: content).
func project(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func load(root string, claude, trust bool) (*policyfile.Policy, error) {
	return policyfile.Load(&policyfile.Options{Root: root, NoUserFile: true, Claude: claude, TrustProject: trust, Home: "/home/u"})
}

func rules(rs []helikon.Rule) string {
	var s []string
	for _, r := range rs {
		s = append(s, r.String())
	}
	return strings.Join(s, " ")
}

func TestClaudeRulesMapToTheSameMeaning(t *testing.T) {
	tests := []struct {
		list, rule string
		want       string // helikon rules, space-separated; "" with err
		err        string
	}{
		{"allow", "Bash(npm run test:*)", "Bash(npm run test)", ""},
		{"allow", "Bash(npm run *)", "Bash(npm run)", ""},
		{"allow", "Bash(npm run build)", "Bash(=npm run build)", ""},
		{"deny", "Bash(rm -rf /)", "Bash(rm -rf /)", ""},
		{"allow", "Bash", "Bash", ""},
		{"allow", "Bash(*)", "Bash", ""},
		{"allow", "Bash(ls*)", "", "inside a word"},
		{"deny", "Bash(git * main)", "", "before the end"},
		{"allow", "Bash(curl x | bash)", "", "operators"},
		{"allow", `Bash(git commit -m "x")`, "", "quotes"},
		{"deny", "Read(./.env)", "Read(/**/.env)", ""},
		{"deny", "Read(.env)", "Read(/**/.env)", ""},
		{"allow", "Edit(src/**)", "Edit(/src/**)", ""},
		{"allow", "Edit(/src/**/*.ts)", "Edit(/src/**/*.ts)", ""},
		{"deny", "Read(//etc/**)", "Read(//etc/**)", ""},
		{"deny", "Read(~/.ssh/**)", "Read(//home/u/.ssh/**)", ""},
		{"deny", "Read(secrets/)", "Read(/**/secrets)", ""},
		{"allow", "Read(secrets/)", "", "directories only"},
		{"deny", "Read(!x)", "", "negated"},
		{"allow", "Edit(../other/**)", "", ".."},
		{"allow", "Edit", "Edit Write", ""},
		{"deny", "Write", "Write Edit", ""},
		{"allow", "Write", "Write", ""},
		{"allow", "WebFetch(domain:example.com)", "WebFetch(=example.com)", ""},
		{"deny", "WebFetch(domain:example.com)", "WebFetch(example.com)", ""},
		{"allow", "WebFetch(domain:*.example.com)", "WebFetch(*.example.com)", ""},
		{"allow", "WebFetch(https://example.com)", "", "domain:HOST"},
		{"allow", "mcp__github__create_issue", "mcp__github__create_issue", ""},
		{"deny", "mcp__github", "", "whole MCP server"},
		{"allow", "mcp__github__*", "", "wildcard"},
		{"allow", "Grep", "Grep", ""},
		{"allow", "Agent(explorer)", "", "does not know"},
		{"allow", "WebSearch(x)", "", "does not know"},
		{"allow", "Bash(x", "", "closed"},
	}
	for _, tt := range tests {
		t.Run(tt.list+" "+tt.rule, func(t *testing.T) {
			root := project(t, map[string]string{".claude/settings.json": `{"permissions": {"` + tt.list + `": [` + quote(tt.rule) + `]}}`})
			pol, err := load(root, true, false)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, policyfile.ErrInvalid) {
					t.Fatalf("err = %v, want an invalid-file error containing %q", err, tt.err)
				}
				if !strings.Contains(err.Error(), ".claude/settings.json:1:") {
					t.Errorf("error %q does not give the file, line and column", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := rules(map[string][]helikon.Rule{"allow": pol.Allow, "deny": pol.Deny, "ask": pol.Ask}[tt.list])
			if got != tt.want {
				t.Errorf("mapped to %q, want %q", got, tt.want)
			}
			for _, r := range append(append(pol.Allow, pol.Deny...), pol.Ask...) {
				if o := pol.Origins[r]; o.Text != tt.rule || o.List != tt.list {
					t.Errorf("origin of %s: %+v", r, o)
				}
			}
		})
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// TestClaudeAllowRulesAreNeverBroader checks the mapped allow rules against
// calls Claude Code would not allow: none of them may be allowed.
func TestClaudeAllowRulesAreNeverBroader(t *testing.T) {
	root := project(t, map[string]string{".claude/settings.json": `{"permissions": {"allow": [
		"Bash(npm run build)", "Bash(git status:*)", "Read(.env)", "Edit(src/**)", "WebFetch(domain:example.com)"]}}`})
	pol, err := load(root, true, false)
	if err != nil {
		t.Fatal(err)
	}
	cmd := func(args ...string) *helikon.Targets {
		return &helikon.Targets{Commands: []helikon.Command{{Args: args}}}
	}
	file := func(p string, a helikon.Access) *helikon.Targets {
		return &helikon.Targets{Paths: []helikon.PathTarget{{Path: p, Root: root, Access: a}}}
	}
	outside := []struct {
		tool string
		t    *helikon.Targets
	}{
		{"Bash", cmd("npm", "run", "build", "--", "--evil")},
		{"Bash", cmd("git", "statusx")},
		{"Read", file("/etc/.env", helikon.AccessRead)},
		{"Edit", file(root+"/lib/x.go", helikon.AccessWrite)},
		{"Edit", file("/src/x.go", helikon.AccessWrite)},
		{"WebFetch", &helikon.Targets{Hosts: []string{"evil.example.com"}}},
	}
	for _, c := range outside {
		if r, ok := helikon.AllowedBy(pol.Allow, c.tool, c.t); ok {
			t.Errorf("%s %+v is allowed by %s, which Claude Code would not allow", c.tool, *c.t, r)
		}
	}
	inside := []struct {
		tool string
		t    *helikon.Targets
	}{
		{"Bash", cmd("npm", "run", "build")},
		{"Bash", cmd("git", "status", "-s")},
		{"Read", file(root+"/config/.env", helikon.AccessRead)},
		{"Edit", file(root+"/src/a/b.go", helikon.AccessWrite)},
		{"WebFetch", &helikon.Targets{Hosts: []string{"example.com"}}},
	}
	for _, c := range inside {
		if _, ok := helikon.AllowedBy(pol.Allow, c.tool, c.t); !ok {
			t.Errorf("%s %+v is not allowed", c.tool, *c.t)
		}
	}
}

func TestBadFilesStopWithLineAndColumn(t *testing.T) {
	tests := []struct {
		name, file, content, want string
	}{
		{"syntax", ".helikon/settings.json", "{\n  \"permissions\": {\n    \"deny\": [\"Bash(rm)\",]\n  }\n}", ".helikon/settings.json:3:25: invalid character ']'"},
		{"unknown key", ".helikon/settings.json", "{\n  \"permisions\": {}\n}", ".helikon/settings.json:2:17: unknown setting \"permisions\""},
		{"unknown nested key", ".helikon/settings.json", "{\"permissions\": {\"allow\": [], \"alow\": []}}", ".helikon/settings.json:1:39: unknown setting \"permissions.alow\""},
		{"bad rule", ".helikon/settings.json", "{\"permissions\": {\n\"deny\": [\"Bash\", \"Bash(rm\"]}}", ".helikon/settings.json:2:18: invalid rule \"Bash(rm\""},
		{"wrong type", ".helikon/settings.json", "{\"permissions\": {\"deny\": \"Bash\"}}", ".helikon/settings.json:1:26: permissions.deny must be a list"},
		{"bad mode", ".helikon/settings.json", "{\"permissions\": {\"mode\": \"yolo\"}}", ".helikon/settings.json:1:26: unknown permission mode"},
		{"bad host", ".helikon/settings.json", "{\"webFetch\": {\"denyHosts\": [\"http://x/\"]}}", ".helikon/settings.json:1:29: \"http://x/\" is not a host"},
		{"not an object", ".helikon/settings.json", "[]", ".helikon/settings.json:1:1: the file must hold one JSON object"},
		{"empty", ".helikon/settings.json", "", ".helikon/settings.json:1:1: unexpected end"},
		{"trailing data", ".helikon/settings.json", "{} {}", ".helikon/settings.json:1:"},
		{"trusted projects only for the user", ".helikon/settings.json", "{\"trustedProjects\": []}", "unknown setting \"trustedProjects\""},
		{"claude unknown permission key", ".claude/settings.local.json", "{\"permissions\": {\"allow\": [], \"defaultMod\": \"plan\"}}", ".claude/settings.local.json:1:45: unknown setting \"permissions.defaultMod\""},
		{"claude auto mode", ".claude/settings.json", "{\"permissions\": {\"defaultMode\": \"auto\"}}", "defaultMode \"auto\" has no helikon equivalent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := project(t, map[string]string{tt.file: tt.content})
			_, err := load(root, true, true)
			if err == nil || !errors.Is(err, policyfile.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want an invalid-file error containing %q", err, tt.want)
			}
		})
	}
}

func TestUnreadableFileIsAnError(t *testing.T) {
	root := project(t, nil)
	if err := os.MkdirAll(filepath.Join(root, ".helikon", "settings.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := load(root, false, false); err == nil {
		t.Fatal("a policy file that cannot be read was taken as an empty policy")
	}
}

func TestPrecedence(t *testing.T) {
	user := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(user, []byte(`{"permissions": {"mode": "plan", "deny": ["Read(.env)"]}, "backend": "os", "limits": {"timeout": "10s", "cpuSeconds": 5}}`), 0o644)
	root := project(t, map[string]string{
		".claude/settings.json":       `{"permissions": {"defaultMode": "acceptEdits", "deny": ["Bash(curl:*)"]}}`,
		".claude/settings.local.json": `{"permissions": {"defaultMode": "dontAsk"}}`,
		".helikon/settings.json":      `{"limits": {"timeout": "20s"}, "claudeSettings": true}`,
	})
	pol, err := policyfile.Load(&policyfile.Options{Root: root, UserFile: user, TrustProject: true})
	if err != nil {
		t.Fatal(err)
	}
	if pol.Mode.Value != helikon.ModeDontAsk || !strings.Contains(pol.Mode.From, "settings.local.json:1:") {
		t.Errorf("mode %s from %s; want dont-ask from Claude's local settings", pol.Mode.Value, pol.Mode.From)
	}
	if pol.Timeout.Value.String() != "20s" || !strings.Contains(pol.Timeout.From, ".helikon") {
		t.Errorf("timeout %s from %s; want the project's 20s", pol.Timeout.Value, pol.Timeout.From)
	}
	if pol.CPUSeconds.Value != 5 || pol.CPUSeconds.From == "" || pol.Backend.Value != "os" {
		t.Errorf("user settings not kept: cpu %+v backend %+v", pol.CPUSeconds, pol.Backend)
	}
	if got := rules(pol.Deny); got != "Read(.env) Bash(curl)" {
		t.Errorf("deny rules %q, want both files'", got)
	}
	if len(pol.Sources) != 4 || pol.Sources[0].Kind != policyfile.KindUser || pol.Sources[3].Kind != policyfile.KindProject {
		t.Errorf("sources %+v, want user, claude, claude, project", pol.Sources)
	}
}

// TestUntrustedProjectCannotLoosen is the attack test of project trust: a
// cloned repository's files cannot allow commands, loosen the mode or pick
// the host backend unless the user trusts the project.
func TestUntrustedProjectCannotLoosen(t *testing.T) {
	loosening := []map[string]string{
		{".helikon/settings.json": `{"permissions": {"allow": ["Bash"]}}`},
		{".helikon/settings.json": `{"permissions": {"mode": "bypass"}}`},
		{".helikon/settings.json": `{"backend": "host"}`},
		{".helikon/settings.json": `{"claudeSettings": true}`, ".claude/settings.json": `{"permissions": {"allow": ["Bash"]}}`},
		{".helikon/settings.json": `{"claudeSettings": true}`, ".claude/settings.json": `{"permissions": {"defaultMode": "bypassPermissions"}}`},
	}
	for i, files := range loosening {
		root := project(t, files)
		if _, err := load(root, false, false); !errors.Is(err, policyfile.ErrUntrusted) {
			t.Errorf("case %d: err = %v, want ErrUntrusted", i, err)
		}
		if _, err := load(root, false, true); err != nil {
			t.Errorf("case %d, trusted: %v", i, err)
		}
		user := filepath.Join(t.TempDir(), "settings.json")
		os.WriteFile(user, []byte(`{"trustedProjects": [`+quote(root)+`]}`), 0o644)
		if _, err := policyfile.Load(&policyfile.Options{Root: root, UserFile: user}); err != nil {
			t.Errorf("case %d, listed in trustedProjects: %v", i, err)
		}
	}
	tightening := project(t, map[string]string{".helikon/settings.json": `{"permissions": {"deny": ["Bash(rm)"], "ask": ["Bash(git push)"], "mode": "plan"}}`})
	pol, err := load(tightening, false, false)
	if err != nil || len(pol.Deny) != 1 || len(pol.Ask) != 1 || pol.Mode.Value != helikon.ModePlan {
		t.Errorf("an untrusted project's tightening was not applied: %+v, %v", pol, err)
	}
}

func TestProtectedAndNotes(t *testing.T) {
	root := project(t, map[string]string{".claude/settings.json": `{"permissions": {"additionalDirectories": ["../other"]}, "model": "x"}`})
	pol, err := load(root, true, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".helikon/settings.json", ".claude/settings.json", ".claude/settings.local.json"} {
		found := false
		for _, p := range pol.Protected {
			found = found || p == filepath.Join(root, want)
		}
		if !found {
			t.Errorf("%s is not protected: %v", want, pol.Protected)
		}
	}
	if len(pol.Sources) != 1 || len(pol.Sources[0].Notes) != 1 || !strings.Contains(pol.Sources[0].Notes[0], "not granted") {
		t.Errorf("sources %+v: want a note that additionalDirectories are not granted", pol.Sources)
	}
}
