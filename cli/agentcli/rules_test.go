package agentcli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/cli/agentcli"
	"github.com/paigasus/helikon/cli/clitest"
	"github.com/paigasus/helikon/provider/openai/openaitest"
	"github.com/paigasus/helikon/toolbox"
)

// TestRuleNamingNoToolRefusesToRun is the attack of issue 34: a deny rule
// spelt bash(rm) matched nothing, so the rm it was meant to stop ran. Every
// command that runs tools now refuses the policy before running anything,
// for the flag and for the same rule in a policy file (with its position).
func TestRuleNamingNoToolRefusesToRun(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		flags  []string
		stderr []string
	}{
		{
			name:   "flag",
			flags:  []string{"--deny", "bash(rm)"},
			stderr: []string{"--deny: deny rule bash(rm): no tool named bash; did you mean Bash?"},
		},
		{
			name:   "project file",
			files:  map[string]string{".helikon/settings.json": "{\"permissions\": {\n  \"deny\": [\"bash(rm)\"]}}"},
			stderr: []string{filepath.Join(".helikon", "settings.json") + ":2:12: deny rule bash(rm): no tool named bash; did you mean Bash?"},
		},
		{
			name:   "claude settings",
			files:  map[string]string{".claude/settings.json": `{"permissions": {"deny": ["bash(rm:*)"]}}`},
			flags:  []string{"--claude-settings"},
			stderr: []string{filepath.Join(".claude", "settings.json") + `:1:27: rule "bash(rm:*)": no tool named bash; did you mean Bash?`},
		},
		{
			name:   "claude settings, bare",
			files:  map[string]string{".claude/settings.json": `{"permissions": {"deny": ["bash"]}}`},
			flags:  []string{"--claude-settings"},
			stderr: []string{filepath.Join(".claude", "settings.json") + ":1:27: deny rule bash: no tool named bash; did you mean Bash?"},
		},
		{
			name:   "misspelt ask",
			flags:  []string{"--ask", "Bsah(rm)"},
			stderr: []string{"--ask: ask rule Bsah(rm): no tool named Bsah; did you mean Bash?"},
		},
		{
			name:   "unknown allow",
			flags:  []string{"--allow", "Shell"},
			stderr: []string{"--allow: allow rule Shell: no tool named Shell (tools: "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"z.txt": "keep"}
			for k, v := range tt.files {
				files[k] = v
			}
			root := projectDir(t, files)
			args := append([]string{"tool", "--backend", "host", "--user-settings", "none", "--root", root}, tt.flags...)
			args = append(args, "Bash", `{"command":"rm z.txt"}`)
			code, stdout, stderr := clitest.Run(t, "", args...)
			if _, err := os.Stat(filepath.Join(root, "z.txt")); err != nil {
				t.Fatalf("the rm ran (exit %d, stdout %q, stderr %q): %v", code, stdout, stderr, err)
			}
			if code != cli.ExitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, cli.ExitUsage, stderr)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
		})
	}
}

