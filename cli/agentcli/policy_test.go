package agentcli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"

	"github.com/paigasus/helikon/cli/agentcli"

	"github.com/paigasus/helikon/cli"
)

// projectDir makes a root holding files (path relative to it: content).
func projectDir(t *testing.T, files map[string]string) string {
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

const claudeSettings = `{
  "permissions": {
    "deny": ["Read(./.env)", "Bash(curl:*)", "mcp__fs__move_file"],
    "ask": ["Bash(git push:*)"],
    "allow": ["Bash(npm run test:*)", "Edit(src/**)", "WebFetch(domain:example.com)"],
    "defaultMode": "acceptEdits"
  }
}`

func TestPolicyCheck(t *testing.T) {
	root := projectDir(t, map[string]string{
		".claude/settings.json":  claudeSettings,
		".helikon/settings.json": `{"permissions": {"deny": ["Bash(rm)"]}}`,
	})
	tests := []struct {
		name     string
		args     []string
		decision string
		stage    string
		rule     string
		from     string
	}{
		{"claude prefix allow", []string{"--claude-settings", "Bash", "npm run test -- --watch=false"}, "allow", "allow_rule", "Bash(npm run test)", ".claude/settings.json:5:15"},
		{"claude ask beats accept-edits and allow", []string{"--claude-settings", "--allow", "Bash", "Bash", "git push origin"}, "ask", "ask_rule", "Bash(git push)", ".claude/settings.json:4:13"},
		{"claude deny of a bare name", []string{"--claude-settings", "Read", "config/.env"}, "deny", "deny_rule", "Read(/**/.env)", ".claude/settings.json:3:14"},
		{"project deny", []string{"Bash", "rm -f x"}, "deny", "deny_rule", "Bash(rm)", ".helikon/settings.json:1:27"},
		{"flag deny", []string{"--deny", "Bash(git)", "Bash", "git status"}, "deny", "deny_rule", "Bash(git)", "flag"},
		{"without --claude-settings they do not apply", []string{"Bash", "npm run test"}, "ask", "approval", "", ""},
		{"accept-edits from the file", []string{"--claude-settings", "Write", "lib/x.go"}, "allow", "mode", "", ""},
		{"--mode overrides the file", []string{"--claude-settings", "--mode", "plan", "Write", "lib/x.go"}, "deny", "mode", "", ""},
		{"guard", []string{"Bash", "echo x > .claude/settings.local.json"}, "deny", "guard", "", ""},
		{"exact host", []string{"--claude-settings", "--mode", "dont-ask", "WebFetch", "https://api.example.com/"}, "deny", "mode", "", ""},
		{"json args", []string{"Read", `{"path": "README.md"}`}, "allow", "policy", "", ""},
		{"mcp tool, side effect by default", []string{"mcp__fs__write_file", `{"path": "x"}`}, "ask", "approval", "", ""},
		{"mcp tool, read-only", []string{"--effect", "read_only", "mcp__fs__read_file", `{"path": "x"}`}, "allow", "policy", "", ""},
		{"mcp tool, deny rule", []string{"--deny", "mcp__fs__write_file", "--effect", "read_only", "mcp__fs__write_file", `{}`}, "deny", "deny_rule", "mcp__fs__write_file", "flag"},
		{"mcp tool, deny rule of another server", []string{"--deny", "mcp__git__write_file", "--wrap", "mcp__fs__write_file", `{}`}, "allow", "policy", "", ""},
		{"mcp tool, Claude Code's rule", []string{"--claude-settings", "mcp__fs__move_file", `{}`}, "deny", "deny_rule", "mcp__fs__move_file", ".claude/settings.json:3:46"},
		{"mcp tool, as mcp wrap", []string{"--wrap", "mcp__fs__write_file", `{}`}, "allow", "policy", "", ""},
		{"mcp tool, as mcp wrap, ask rule", []string{"--wrap", "--ask", "mcp__fs__write_file", "mcp__fs__write_file", `{}`}, "ask", "ask_rule", "mcp__fs__write_file", "flag"},
		{"mcp tool, plan mode and annotations", []string{"--wrap", "--mode", "plan", "mcp__fs__write_file", `{}`}, "deny", "mode", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"policy", "check", "--json", "--root", root, "--user-settings", "none"}, tt.args...)
			code, stdout, stderr := clitest.Run(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var res agentcli.CheckJSON
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			if res.Decision != tt.decision || string(res.Stage) != tt.stage || res.Rule != tt.rule || !strings.HasSuffix(res.From, tt.from) {
				t.Errorf("got %s by %s rule %q from %q (%s); want %s by %s rule %q from …%q", res.Decision, res.Stage, res.Rule, res.From, res.Reason, tt.decision, tt.stage, tt.rule, tt.from)
			}
		})
	}
}

