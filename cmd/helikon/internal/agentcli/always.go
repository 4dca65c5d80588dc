package agentcli

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/paigasus/helikon"
)

// maxAlwaysWords bounds the words of a Bash rule an "always" answer offers:
// a program and up to two subcommands (npm run test, git stash pop).
const maxAlwaysWords = 3

// interpreters run whatever code their arguments hold, so a rule naming the
// program alone would allow anything; "always" is not offered for them.
var interpreters = map[string]bool{
	"sh": true, "bash": true, "zsh": true, "dash": true, "fish": true, "python": true, "python3": true, "node": true,
	"deno": true, "bun": true, "ruby": true, "perl": true, "php": true, "lua": true, "awk": true, "eval": true,
	"exec": true, "xargs": true, "env": true, "sudo": true, "doas": true, "nohup": true, "timeout": true, "nice": true,
}

// alwaysRules returns the narrowest useful rules that would allow req's call
// and calls like it: a Bash command's program and leading subcommand words
// (npm run test -- --watch=false → Bash(npm run test)), a file's directory
// (src/a/b.go → Edit(/src/a/**); a file in the root itself: just that file),
// a host exactly (WebFetch(=example.com)), and the tool itself for a tool
// that reports no targets. It returns nil when there is no such rule
// narrower than the whole tool (a command helikon could not read, an
// interpreter): the question is then answered once.
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
			if len(c.Args) == 2 && c.Args[0] == ">" {
				// A redirect: that target only, never every redirect.
				if len(c.Dynamic) > 1 && c.Dynamic[1] {
					return nil
				}
				add(helikon.Rule{Tool: "Bash", Pattern: "> " + c.Args[1]})
				continue
			}
			words := commandWords(c)
			if words == "" {
				return nil
			}
			add(helikon.Rule{Tool: "Bash", Pattern: words})
		}
	case "Read", "Write", "Edit":
		for _, p := range t.Paths {
			if req.Tool != "Read" && p.Access != helikon.AccessWrite {
				continue
			}
			pat := dirPattern(p)
			if strings.ContainsAny(strings.TrimSuffix(pat, "/**"), "*?[\\") {
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
		if _, err := helikon.ParseRule(r.String()); err != nil {
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

// commandWords returns the program and the subcommand words that follow it,
// up to the first option, path, assignment or word computed at run time;
// "" when that would be an interpreter alone.
func commandWords(c helikon.Command) string {
	if len(c.Args) == 0 || len(c.Dynamic) > 0 && c.Dynamic[0] || strings.HasPrefix(c.Program(), "=") || strings.ContainsAny(c.Program(), " \t\n") {
		return ""
	}
	words := []string{c.Program()}
	for i := 1; i < len(c.Args) && len(words) < maxAlwaysWords; i++ {
		a := c.Args[i]
		if i < len(c.Dynamic) && c.Dynamic[i] || a == "" || strings.HasPrefix(a, "-") || strings.ContainsAny(a, "/=*?[$~\\ \t\n") {
			break
		}
		words = append(words, a)
	}
	if len(words) == 1 && interpreters[words[0]] {
		return ""
	}
	return strings.Join(words, " ")
}

// dirPattern returns a pattern for the directory of p, relative to its root
// (the file itself when it lies in the root directly or outside the root).
func dirPattern(p helikon.PathTarget) string {
	clean := path.Clean("/" + filepath.ToSlash(p.Path))
	if p.Root != "" {
		root := path.Clean("/" + filepath.ToSlash(p.Root))
		if rel, ok := strings.CutPrefix(clean, strings.TrimSuffix(root, "/")+"/"); ok {
			if dir := path.Dir(rel); dir != "." {
				return "/" + dir + "/**"
			}
			return "/" + rel
		}
	}
	return "/" + clean // "//abs": an absolute path
}
