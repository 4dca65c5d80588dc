package policyfile_test

import (
	"errors"
	"fmt"
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

func load(root string, claude, trust bool) (*policyfile.Settings, error) {
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
		{"allow", "Grep", "", ""},            // Claude Code's own tool: noted, not applied
		{"allow", "Agent(explorer)", "", ""}, // the same
		// helikon's background-command tools: Claude Code's rules for them apply.
		{"deny", "KillShell", "KillShell", ""},
		{"ask", "BashOutput", "BashOutput", ""},
		{"deny", "KillBash", "KillShell", ""}, // KillShell's older name
		// Tool names are not case-folded: a lowercase spelling of a mapped
		// tool is refused by name, never mapped.
		{"deny", "bash(rm:*)", "", "no tool named bash; did you mean Bash?"},
		{"deny", "read(./.env)", "", "did you mean Read?"},
		{"deny", "webfetch(domain:example.com)", "", "did you mean WebFetch?"},
		{"deny", "Bsh(rm)", "", "did you mean Bash?"},
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
		{"bad hide path", ".helikon/settings.json", "{\"sandbox\": {\"hidePaths\": [\".ssh\", \"../x\"]}}", ".helikon/settings.json:1:36: \"../x\": write the path plainly"},
		{"empty hide path", ".helikon/settings.json", "{\"sandbox\": {\"hidePaths\": [\"\"]}}", "sandbox.hidePaths holds paths"},
		{"cache directory", ".helikon/settings.json", "{\"sandbox\": {\"caches\": \"/home/u/.cache\"}}", "want session (no sharing), project or user"},
		{"cache directory key", ".helikon/settings.json", "{\"sandbox\": {\"cacheDir\": \"/tmp/x\"}}", "cacheDir"},
		{"unknown sandbox key", ".helikon/settings.json", "{\"sandbox\": {\"showPaths\": []}}", "unknown setting \"sandbox.showPaths\""},
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

// TestUntrustedProjectOnlyTightensSettings is the attack test of project
// trust for single settings: an untrusted project's file (and Claude's files
// that it asks to be read) may make each setting tighter than what the
// user's file and the trusted files make, never looser, and fails naming
// what it would loosen; a trusted project's value applies either way.
func TestUntrustedProjectOnlyTightensSettings(t *testing.T) {
	setting := func(pol *policyfile.Settings, name string) (string, string) {
		switch name {
		case "mode":
			return pol.Mode.Value.String(), pol.Mode.From
		case "backend":
			return pol.Backend.Value, pol.Backend.From
		case "timeout":
			return pol.Timeout.Value.String(), pol.Timeout.From
		case "cpu":
			return fmt.Sprint(pol.CPUSeconds.Value), pol.CPUSeconds.From
		case "fsize":
			return fmt.Sprint(pol.FileSize.Value), pol.FileSize.From
		case "mem":
			return fmt.Sprint(pol.Memory.Value), pol.Memory.From
		case "hosts":
			return strings.Join(pol.AllowHosts.Value, " "), pol.AllowHosts.From
		case "deny hosts":
			return strings.Join(pol.DenyHosts, " "), ""
		case "hide paths":
			return strings.Join(pol.HidePaths, " "), ""
		case "caches":
			return pol.Caches.Value, pol.Caches.From
		}
		panic(name)
	}
	const (
		helikonFile = ".helikon/settings.json"
		claudeFile  = ".claude/settings.json"
		claudeLocal = ".claude/settings.local.json"
	)
	tests := []struct {
		name    string
		user    string            // the user's file, "" for none
		files   map[string]string // the project's files
		claude  bool              // Options.Claude: Claude's files are trusted
		setting string
		loosens string // "" when the untrusted project may have its way, else what the error names
		want    string // the setting's value, untrusted when loosens is "", trusted otherwise
		from    string // where it comes from: user, project, claude, claude-local or "" (no file)
	}{
		{"mode looser than the user's", `{"permissions": {"mode": "plan"}}`, map[string]string{helikonFile: `{"permissions": {"mode": "default"}}`}, false, "mode", "mode default", "default", "project"},
		{"mode tighter than the user's", `{"permissions": {"mode": "plan"}}`, map[string]string{helikonFile: `{"permissions": {"mode": "dontAsk"}}`}, false, "mode", "", "dont-ask", "project"},
		{"mode plan below dont-ask", `{"permissions": {"mode": "dontAsk"}}`, map[string]string{helikonFile: `{"permissions": {"mode": "plan"}}`}, false, "mode", "mode plan", "plan", "project"},
		{"accept-edits over no mode", "", map[string]string{helikonFile: `{"permissions": {"mode": "acceptEdits"}}`}, false, "mode", "mode accept-edits", "accept-edits", "project"},
		{"accept-edits under the user's bypass", `{"permissions": {"mode": "bypass"}}`, map[string]string{helikonFile: `{"permissions": {"mode": "acceptEdits"}}`}, false, "mode", "", "accept-edits", "project"},
		{"bypass under the user's accept-edits", `{"permissions": {"mode": "acceptEdits"}}`, map[string]string{helikonFile: `{"permissions": {"mode": "bypass"}}`}, false, "mode", "mode bypass", "bypass", "project"},
		{"default over no mode", "", map[string]string{helikonFile: `{"permissions": {"mode": "default"}}`}, false, "mode", "", "default", "project"},
		{"untrusted Claude mode looser than the user's", `{"permissions": {"mode": "plan"}}`, map[string]string{helikonFile: `{"claudeSettings": true}`, claudeFile: `{"permissions": {"defaultMode": "default"}}`}, false, "mode", "mode default", "default", "claude"},
		{"Claude's local file over Claude's", `{"permissions": {"mode": "plan"}}`, map[string]string{helikonFile: `{"claudeSettings": true}`, claudeFile: `{"permissions": {"defaultMode": "dontAsk"}}`, claudeLocal: `{"permissions": {"defaultMode": "plan"}}`}, false, "mode", "", "plan", "claude-local"},
		{"trusted Claude mode over the user's", `{"permissions": {"mode": "plan"}}`, map[string]string{claudeFile: `{"permissions": {"defaultMode": "acceptEdits"}}`}, true, "mode", "", "accept-edits", "claude"},
		{"project tighter than trusted Claude", `{"permissions": {"mode": "dontAsk"}}`, map[string]string{claudeFile: `{"permissions": {"defaultMode": "acceptEdits"}}`, helikonFile: `{"permissions": {"mode": "plan"}}`}, true, "mode", "", "plan", "project"},
		{"project looser than trusted Claude", "", map[string]string{claudeFile: `{"permissions": {"defaultMode": "plan"}}`, helikonFile: `{"permissions": {"mode": "default"}}`}, true, "mode", "mode default", "default", "project"},

		{"host backend", "", map[string]string{helikonFile: `{"backend": "host"}`}, false, "backend", "backend host", "host", "project"},
		{"contained backend over none", "", map[string]string{helikonFile: `{"backend": "forkd"}`}, false, "backend", "", "forkd", "project"},
		{"another backend than the user's", `{"backend": "forkd"}`, map[string]string{helikonFile: `{"backend": "os"}`}, false, "backend", "backend os", "os", "project"},
		{"the user's backend", `{"backend": "host"}`, map[string]string{helikonFile: `{"backend": "host"}`}, false, "backend", "", "host", "project"},

		{"timeout longer than the user's", `{"limits": {"timeout": "10s"}}`, map[string]string{helikonFile: `{"limits": {"timeout": "20s"}}`}, false, "timeout", "limits.timeout 20s", "20s", "project"},
		{"timeout shorter than the user's", `{"limits": {"timeout": "10s"}}`, map[string]string{helikonFile: `{"limits": {"timeout": "5s"}}`}, false, "timeout", "", "5s", "project"},
		{"timeout longer than the default", "", map[string]string{helikonFile: `{"limits": {"timeout": "1m"}}`}, false, "timeout", "limits.timeout 1m0s", "1m0s", "project"},
		{"timeout shorter than the default", "", map[string]string{helikonFile: `{"limits": {"timeout": "10s"}}`}, false, "timeout", "", "10s", "project"},
		{"zero timeout is the default", `{"limits": {"timeout": "10s"}}`, map[string]string{helikonFile: `{"limits": {"timeout": "0s"}}`}, false, "timeout", "", "10s", "user"},

		{"cpu above the default", "", map[string]string{helikonFile: `{"limits": {"cpuSeconds": 100}}`}, false, "cpu", "limits.cpuSeconds 100", "100", "project"},
		{"cpu below the default", "", map[string]string{helikonFile: `{"limits": {"cpuSeconds": 20}}`}, false, "cpu", "", "20", "project"},
		{"cpu below the default of the user's timeout", `{"limits": {"timeout": "2m"}}`, map[string]string{helikonFile: `{"limits": {"cpuSeconds": 100}}`}, false, "cpu", "", "100", "project"},
		{"cpu above the user's", `{"limits": {"cpuSeconds": 5}}`, map[string]string{helikonFile: `{"limits": {"cpuSeconds": 10}}`}, false, "cpu", "limits.cpuSeconds 10", "10", "project"},

		{"file size above the default", "", map[string]string{helikonFile: `{"limits": {"fileSizeBytes": 2147483648}}`}, false, "fsize", "limits.fileSizeBytes 2147483648", "2147483648", "project"},
		{"file size below the default", "", map[string]string{helikonFile: `{"limits": {"fileSizeBytes": 1048576}}`}, false, "fsize", "", "1048576", "project"},
		{"file size above the user's", `{"limits": {"fileSizeBytes": 1048576}}`, map[string]string{helikonFile: `{"limits": {"fileSizeBytes": 2097152}}`}, false, "fsize", "limits.fileSizeBytes 2097152", "2097152", "project"},

		{"memory over none", "", map[string]string{helikonFile: `{"limits": {"memoryBytes": 1073741824}}`}, false, "mem", "", "1073741824", "project"},
		{"memory above the user's", `{"limits": {"memoryBytes": 1073741824}}`, map[string]string{helikonFile: `{"limits": {"memoryBytes": 2147483648}}`}, false, "mem", "limits.memoryBytes 2147483648", "2147483648", "project"},
		{"memory below the user's", `{"limits": {"memoryBytes": 1073741824}}`, map[string]string{helikonFile: `{"limits": {"memoryBytes": 1048576}}`}, false, "mem", "", "1048576", "project"},

		{"hosts over any host", "", map[string]string{helikonFile: `{"webFetch": {"allowHosts": ["example.com"]}}`}, false, "hosts", "", "example.com", "project"},
		{"hosts within the user's", `{"webFetch": {"allowHosts": ["example.com", "docs.rs"]}}`, map[string]string{helikonFile: `{"webFetch": {"allowHosts": ["api.example.com", "*.example.com"]}}`}, false, "hosts", "", "api.example.com *.example.com", "project"},
		{"a host outside the user's", `{"webFetch": {"allowHosts": ["example.com"]}}`, map[string]string{helikonFile: `{"webFetch": {"allowHosts": ["api.example.com", "evil.test"]}}`}, false, "hosts", "webFetch.allowHosts evil.test", "api.example.com evil.test", "project"},
		{"a domain over the user's subdomains", `{"webFetch": {"allowHosts": ["*.example.com"]}}`, map[string]string{helikonFile: `{"webFetch": {"allowHosts": ["example.com"]}}`}, false, "hosts", "webFetch.allowHosts example.com", "example.com", "project"},
		{"denied hosts add up", `{"webFetch": {"denyHosts": ["a.test"]}}`, map[string]string{helikonFile: `{"webFetch": {"denyHosts": ["b.test"]}}`}, false, "deny hosts", "", "a.test b.test", ""},
		{"hidden paths add up", `{"sandbox": {"hidePaths": [".secrets", "/srv/keys"]}}`, map[string]string{helikonFile: `{"sandbox": {"hidePaths": ["~/.config/app/token", ".secrets"]}}`}, false, "hide paths", "", ".secrets /srv/keys ~/.config/app/token", ""},

		// Shared caches reach later sessions: only an operator (the user's
		// file, a trusted project) turns sharing on or widens it.
		{"project turns on shared caches", "", map[string]string{helikonFile: `{"sandbox": {"caches": "project"}}`}, false, "caches", "sandbox.caches project", "project", "project"},
		{"project widens project caches to user", `{"sandbox": {"caches": "project"}}`, map[string]string{helikonFile: `{"sandbox": {"caches": "user"}}`}, false, "caches", "sandbox.caches user", "user", "project"},
		{"project keeps the user's sharing", `{"sandbox": {"caches": "project"}}`, map[string]string{helikonFile: `{"sandbox": {"caches": "project"}}`}, false, "caches", "", "project", "project"},
		{"project turns sharing off", `{"sandbox": {"caches": "user"}}`, map[string]string{helikonFile: `{"sandbox": {"caches": "session"}}`}, false, "caches", "", "session", "project"},
		{"the user's file shares", `{"sandbox": {"caches": "user"}}`, nil, false, "caches", "", "user", "user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := project(t, tt.files)
			user := filepath.Join(t.TempDir(), "settings.json")
			if tt.user != "" {
				if err := os.WriteFile(user, []byte(tt.user), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			from := map[string]string{"user": user + ":", "project": filepath.Join(root, helikonFile) + ":", "claude": filepath.Join(root, claudeFile) + ":", "claude-local": filepath.Join(root, claudeLocal) + ":", "": ""}[tt.from]
			check := func(how string, pol *policyfile.Settings) {
				t.Helper()
				v, f := setting(pol, tt.setting)
				if v != tt.want || !strings.HasPrefix(f, from) || (from == "") != (f == "") {
					t.Errorf("%s: %s = %q from %q, want %q from %s", how, tt.setting, v, f, tt.want, tt.from)
				}
			}
			pol, err := policyfile.Load(&policyfile.Options{Root: root, UserFile: user, Claude: tt.claude})
			switch {
			case tt.loosens == "" && err != nil:
				t.Fatalf("untrusted: %v", err)
			case tt.loosens == "":
				check("untrusted", pol)
			case !errors.Is(err, policyfile.ErrUntrusted) || !strings.Contains(err.Error(), tt.loosens):
				t.Fatalf("untrusted: err = %v, want ErrUntrusted naming %q", err, tt.loosens)
			case !strings.Contains(err.Error(), from):
				t.Errorf("untrusted: error %q does not name where the setting is written (%s)", err, from)
			}
			pol, err = policyfile.Load(&policyfile.Options{Root: root, UserFile: user, Claude: tt.claude, TrustProject: true})
			if err != nil {
				t.Fatalf("trusted: %v", err)
			}
			check("trusted", pol)
		})
	}
}

// TestClaudeOnlyToolsAreNotedNotApplied: rules naming Claude Code's own
// tools that helikon lacks (allow Grep, deny Task) are not applied and each
// is noted with where it is written; the same names in another case are not
// skipped, so the rule check refuses them as naming no tool.
func TestClaudeOnlyToolsAreNotedNotApplied(t *testing.T) {
	root := project(t, map[string]string{".claude/settings.json": `{"permissions": {"allow": ["Grep", "Glob(src/**)", "Read(src/**)"], "deny": ["Task", "grep"]}}`})
	pol, err := load(root, true, false)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	for _, s := range pol.Sources {
		notes = append(notes, s.Notes...)
	}
	joined := strings.Join(notes, "\n")
	if len(notes) != 3 || !strings.Contains(joined, `settings.json:1:28: allow rule "Grep" is not applied`) || !strings.Contains(joined, `deny rule "Task" is not applied`) {
		t.Errorf("notes %q: want one per rule naming Claude Code's own tool, with its position", notes)
	}
	for _, r := range append(append([]helikon.Rule{}, pol.Allow...), pol.Deny...) {
		if r.Tool == "Grep" || r.Tool == "Glob" || r.Tool == "Task" {
			t.Errorf("rule %s of Claude Code's own tool was applied", r)
		}
	}
	if len(pol.Deny) != 1 || pol.Deny[0].Tool != "grep" {
		t.Errorf("deny %v: want grep kept, for the rule check to refuse by name", pol.Deny)
	}
}