func TestPolicyCheckHumanOutput(t *testing.T) {
	root := projectDir(t, map[string]string{".claude/settings.json": claudeSettings})
	code, stdout, _ := clitest.Run(t, "", "policy", "check", "--root", root, "--user-settings", "none", "--claude-settings", "Bash", "npm run test -- --watch=false")
	if code != 0 || !strings.Contains(stdout, "allow: Bash") || !strings.Contains(stdout, "decided by: allow rule Bash(npm run test)") || !strings.Contains(stdout, "written Bash(npm run test:*)") {
		t.Errorf("exit %d, output:\n%s", code, stdout)
	}
}

func TestBadPolicyFilesStopCommands(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		flags []string
		want  string
	}{
		{"malformed", map[string]string{".helikon/settings.json": "{\n  \"permissions\": {\"deny\": [\"Bash(rm)\" \"x\"]}\n}"}, nil, ".helikon/settings.json:2:"},
		{"unknown claude form", map[string]string{".claude/settings.json": `{"permissions": {"allow": ["Bash(ls*)"]}}`}, []string{"--claude-settings"}, `.claude/settings.json:1:28: rule "Bash(ls*)"`},
		{"untrusted loosening", map[string]string{".helikon/settings.json": `{"permissions": {"allow": ["Bash"]}}`}, nil, "--trust-project"},
		{"bypass disabled", map[string]string{".claude/settings.json": `{"permissions": {"disableBypassPermissionsMode": "disable"}}`}, []string{"--claude-settings", "--mode", "bypass"}, "bypass mode is disabled"},
		{"unknown backend", map[string]string{".helikon/settings.json": `{"backend": "nope"}`}, nil, `unknown backend "nope"`},
	}
	for _, tt := range tests {
		for _, cmd := range [][]string{{"policy", "check"}, {"tool"}, {"mcp"}, {"run", "--model", "openai:x"}, {"exec"}} {
			if cmd[0] == "exec" && slices.Contains(tt.flags, "--mode") {
				continue // exec has no mode: it runs the operator's command
			}
			t.Run(tt.name+" "+cmd[0], func(t *testing.T) {
				root := projectDir(t, tt.files)
				args := append(append(append(cmd, "--root", root, "--user-settings", "none"), tt.flags...), "Read", `{"path": "x"}`)
				switch cmd[0] {
				case "mcp":
					args = args[:len(args)-2]
				case "exec":
					args = append(args[:len(args)-2], "--", "true")
				}
				code, _, stderr := clitest.Run(t, "", args...)
				if code != cli.ExitUsage || !strings.Contains(stderr, tt.want) {
					t.Errorf("exit %d, stderr %q; want 125 and %q", code, stderr, tt.want)
				}
			})
		}
	}
}

func TestDoctorShowsPolicyPrecedence(t *testing.T) {
	user := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(user, []byte(`{"permissions": {"mode": "plan"}, "limits": {"timeout": "9s"}}`), 0o644)
	root := projectDir(t, map[string]string{
		".claude/settings.json":  claudeSettings,
		".helikon/settings.json": `{"permissions": {"mode": "dont-ask", "deny": ["Bash(rm)"]}}`,
	})
	code, stdout, stderr := clitest.Run(t, "", "doctor", "--root", root, "--user-settings", user, "--claude-settings")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"user     " + user + " (read)",
		"claude   " + filepath.Join(root, ".claude/settings.json") + " (read)",
		"project  " + filepath.Join(root, ".helikon/settings.json") + " (read)",
		"mode:           dont-ask (" + filepath.Join(root, ".helikon/settings.json") + ":1:",
		"timeout:        9s (" + user + ":1:",
		"deny  Bash(curl) (" + filepath.Join(root, ".claude/settings.json") + ":3:",
		"written Bash(curl:*)",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, stdout)
		}
	}
	if i, j := strings.Index(stdout, "user     "), strings.Index(stdout, "project  "); i < 0 || j < i {
		t.Error("files not listed lowest precedence first")
	}
	code, _, _ = clitest.Run(t, "", "doctor", "--root", projectDir(t, map[string]string{".helikon/settings.json": "{"}), "--user-settings", "none")
	if code != cli.ExitUsage {
		t.Errorf("doctor with an invalid policy file: exit %d, want 125", code)
	}
}

