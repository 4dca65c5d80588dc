package agentcli

import (
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/paigasus/helikon"
)

// interpreters run whatever code their arguments or their input hold, and a
// Bash rule does not see the input (python3 - < x.py): "always" is not
// offered for them.
var interpreters = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "fish": true, "python": true, "python3": true, "node": true,
	"deno": true, "bun": true, "ruby": true, "perl": true, "php": true, "lua": true, "awk": true, "eval": true,
	"exec": true, "xargs": true, "env": true, "sudo": true, "doas": true, "nohup": true, "timeout": true, "nice": true,
}

// alwaysRules returns rules that allow req's call and nothing wider: each
// Bash command exactly, its program as written and every argument
// (touch a → Bash(=touch a), which neither touch a b nor ./touch a nor
// touch b matches), a redirection's target exactly (Bash(=> /w/out)), a
// file itself (src/a/b.go → Edit(/src/a/b.go); outside the root
// Edit(//abs/path)), a host exactly (WebFetch(=example.com)), and the tool
// itself for a tool that reports no targets. It returns nil when no such
// rule can be written (a word computed at run time, a word with a space, a
// name that would read as a glob, an interpreter): the
// question is then answered once.
//
// What the rule does not compare, no allow rule of its kind does: a Bash
// rule compares the argument vectors the line runs and the files it writes
// through redirections, not what it reads through one (< file) nor the
// variables it sets for a command (X=1 touch a); a path rule compares
// without case.
func alwaysRules(req *helikon.ApprovalRequest) []helikon.Rule {
	if req.Targets == nil {
		switch req.Tool {
		case "Bash", "Read", "Write", "Edit", "WebFetch", "WebSearch":
			return nil // it reports targets, and could not this time
		}
		return []helikon.Rule{{Tool: req.Tool}}
	}
	t := req.Targets
	var rules []helikon.Rule
	add := func(r helikon.Rule) {
		if !slices.Contains(rules, r) {
			rules = append(rules, r)
		}
	}
	switch req.Tool {
	case "Bash":
		for _, c := range t.Commands {
			words := exactWords(c)
			if words == "" {
				return nil
			}
			add(helikon.Rule{Tool: "Bash", Pattern: "=" + words})
		}
	case "Read", "Write", "Edit":
		for _, p := range t.Paths {
			if req.Tool != "Read" && p.Access != helikon.AccessWrite {
				continue
			}
			pat := filePattern(p)
			if strings.ContainsAny(pat, "*?[\\") {
				return nil // a name that would read as a glob
			}
			add(helikon.Rule{Tool: req.Tool, Pattern: pat})
		}
	case "WebFetch", "WebSearch":
		for _, h := range t.Hosts {
			add(helikon.Rule{Tool: req.Tool, Pattern: "=" + h})
		}
	default:
		return []helikon.Rule{{Tool: req.Tool}}
	}
	for _, r := range rules {
		if back, err := helikon.ParseRule(r.String()); err != nil || back != r {
			return nil
		}
	}
	// The rules must allow the very call asked about, or "always" would
	// not even mean "yes".
	if _, ok := helikon.AllowedBy(rules, req.Tool, t); !ok {
		return nil
	}
	return rules
}

// exactWords returns c's argument vector as the words of an exact Bash
// pattern, or "" when it cannot be one: a word computed at run time, empty
// or holding a space (a pattern is split at spaces), or an interpreter.
func exactWords(c helikon.Command) string {
	if len(c.Args) == 0 || strings.HasPrefix(c.Args[0], "=") || interpreters[c.Program()] {
		return ""
	}
	for i, a := range c.Args {
		if i < len(c.Dynamic) && c.Dynamic[i] || a == "" || strings.ContainsFunc(a, unicode.IsSpace) {
			return ""
		}
	}
	return strings.Join(c.Args, " ")
}

// filePattern returns a pattern for p itself, relative to its root, or
// absolute ("//abs") when p is outside the root.
func filePattern(p helikon.PathTarget) string {
	clean := path.Clean("/" + filepath.ToSlash(p.Path))
	if p.Root != "" {
		root := path.Clean("/" + filepath.ToSlash(p.Root))
		if rel, ok := strings.CutPrefix(clean, strings.TrimSuffix(root, "/")+"/"); ok {
			return "/" + rel
		}
	}
	return "/" + clean // "//abs": an absolute path
}
