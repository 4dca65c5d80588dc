package agentcli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/policyfile"
)

// SaveAllowRules returns a [TerminalApprover].Save that adds rules to the
// allow list of the project policy file in root, creating it if need be, and
// returns the file's path. The file is
// rewritten whole (its keys sorted, two-space indented) through a temporary
// file renamed over it. It is the CLI writing on the user's answer, not a
// tool call: the policy-file guard stops tools, not this.
func SaveAllowRules(root string) func(rules []helikon.Rule) (string, error) {
	return func(rules []helikon.Rule) (string, error) { return saveAllowRules(root, rules) }
}

func saveAllowRules(root string, rules []helikon.Rule) (string, error) {
	path := filepath.Join(root, filepath.FromSlash(policyfile.ProjectFile))
	top := map[string]json.RawMessage{}
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &top); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	perms := map[string]json.RawMessage{}
	if raw, ok := top["permissions"]; ok {
		if err := json.Unmarshal(raw, &perms); err != nil {
			return "", fmt.Errorf("%s: permissions: %w", path, err)
		}
	}
	var allow []string
	if raw, ok := perms["allow"]; ok {
		if err := json.Unmarshal(raw, &allow); err != nil {
			return "", fmt.Errorf("%s: permissions.allow: %w", path, err)
		}
	}
	for _, r := range rules {
		if !slices.Contains(allow, r.String()) {
			allow = append(allow, r.String())
		}
	}
	perms["allow"], _ = json.Marshal(allow)
	top["permissions"], _ = json.Marshal(perms)
	out, err := json.MarshalIndent(top, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".settings-*.json")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(out, '\n')); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return path, os.Rename(tmp.Name(), path)
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