// TestAgentCannotWriteItsPolicyFiles is the CLI's attack test of the
// policy-file guard: with every loosening flag given, a Write of a policy file
// or a command writing one is refused and the file is unchanged.
func TestAgentCannotWriteItsPolicyFiles(t *testing.T) {
	root := projectDir(t, map[string]string{".helikon/settings.json": `{"permissions": {"deny": ["Bash(rm)"]}}`})
	loosest := []string{"--root", root, "--user-settings", "none", "--mode", "bypass", "--no-guards", "--allow", "Write", "--allow", "Bash", "--backend", "host", "--trust-project"}
	for _, call := range [][]string{
		{"Write", `{"path": ".helikon/settings.json", "content": "{}"}`},
		{"Write", `{"path": ".claude/settings.local.json", "content": "{\"permissions\": {\"allow\": [\"Bash\"]}}"}`},
		{"Bash", `{"command": "echo '{}' > .helikon/settings.json"}`},
		{"Bash", `{"command": "cp /dev/null .helikon/settings.json"}`},
	} {
		code, _, stderr := clitest.Run(t, "", append(append([]string{"tool"}, loosest...), call...)...)
		if code != cli.ExitDenied || !strings.Contains(stderr, "policy-file") {
			t.Errorf("%s %s: exit %d (%s), want denied by the policy-file guard", call[0], call[1], code, stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(root, ".helikon/settings.json")); !strings.Contains(string(b), "Bash(rm)") {
		t.Errorf("the policy file was changed: %s", b)
	}
	if _, err := os.Stat(filepath.Join(root, ".claude")); err == nil {
		t.Error("a Claude settings file was created")
	}
}

// TestMCPDenyRuleMustNameARunTool: a deny rule for an MCP tool that the run
// does not have would deny nothing; run refuses to start instead.
func TestMCPDenyRuleMustNameARunTool(t *testing.T) {
	root := projectDir(t, map[string]string{".claude/settings.json": `{"permissions": {"deny": ["mcp__github__delete_repo"]}}`})
	code, _, stderr := clitest.Run(t, "", "run", "--root", root, "--user-settings", "none", "--claude-settings", "--backend", "host", "--model", "ollama:x", "hello")
	if code != cli.ExitUsage || !strings.Contains(stderr, "--mcp-prefix mcp__github__") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

func TestExecTakesTheBackendAndLimitsFromTheFiles(t *testing.T) {
	root := projectDir(t, map[string]string{".helikon/settings.json": `{"backend": "host", "limits": {"timeout": "50ms"}}`})
	code, _, stderr := clitest.Run(t, "", "exec", "--root", root, "--user-settings", "none", "--trust-project", "--", "sleep", "5")
	if code != cli.ExitTimeout {
		t.Errorf("exit %d (%s), want the file's timeout on the file's backend", code, stderr)
	}
	code, _, stderr = clitest.Run(t, "", "exec", "--root", root, "--user-settings", "none", "--", "true")
	if code != cli.ExitUsage || !strings.Contains(stderr, "backend host") {
		t.Errorf("untrusted project picking the host backend: exit %d (%s), want 125", code, stderr)
	}
}

// TestPolicyCheckNamesTheRuleThatMatched: the rule policy check prints is
// one that matched the call, and a line several rules allowed together
// names the rule of each command.
func TestPolicyCheckNamesTheRuleThatMatched(t *testing.T) {
	root := projectDir(t, nil)
	flags := []string{"--root", root, "--user-settings", "none", "--mode", "dont-ask", "--allow", "Bash(git status)", "--allow", "Bash(touch)"}
	code, stdout, stderr := clitest.Run(t, "", append(append([]string{"policy", "check", "--json"}, flags...), "Bash", "touch x")...)
	var res agentcli.CheckJSON
	if err := json.Unmarshal([]byte(stdout), &res); code != 0 || err != nil {
		t.Fatalf("exit %d, %v: %s %s", code, err, stdout, stderr)
	}
	if res.Decision != "allow" || res.Rule != "Bash(touch)" || res.From != "flag" {
		t.Errorf("decided %s by %q from %q, want allow by Bash(touch) from flag", res.Decision, res.Rule, res.From)
	}
	code, stdout, _ = clitest.Run(t, "", append(append([]string{"policy", "check"}, flags...), "Bash", "git status && touch x")...)
	if code != 0 || !strings.Contains(stdout, `Bash(git status) (flag) for "git status"`) || !strings.Contains(stdout, `Bash(touch) (flag) for "touch x"`) {
		t.Errorf("exit %d, output does not name the rule of each command:\n%s", code, stdout)
	}
}

// TestUntrustedProjectCannotLoosenUserSettings: the CLI stops when an
// untrusted project's file loosens the user's mode, and takes a tighter one.
func TestUntrustedProjectCannotLoosenUserSettings(t *testing.T) {
	user := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(user, []byte(`{"permissions": {"mode": "plan"}}`), 0o644)
	root := projectDir(t, map[string]string{".helikon/settings.json": `{"permissions": {"mode": "default"}}`})
	code, _, stderr := clitest.Run(t, "", "policy", "check", "--root", root, "--user-settings", user, "Write", "x")
	if code != cli.ExitUsage || !strings.Contains(stderr, "mode default") || !strings.Contains(stderr, "--trust-project") {
		t.Errorf("exit %d, stderr %q; want 125 naming mode default", code, stderr)
	}
	code, stdout, _ := clitest.Run(t, "", "policy", "check", "--root", root, "--user-settings", user, "--trust-project", "Write", "x")
	if code != 0 || !strings.Contains(stdout, "in default mode") {
		t.Errorf("trusted: exit %d, output %s", code, stdout)
	}
	os.WriteFile(filepath.Join(root, ".helikon/settings.json"), []byte(`{"permissions": {"mode": "dontAsk"}}`), 0o644)
	code, stdout, _ = clitest.Run(t, "", "policy", "check", "--root", root, "--user-settings", user, "Write", "x")
	if code != 0 || !strings.Contains(stdout, "in dont-ask mode") {
		t.Errorf("tighter: exit %d, output %s", code, stdout)
	}
}

// TestPolicyCheckRefusesBadMCPNames: policy check names what is wrong with
// an MCP tool's name or effect.
func TestPolicyCheckRefusesBadMCPNames(t *testing.T) {
	for _, args := range [][]string{
		{"mcp__fs", "{}"},
		{"mcp____x", "{}"},
		{"--effect", "write", "mcp__fs__write_file", "{}"},
		{"--effect", "read_only", "Read", "x"},
		{"mcp__fs__read_file", "not json"},
	} {
		code, _, stderr := clitest.Run(t, "", append([]string{"policy", "check", "--root", t.TempDir(), "--user-settings", "none"}, args...)...)
		if code != cli.ExitUsage || stderr == "" {
			t.Errorf("%q: exit %d, %s", args, code, stderr)
		}
	}
}

// TestDoctorShowsMCPContainment: doctor names each configured MCP server
// and says whether it runs contained.
func TestDoctorShowsMCPContainment(t *testing.T) {
	root := projectDir(t, map[string]string{".mcp.json": `{"mcpServers": {
		"bare": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."]},
		"wrapped": {"command": "/usr/local/bin/helikon", "args": ["mcp", "wrap", "--name", "fs", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "."]},
		"remote": {"type": "http", "url": "https://mcp.example.com/mcp"}
	}}`})
	code, stdout, stderr := clitest.Run(t, "", "doctor", "--json", "--root", root, "--user-settings", "none", "--mcp", "my-server --flag")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rep struct {
		Servers []cli.MCPServerReport `json:"mcp_servers"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]cli.MCPServerReport{}
	for _, s := range rep.Servers {
		got[s.Name] = s
	}
	for _, tc := range []struct {
		name, want string
		contained  bool
	}{
		{"bare", "UNCONTAINED", false},
		{"wrapped", "helikon mcp wrap", true},
		{"remote", "remote (HTTP)", false},
		{"my-server --flag", "contained by helikon run", true},
	} {
		s, ok := got[tc.name]
		if !ok || !strings.Contains(s.Containment, tc.want) || (s.Contained != tc.contained && !strings.Contains(s.Containment, "REFUSED")) {
			t.Errorf("%s: %+v, want %q contained=%v", tc.name, s, tc.want, tc.contained)
		}
	}
	code, stdout, _ = clitest.Run(t, "", "doctor", "--root", root, "--user-settings", "none", "--mcp", "my-server", "--mcp-unsandboxed")
	if code != 0 || !strings.Contains(stdout, "bare (") || !strings.Contains(stdout, "UNCONTAINED (--mcp-unsandboxed)") {
		t.Errorf("exit %d, output:\n%s", code, stdout)
	}
}
