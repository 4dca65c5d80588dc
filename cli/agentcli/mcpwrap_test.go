package agentcli_test

import (
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/cli/clitest"
)

// TestMCPWrapUsage: the command is given after "--", so that its own flags
// are not taken for helikon's; mistakes are usage errors that say so.
func TestMCPWrapUsage(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no separator", []string{"mcp", "wrap", "npx", "-y", "server"}, cli.ExitUsage, "after --"},
		{"nothing after the separator", []string{"mcp", "wrap", "--"}, cli.ExitUsage, "no command after --"},
		{"stray argument", []string{"mcp", "wrap", "extra", "--", "server"}, cli.ExitUsage, "unexpected arguments"},
		{"another backend", []string{"mcp", "wrap", "--backend", "docker", "--", "server"}, cli.ExitUsage, "OS sandbox"},
		{"help", []string{"mcp", "wrap", "--help"}, cli.ExitOK, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := clitest.Run(t, "", c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, want %d; stderr %q", code, c.code, stderr)
			}
			if c.code == cli.ExitOK && !strings.Contains(stdout, "rug pull") {
				t.Fatalf("help: %q", stdout)
			}
		})
	}
}
