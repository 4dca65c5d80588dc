package agentcli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/policyfile"
)

// SaveAllowRules returns a [TerminalApprover].Save that adds rules to the
// allow list of the project policy file in root (see
// [policyfile.AddAllowRules]) and returns the file's path.
func SaveAllowRules(root string) func(rules []helikon.Rule) (string, error) {
	return func(rules []helikon.Rule) (string, error) { return policyfile.AddAllowRules(root, rules) }
}

// checkMCPRules fails when a deny or ask rule names an MCP tool (mcp__…, as
// Claude Code spells them) that no tool of the run is called: it would
// silently apply to nothing, the run's MCP tools being named --mcp-prefix
// plus the server's name for them.
func checkMCPRules(p *helikon.Permissions, tools []string) error {
	for i, rules := range [2][]helikon.Rule{p.Deny, p.Ask} {
		for _, r := range rules {
			if strings.HasPrefix(r.Tool, "mcp__") && !slices.Contains(tools, r.Tool) {
				server, _, _ := strings.Cut(strings.TrimPrefix(r.Tool, "mcp__"), "__")
				return fmt.Errorf("%s rule %s names no tool of this run, so it would apply to nothing; helikon names an MCP server's tools --mcp-prefix plus the server's name for them: pass --mcp-prefix mcp__%s__ for that server, or remove the rule", [2]string{"deny", "ask"}[i], r, server)
			}
		}
	}
	return nil
}
