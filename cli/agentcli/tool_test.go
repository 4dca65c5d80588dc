package agentcli_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
)

func TestToolCommandExitCodes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		stdin   string
		args    []string
		code    int
		stdout  string // substring
		errKind string
	}{
		{"ok positional", "", []string{"tool", "add", `{"a":19.99,"b":4.5}`, "--root", dir}, 0, `{"total":24.49}`, ""},
		{"ok stdin", `{"a":1,"b":2}`, []string{"tool", "--root", dir, "add"}, 0, `{"total":3}`, ""},
		{"ok stdin dash", `{"a":1,"b":2}`, []string{"tool", "add", "-"}, 0, `{"total":3}`, ""},
		{"invalid args", "", []string{"tool", "add", `{"a":"x"}`}, 2, `"schema_errors":["missing required field \"b\" (a number)","field \"a\" must be a number, got string \"x\""]`, "invalid_args"},
		{"malformed json", "", []string{"tool", "add", `{"a":`}, 2, `not valid JSON`, "invalid_args"},
		{"deny rule", "", []string{"tool", "--deny", "add", "add", `{"a":1,"b":2}`}, 3, `denied by rule add`, "denied"},
		{"dont-ask without allow", "", []string{"tool", "--mode", "dont-ask", "add", `{"a":1,"b":2}`}, 3, `dont-ask`, "denied"},
		{"dont-ask with allow", "", []string{"tool", "--mode", "dont-ask", "--allow", "add", "add", `{"a":1,"b":2}`}, 0, `{"total":3}`, ""},
		{"plan allows read-only", "", []string{"tool", "--mode", "plan", "lookup_spending", `{"category":"dining","month":"2026-11"}`}, 0, `{"total":312.4,"count":18}`, ""},
		{"unknown tool", "", []string{"tool", "nope", `{}`}, 125, "", ""},
		{"bad mode", "", []string{"tool", "--mode", "yolo", "add", `{}`}, 125, "", ""},
		{"bad rule", "", []string{"tool", "--deny", "Bash(", "add", `{}`}, 125, "", ""},
		{"bad root", "", []string{"tool", "--root", dir + "/missing", "add", `{}`}, 125, "", ""},
		{"no tool name", "", []string{"tool"}, 125, "", ""},
		{"help", "", []string{"tool", "--help"}, 0, "Usage: helikon tool", ""},
		{"unknown command", "", []string{"frobnicate"}, 125, "", ""},
		{"top-level help", "", []string{"--help"}, 0, "Commands:", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := clitest.Run(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout %q lacks %q", stdout, tt.stdout)
			}
			if tt.errKind != "" {
				var doc struct {
					Error struct {
						Kind    string `json:"kind"`
						Message string `json:"message"`
					} `json:"error"`
				}
				if err := json.Unmarshal([]byte(stdout), &doc); err != nil || doc.Error.Kind != tt.errKind || doc.Error.Message == "" {
					t.Errorf("error JSON %q: %v", stdout, err)
				}
				if stderr == "" {
					t.Error("nothing on stderr")
				}
			}
			if code == 125 && stderr == "" {
				t.Error("usage error without a message on stderr")
			}
		})
	}
}