// TestRuleNamingNoToolStopsEveryCommand checks the commands other than tool
// that run tools or report the policy.
func TestRuleNamingNoToolStopsEveryCommand(t *testing.T) {
	root := projectDir(t, map[string]string{".helikon/settings.json": `{"permissions": {"deny": ["bash(rm)"]}}`})
	common := []string{"--user-settings", "none", "--root", root}
	t.Run("mcp", func(t *testing.T) {
		code, _, stderr := clitest.Run(t, "", append([]string{"mcp", "--backend", "host"}, common...)...)
		if code != cli.ExitUsage || !strings.Contains(stderr, "did you mean Bash?") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
	t.Run("policy check", func(t *testing.T) {
		code, stdout, _ := clitest.Run(t, "", append([]string{"policy", "check", "--json"}, append(common, "Bash", "rm z.txt")...)...)
		var res agentcli.CheckJSON
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		if code != cli.ExitUsage || len(res.NeverMatches) != 1 || !strings.Contains(res.NeverMatches[0], "settings.json:1:27: deny rule bash(rm): no tool named bash; did you mean Bash?") {
			t.Errorf("exit %d, never_matches %q", code, res.NeverMatches)
		}
		code, stdout, _ = clitest.Run(t, "", append([]string{"policy", "check"}, append(common, "Bash", "rm z.txt")...)...)
		if code != cli.ExitUsage || !strings.Contains(stdout, "NEVER MATCHES") {
			t.Errorf("exit %d, stdout %q", code, stdout)
		}
	})
	t.Run("doctor", func(t *testing.T) {
		code, stdout, _ := clitest.Run(t, "", append([]string{"doctor", "--json"}, common...)...)
		var rep struct {
			Policy struct {
				Rules []struct{ Rule, Problem string }
			}
		}
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		if code != cli.ExitUsage || len(rep.Policy.Rules) != 1 || rep.Policy.Rules[0].Problem != "deny rule bash(rm): no tool named bash; did you mean Bash?" {
			t.Errorf("exit %d, rules %+v", code, rep.Policy.Rules)
		}
	})
}

// TestRulesForToolsOfOtherCommandsAreAccepted: a rule for a built-in tool the
// command does not build, or for an MCP tool outside helikon run, names a
// tool there is, and is no misspelling.
func TestRulesForToolsOfOtherCommandsAreAccepted(t *testing.T) {
	root := projectDir(t, map[string]string{".helikon/settings.json": `{"permissions": {"deny": ["WebSearch(example.com)", "mcp__github__create_issue", "Edit(.git/**)"]}}`})
	code, stdout, stderr := clitest.Run(t, "", "tool", "--backend", "host", "--user-settings", "none", "--root", root, "Bash", `{"command":"echo ok"}`)
	if code != 0 || !strings.Contains(stdout, `"stdout":"ok\n"`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	code, stdout, _ = clitest.Run(t, "", "doctor", "--json", "--user-settings", "none", "--root", root)
	if code != 0 || strings.Contains(stdout, `"problem"`) {
		t.Errorf("doctor: exit %d, %s", code, stdout)
	}
}

// TestBuiltinToolsAreTheRegisteredTools keeps cli.BuiltinTools, which
// helikon doctor checks rules against, equal to the tools agentcli builds.
func TestBuiltinToolsAreTheRegisteredTools(t *testing.T) {
	fs := cli.NewFlagSet("x", "x", nil)
	got := agentcli.AddToolFlags(fs).Names(false)
	if !slices.Equal(got, cli.BuiltinTools) {
		t.Errorf("registered tools %q, cli.BuiltinTools %q", got, cli.BuiltinTools)
	}
	if !slices.Equal(got, toolbox.Names) {
		t.Errorf("registered tools %q, toolbox.Names %q", got, toolbox.Names)
	}
}

// TestRunRefusesRuleNamingNoTool: helikon run, in bypass mode, whose model
// asks for the rm that bash(rm) was meant to stop, refuses to start; a rule
// for a built-in tool this run does not build (WebSearch without a key) is
// accepted.
func TestRunRefusesRuleNamingNoTool(t *testing.T) {
	srv := openaitest.NewServer()
	srv.Func = func(req *openaitest.Request) openaitest.Reply {
		if strings.Contains(string(req.Raw), `"role":"tool"`) {
			return openaitest.Reply{Text: "done"}
		}
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "b", Name: "Bash", Args: `{"command":"rm z.txt"}`}}}
	}
	defer srv.Close()
	for _, tt := range []struct {
		name string
		deny string
		code int
		gone bool
	}{
		{"misspelt", "bash(rm)", cli.ExitUsage, false},
		{"tool not built", "WebSearch(example.com)", cli.ExitOK, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := projectDir(t, map[string]string{"z.txt": "keep"})
			code, stdout, stderr := runAgentCLI(t, runEnv{vars: openaiEnv(t, srv)}, "--root", root, "--backend", "host", "--user-settings", "none", "--mode", "bypass", "--deny", tt.deny, "remove z.txt")
			_, err := os.Stat(filepath.Join(root, "z.txt"))
			if code != tt.code || (err != nil) != tt.gone {
				t.Fatalf("exit %d (want %d), z.txt: %v; stdout %s; stderr %s", code, tt.code, err, stdout, stderr)
			}
			if code == cli.ExitUsage && !strings.Contains(stderr, "--deny: deny rule bash(rm): no tool named bash; did you mean Bash?") {
				t.Errorf("stderr %q", stderr)
			}
		})
	}
}
