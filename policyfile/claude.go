package policyfile

import (
	"fmt"
	"path"
	"strings"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/internal/hostmatch"
)

// shellSyntax are the characters that make a Claude Code Bash rule more than
// a list of words; helikon matches the words of each simple command, so a
// rule holding them could never match the way it reads.
const shellSyntax = "&|;<>()$`\"'\\\n"

// claudeRule maps one Claude Code permission rule, from list (allow, ask or
// deny), to helikon rules with the same meaning, or says why none has it. A
// deny or ask rule may become broader (it then refuses or asks about more);
// an allow rule never does.
func claudeRule(text, list, home string) ([]helikon.Rule, error) {
	tool, content, hasParen := strings.Cut(strings.TrimSpace(text), "(")
	if hasParen {
		var ok bool
		if content, ok = strings.CutSuffix(content, ")"); !ok {
			return nil, fmt.Errorf("rule %q: a specifier must be closed by ')' at the end", text)
		}
	}
	if strings.HasPrefix(tool, "mcp__") {
		server, name, _ := strings.Cut(strings.TrimPrefix(tool, "mcp__"), "__")
		switch {
		case hasParen:
			return nil, fmt.Errorf("rule %q: an MCP rule takes no specifier", text)
		case name == "" || server == "":
			return nil, fmt.Errorf("rule %q names a whole MCP server; helikon names MCP tools one by one (--mcp-prefix), so write one rule per tool, mcp__%s__TOOL", text, server)
		case strings.Contains(name, "*"):
			return nil, fmt.Errorf("rule %q: helikon rules name one tool, not a wildcard; write one rule per tool", text)
		}
	}
	if err := helikon.ValidateToolName(tool); err != nil {
		return nil, fmt.Errorf("rule %q: %w", text, err)
	}
	if tool == "KillBash" { // Claude Code's older name
		tool = "KillShell"
	}
	bare := []helikon.Rule{{Tool: tool}}
	if !hasParen || content == "*" {
		switch {
		case tool == "Edit", tool == "Write" && list != "allow":
			// Claude Code applies Edit rules to every tool that edits files.
			return []helikon.Rule{{Tool: tool}, {Tool: map[string]string{"Edit": "Write", "Write": "Edit"}[tool]}}, nil
		}
		return bare, nil
	}
	if content == "" {
		return nil, fmt.Errorf("rule %q: empty specifier; write %s alone to match every call", text, tool)
	}
	switch tool {
	case "Bash":
		return claudeBash(text, content, list)
	case "Read", "Edit", "Write":
		p, err := claudePath(text, content, list, home)
		if err != nil {
			return nil, err
		}
		return []helikon.Rule{{Tool: tool, Pattern: p}}, nil
	case "WebFetch":
		host, ok := strings.CutPrefix(content, "domain:")
		if !ok || !hostmatch.Valid(host) || strings.HasPrefix(host, "=") {
			return nil, fmt.Errorf("rule %q: helikon reads WebFetch rules of the form WebFetch(domain:HOST) only", text)
		}
		if list == "allow" && !strings.HasPrefix(host, "*.") {
			host = "=" + host // the host itself, not its subdomains
		}
		return []helikon.Rule{{Tool: tool, Pattern: host}}, nil
	}
	if known := helikon.SuggestTool(tool, claudeSpecifierTools); known != "" {
		// Refused by name rather than mapped: tool names are compared
		// as written, and a deny rule spelt otherwise must not read as
		// holding.
		return nil, fmt.Errorf("rule %q: no tool named %s; did you mean %s?", text, tool, known)
	}
	return nil, fmt.Errorf("rule %q: helikon does not know what a specifier means for %s; write %s alone, or remove the rule", text, tool, tool)
}

