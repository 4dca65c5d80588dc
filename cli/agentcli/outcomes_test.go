package agentcli_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
)

// TestOutcomeTable walks every command through its failure modes and checks
// each against README's table: exit 0 ok, 1 other, 2 invalid arguments, 3
// denied, 124 timeout, 125 usage or a protection unavailable; a command that
// promises JSON (tool) prints its failures as {"error":{"kind":…}} on
// stdout; every usage error says what is wrong on stderr, with the usage.
func TestOutcomeTable(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(root+"/a.txt", []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	const (
		none     = ""  // stdout must be empty
		anything = "*" // stdout is not checked
	)
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout string // empty, any, or "json:KIND": one {"error":{"kind":KIND,…}} line
		stderr string // a substring of stderr
	}{
		// No arguments where some are needed: the usage says what.
		{"exec no args", []string{"exec"}, 125, none, "Usage: helikon exec"},
		{"fetch no args", []string{"fetch"}, 125, none, "Usage: helikon fetch URL"},
		{"search no args", []string{"search"}, 125, none, "Usage: helikon search QUERY"},
		{"policy no args", []string{"policy"}, 125, none, "want a subcommand"},
		{"policy check no args", []string{"policy", "check"}, 125, none, "Usage: helikon policy check"},
		{"workspaces no args", []string{"workspaces"}, 125, none, "Usage: helikon workspaces"},
		{"forkd no args", []string{"forkd"}, 125, none, "Usage: helikon forkd"},
		{"tool no args", []string{"tool"}, 125, "json:usage", "want a tool name"},
		{"run no prompt", []string{"run"}, 125, none, "Usage: helikon run"},
		// Arguments a command does not take.
		{"guarantees extra", []string{"guarantees", "x"}, 125, none, "Usage: helikon guarantees"},
		{"doctor extra", []string{"doctor", "x"}, 125, none, "Usage: helikon doctor"},
		{"mcp extra", []string{"mcp", "x"}, 125, none, "Usage: helikon mcp"},
		// A wrong subcommand.
		{"policy wrong verb", []string{"policy", "chek"}, 125, none, "policy"},
		{"workspaces wrong verb", []string{"workspaces", "lst"}, 125, none, "Usage: helikon workspaces"},
		{"forkd wrong verb", []string{"forkd", "recon"}, 125, none, "Usage: helikon forkd"},
		// A flag typo: the usage, then the flag meant.
		{"exec flag typo", []string{"exec", "--tiemout", "1s", "--", "true"}, 125, none, "did you mean --timeout?"},
		{"tool flag typo", []string{"tool", "--rot", ".", "Read", `{"path":"a.txt"}`}, 125, "json:usage", "did you mean --root?"},
		{"tool bad flag value", []string{"tool", "--timeout", "5", "Read", `{"path":"a.txt"}`}, 125, "json:usage", "a duration needs a unit"},
		{"fetch flag typo", []string{"fetch", "--markdwn", "https://example.com"}, 125, none, "did you mean --markdown?"},
		// A bad value.
		{"exec bad size", []string{"exec", "--mem", "lots", "--", "true"}, 125, none, "a size is"},
		{"exec bad duration", []string{"exec", "--timeout", "5", "--", "true"}, 125, none, "a duration needs a unit"},
		{"tool bad mode", []string{"tool", "--mode", "yolo", "Read", `{"path":"a.txt"}`}, 125, "json:usage", "unknown permission mode"},
		{"tool bad root", []string{"tool", "--root", root + "/nope", "Read", `{"path":"a.txt"}`}, 125, "json:usage", "--root"},
		{"tool bad rule", []string{"tool", "--deny", "bash(rm)", "Bash", `{"command":"true"}`}, 125, "json:usage", "did you mean Bash?"},
		{"tool unknown tool", []string{"tool", "Raed", `{"path":"a.txt"}`}, 125, "json:usage", "did you mean Read?"},
		// Arguments the tool rejects.
		{"tool not JSON", []string{"tool", "Read", `{`}, 2, "json:invalid_args", "invalid arguments"},
		{"tool schema", []string{"tool", "Read", `{"path":3}`}, 2, "json:invalid_args", "invalid arguments"},
		{"tool empty command", []string{"tool", "Bash", `{"command":""}`}, 2, "json:invalid_args", "command"},
		{"tool url without scheme", []string{"tool", "WebFetch", `{"url":"example.com"}`}, 2, "json:invalid_args", "write it as https://example.com"},
		// A missing key: unavailable here, the same from both commands.
		{"search no key", []string{"search", "go"}, 125, none, "BRAVE_API_KEY"},
		{"tool WebSearch no key", []string{"tool", "WebSearch", `{"query":"go"}`}, 125, "json:usage", "BRAVE_API_KEY"},
		// A refusal.
		{"tool outside the root", []string{"tool", "Read", `{"path":"../x"}`}, 3, "json:denied", "outside the sandbox root"},
		{"tool rule", []string{"tool", "--deny", "Read(a.txt)", "Read", `{"path":"a.txt"}`}, 3, "json:denied", "denied by rule"},
		{"tool guard", []string{"tool", "Bash", `{"command":"rm -rf ~"}`}, 3, "json:denied", "no one to ask"},
		{"fetch private address", []string{"fetch", "http://127.0.0.1/"}, 3, anything, "denied"},
		// A timeout.
		{"exec timeout", []string{"exec", "--timeout", "1s", "--", "sleep", "30"}, 124, none, "timed out"},
		{"tool Bash timeout", []string{"tool", "--timeout", "1s", "Bash", `{"command":"sleep 30"}`}, 124, anything, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := clitest.Run(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("%q: exit %d, want %d\nstdout: %s\nstderr: %s", tc.args, code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("%q: stderr %q, want it to say %q", tc.args, stderr, tc.stderr)
			}
			switch {
			case tc.stdout == anything:
			case tc.stdout == none:
				if stdout != "" {
					t.Errorf("%q: stdout %q, want nothing", tc.args, stdout)
				}
			default:
				var got struct {
					Error struct{ Kind, Message string } `json:"error"`
				}
				kind := strings.TrimPrefix(tc.stdout, "json:")
				if err := json.Unmarshal([]byte(stdout), &got); err != nil || got.Error.Kind != kind || got.Error.Message == "" || strings.Count(stdout, "\n") != 1 {
					t.Errorf("%q: stdout %q, want one {\"error\":{\"kind\":%q,…}} line", tc.args, stdout, kind)
				}
			}
		})
	}
}
