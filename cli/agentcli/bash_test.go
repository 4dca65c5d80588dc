package agentcli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
)

func TestBashTool(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{"runs in the root", []string{"tool", "--backend", "host", "--root", dir, "Bash", `{"command":"ls; exit 3"}`}, 0, `"stdout":"keep\n","stderr":"","exit_code":3`},
		{"timeout flag", []string{"tool", "--backend", "host", "--root", dir, "--timeout", "200ms", "Bash", `{"command":"sleep 60"}`}, 124, `"exit_code":null,"timed_out":true`},
		{"deny-command", []string{"tool", "--backend", "host", "--root", dir, "--deny-command", "rm", "Bash", `{"command":"sh -c '\\rm keep'"}`}, 3, `"kind":"denied"`},
		{"allow-command", []string{"tool", "--backend", "host", "--root", dir, "--allow-command", "echo", "--allow-command", "git status", "Bash", `{"command":"echo a; rm keep"}`}, 3, `not on the allow list`},
		{"allow-command passes", []string{"tool", "--backend", "host", "--root", dir, "--allow-command", "echo", "Bash", `{"command":"echo a && echo b"}`}, 0, `"stdout":"a\nb\n"`},
		{"Bash rule", []string{"tool", "--backend", "host", "--root", dir, "--deny", "Bash(rm)", "Bash", `{"command":"find . -exec rm {} +"}`}, 3, `denied by rule Bash(rm)`},
		{"guard", []string{"tool", "--backend", "host", "--root", dir, "Bash", `{"command":"echo x > /etc/helikon-test"}`}, 3, `protected-system-path`},
		{"invalid args", []string{"tool", "--backend", "host", "--root", dir, "Bash", `{"cmd":"ls"}`}, 2, `"kind":"invalid_args"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := clitest.Run(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.stdout) {
				t.Errorf("exit %d stdout %s stderr %s; want %d and %s", code, stdout, stderr, tt.code, tt.stdout)
			}
			if code == 0 && !json.Valid([]byte(stdout)) {
				t.Errorf("stdout is not JSON: %s", stdout)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "keep")); err != nil {
		t.Error("a denied command removed the file")
	}
}