// claudeOnlyTools are Claude Code's own built-in tools that helikon does
// not have, as its settings documentation lists them ("Tools available to
// Claude", docs.anthropic.com/en/docs/claude-code/settings; Task is Agent's
// older name). BashOutput and KillShell are not among them: helikon has
// both (with --max-processes), so their rules apply, and KillBash, Claude
// Code's older name of KillShell, is read as KillShell. A rule naming one
// of these, spelt exactly so, governs a tool no helikon agent can call: it is not applied, with a note,
// rather than refused, since such rules fill most Claude Code settings
// files (allow Grep, Glob, LS) and none of them can loosen or weaken
// anything here. Spelt in another case it is refused by the rule check
// like any name of no tool.
var claudeOnlyTools = map[string]bool{
	"Agent": true, "Task": true, "Glob": true, "Grep": true, "LS": true, "MultiEdit": true,
	"NotebookEdit": true, "NotebookRead": true, "TodoWrite": true, "ExitPlanMode": true,
	"SlashCommand": true, "Skill": true,
}

// claudeOnlyTool returns the tool a Claude Code rule names when it is one
// of [claudeOnlyTools], else "".
func claudeOnlyTool(text string) string {
	tool, _, _ := strings.Cut(strings.TrimSpace(text), "(")
	if tool = strings.TrimSpace(tool); claudeOnlyTools[tool] {
		return tool
	}
	return ""
}

// claudeSpecifierTools are the tools whose Claude Code specifiers helikon
// maps.
var claudeSpecifierTools = []string{"Bash", "Edit", "Read", "WebFetch", "Write"}

// claudeBash maps a Bash rule: "cmd args" is that command exactly, "cmd
// args:*" and "cmd args *" are it followed by anything. Other wildcards
// (inside a word, in the middle) have no helikon equivalent.
func claudeBash(text, content, list string) ([]helikon.Rule, error) {
	if strings.ContainsAny(content, shellSyntax) {
		return nil, fmt.Errorf("rule %q: helikon matches each simple command's words, with quotes removed and operators split off, so a rule with quotes, $, operators or redirections cannot match as written", text)
	}
	prefix, isPrefix := strings.CutSuffix(content, ":*")
	if !isPrefix {
		prefix, isPrefix = strings.CutSuffix(content, " *")
	}
	if strings.Contains(prefix, "*") || strings.Contains(prefix, ":*") {
		return nil, fmt.Errorf("rule %q: helikon's Bash rules are a command and its leading words, exactly or followed by anything; a * inside a word or before the end has no equivalent", text)
	}
	words := strings.Join(strings.Fields(prefix), " ")
	if words == "" {
		return nil, fmt.Errorf("rule %q: empty command", text)
	}
	if !isPrefix {
		// Exactly this command. A deny or ask rule may match more: then it
		// also refuses the command with further arguments.
		if list == "allow" {
			words = "=" + words
		}
	}
	return []helikon.Rule{{Tool: "Bash", Pattern: words}}, nil
}

// claudePath maps a Read or Edit path pattern (gitignore-style): //abs is an
// absolute path, ~/p is in the home directory, /p is relative to the
// project root (where .claude/ is), p and ./p relative to the working
// directory, which helikon's is too (the root).
func claudePath(text, p, list, home string) (string, error) {
	if strings.HasPrefix(p, "!") {
		return "", fmt.Errorf("rule %q: a negated pattern has no helikon equivalent", text)
	}
	if strings.HasSuffix(p, "/") {
		if list == "allow" {
			return "", fmt.Errorf("rule %q: a pattern for directories only has no helikon equivalent (helikon's would match a file of that name too); write %s**", text, p)
		}
		p = strings.TrimSuffix(p, "/")
	}
	switch {
	case strings.HasPrefix(p, "//"):
	case strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", fmt.Errorf("rule %q: no home directory to resolve ~ against", text)
		}
		p = "//" + strings.TrimPrefix(path.Join(home, p[2:]), "/")
	case strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("rule %q: ~user paths are not supported; write the absolute path as //path", text)
	default:
		rel := strings.TrimPrefix(p, "./")
		if rel == "" || rel == "." {
			return "", fmt.Errorf("rule %q: write Tool alone, or /** for the whole project", text)
		}
		if !strings.HasPrefix(rel, "/") && !strings.Contains(rel, "/") {
			// gitignore: a name without a slash matches at any depth below
			// the directory; helikon's would match outside the root too.
			rel = "/**/" + rel
		}
		p = rel
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." || seg == "." {
			return "", fmt.Errorf("rule %q: helikon collapses . and .. in paths before matching, so a pattern holding them would mean another path", text)
		}
	}
	return p, nil
}
