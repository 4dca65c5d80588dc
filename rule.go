package helikon

import (
	"fmt"
	"path"
	"strings"

	"github.com/paigasus/helikon/internal/hostmatch"
)

// Rule is a permission rule: a tool name, optionally narrowed by a pattern.
// Its text form is the tool name alone ("Bash") or the name followed by the
// pattern in parentheses ("Bash(rm)", "Read(.env)", "Edit(src/**)",
// "WebFetch(example.com)").
//
// What the pattern means depends on the tool:
//
//   - Bash: a program name, optionally followed by leading arguments
//     ("git push"). It matches a simple command whose program (the last
//     element of its path, so /bin/rm is rm) and first arguments are those
//     words. A deny rule matches a call when any command matches; allow rules
//     permit a call only when every command matches one of them.
//   - BashInput (input written to a background command): a pattern as for
//     Bash, matched against what the input would run (see package
//     tool/bashtool). Bash rules apply to BashInput calls too, bare or
//     with a pattern: a line typed into a shell is a command line, and
//     denying rm denies typing rm; BashInput rules apply to BashInput only.
//   - Read: a path glob, matched against every path the call reads.
//   - Write and Edit: a path glob, matched against every path a Write or Edit
//     call writes (Edit(src/**) covers Write calls too). A deny rule of
//     these with a pattern also refuses a call of any other tool that
//     reports writing a matching path (a Bash redirect, > src/x), or a path
//     computed at run time, or whose targets it could not resolve; calls
//     of tools that report no targets at all are left to their own rules.
//   - WebFetch, WebSearch: a host pattern: "example.com" matches the host and
//     its subdomains, "*.example.com" subdomains only.
//   - Bash, WebFetch and WebSearch patterns beginning with "=" match exactly:
//     "Bash(=npm run build)" matches that command with no further arguments
//     (a deny or ask rule also matches when the only further words are
//     computed at run time, since they may expand to nothing; an allow rule
//     also compares the program as written, so it does not match
//     ./npm run build or /usr/bin/npm run build), and
//     "WebFetch(=example.com)" that host and none of its subdomains.
//   - any other tool: the pattern is matched as a path glob, a host pattern
//     and a program name against whatever the tool reports as its targets.
//
// Path globs are gitignore-style, relative to the sandbox root: a pattern
// without a slash matches a name at any depth ("Read(.env)" matches .env and
// config/.env); a pattern with a slash is anchored at the root; "*" and "?"
// match within one path element, "**" across elements; a pattern that matches
// a directory matches everything beneath it; matching is case-insensitive and
// ".." is collapsed lexically before matching. A pattern beginning with "//"
// is an absolute filesystem path ("Read(//etc/**)").
type Rule struct {
	Tool    string // tool name
	Pattern string // "" matches every call of the tool
}

// ParseRule parses the text form of a rule. It checks the rule's form,
// not that its tool exists: see [Permissions.CheckTools].
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	name, rest, hasParen := strings.Cut(s, "(")
	r := Rule{Tool: strings.TrimSpace(name)}
	if err := ValidateToolName(r.Tool); err != nil {
		return Rule{}, fmt.Errorf("invalid rule %q: %w", s, err)
	}
	if !hasParen {
		return r, nil
	}
	if !strings.HasSuffix(rest, ")") {
		return Rule{}, fmt.Errorf("invalid rule %q: a pattern must be closed by ')' at the end, as in Bash(rm)", s)
	}
	r.Pattern = strings.TrimSpace(strings.TrimSuffix(rest, ")"))
	if r.Pattern == "" {
		return Rule{}, fmt.Errorf("invalid rule %q: empty pattern; write %s alone to match every call", s, r.Tool)
	}
	body, exact := strings.CutPrefix(r.Pattern, "=")
	switch r.family() {
	case familyHost:
		if !hostmatch.Valid(body) || exact && strings.HasPrefix(body, "*") {
			return Rule{}, fmt.Errorf("invalid rule %q: %q is not a host pattern such as example.com, *.example.com or =example.com", s, r.Pattern)
		}
	case familyCommand:
		if len(strings.Fields(body)) == 0 {
			return Rule{}, fmt.Errorf("invalid rule %q: empty program", s)
		}
	default:
		if exact {
			return Rule{}, fmt.Errorf("invalid rule %q: a pattern beginning with = (exact match) is for Bash, WebFetch and WebSearch rules", s)
		}
	}
	return r, nil
}

// MustParseRule is like [ParseRule] but panics on error.
func MustParseRule(s string) Rule {
	r, err := ParseRule(s)
	if err != nil {
		panic(err)
	}
	return r
}

// ParseRules parses each of ss. It checks the form of each rule only: a rule
// naming a tool that is not there parses, and [Permissions.CheckTools]
// refuses it once the tools are known.
func ParseRules(ss ...string) ([]Rule, error) {
	rules := make([]Rule, 0, len(ss))
	for _, s := range ss {
		r, err := ParseRule(s)
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
	}
	return rules, nil
}

// MustParseRules is like [ParseRules] but panics on error. It is for rules
// written in the program, as [regexp.MustCompile] is for expressions.
func MustParseRules(ss ...string) []Rule {
	rules, err := ParseRules(ss...)
	if err != nil {
		panic(err)
	}
	return rules
}

// String returns the text form of r.
func (r Rule) String() string {
	if r.Pattern == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Pattern + ")"
}

// inputTool is the name of the tool that writes to a background command's
// input (bashtool.InputName), whose calls Bash rules judge too.
const inputTool = "BashInput"

type ruleFamily int

const (
	familyGeneric ruleFamily = iota
	familyCommand
	familyReadPath
	familyWritePath
	familyHost
)

func familyOf(tool string) ruleFamily {
	switch tool {
	case "Bash", inputTool:
		return familyCommand
	case "Read":
		return familyReadPath
	case "Write", "Edit":
		return familyWritePath
	case "WebFetch", "WebSearch":
		return familyHost
	}
	return familyGeneric
}

func (r Rule) family() ruleFamily { return familyOf(r.Tool) }

// appliesTo reports whether r concerns calls of tool.
func (r Rule) appliesTo(tool string) bool {
	if r.Tool == tool || r.Tool == "Bash" && tool == inputTool {
		return true
	}
	return r.Pattern != "" && r.family() == familyWritePath && familyOf(tool) == familyWritePath
}

// targetsInfo is what the pipeline knows about a call's targets.
type targetsInfo struct {
	t        Targets
	known    bool   // the tool reported targets and they are fully resolved
	reported bool   // the tool reported targets without an error (Unresolved may be set)
	why      string // when !known
}

// matchItems returns the number of target items r's family matches and a
// function matching item i; deny selects fail-closed matching of computed
// command words.
func (r Rule) matchItems(ti *targetsInfo, deny bool) (n int, matched func(i int) bool) {
	switch r.family() {
	case familyCommand:
		return len(ti.t.Commands), func(i int) bool { return matchCommand(ti.t.Commands[i], r.Pattern, deny) }
	case familyReadPath, familyWritePath:
		write := r.family() == familyWritePath
		var idx []int
		for i, p := range ti.t.Paths {
			if !write || p.Access == AccessWrite {
				idx = append(idx, i)
			}
		}
		return len(idx), func(i int) bool { return globMatch(r.Pattern, ti.t.Paths[idx[i]]) }
	case familyHost:
		return len(ti.t.Hosts), func(i int) bool { return matchHost(r.Pattern, ti.t.Hosts[i]) }
	}
	np, nh, nc := len(ti.t.Paths), len(ti.t.Hosts), len(ti.t.Commands)
	return np + nh + nc, func(i int) bool {
		switch {
		case i < np:
			return globMatch(r.Pattern, ti.t.Paths[i])
		case i < np+nh:
			return hostmatch.Match(r.Pattern, ti.t.Hosts[i-np])
		default:
			return matchCommand(ti.t.Commands[i-np-nh], r.Pattern, deny)
		}
	}
}

// matchCommand matches a Bash rule's pattern against c: a program and
// leading arguments, or with a leading "=" the whole argument vector. For a
// deny (or ask) pattern an exact match also holds when every further word is
// computed at run time (unquoted, it may expand to nothing), and whenever
// matchPattern matched on a computed word.
func matchCommand(c Command, pattern string, deny bool) bool {
	body, exact := strings.CutPrefix(pattern, "=")
	words := strings.Fields(body)
	if !c.matchPattern(words, deny) {
		return false
	}
	if exact && !deny && c.Args[0] != words[0] {
		// An exact allow pattern names the program as written: the
		// command it allows is that one, not ./npm or another file of the
		// same name.
		return false
	}
	if !exact || len(c.Args) == len(words) {
		return true
	}
	if !deny || len(c.Args) < len(words) {
		return false
	}
	for i := range c.Args {
		computed := i < len(c.Dynamic) && c.Dynamic[i]
		if i < len(words) && computed {
			return true // the words compared may have shifted
		}
		if i >= len(words) && !computed {
			return false
		}
	}
	return true
}

// matchHost matches a host pattern; with a leading "=" it matches the host
// itself only (an address pattern only ever matches the same address).
func matchHost(pattern, host string) bool {
	body, exact := strings.CutPrefix(pattern, "=")
	if !hostmatch.Match(body, host) {
		return false
	}
	return !exact || hostmatch.IsIP(body) || hostmatch.Normalize(body) == hostmatch.Normalize(host)
}

// denyMatch reports whether deny rule r matches the call, failing closed when
// the call's targets are unknown.
func (r Rule) denyMatch(tool string, ti *targetsInfo) bool {
	if !r.appliesTo(tool) {
		return r.deniesWritesOf(ti)
	}
	if r.Pattern == "" {
		return true
	}
	if !ti.known {
		return true
	}
	n, match := r.matchItems(ti, true)
	for i := range n {
		if match(i) {
			return true
		}
	}
	return false
}

// deniesWritesOf reports whether r, a Write or Edit deny rule with a
// pattern, refuses a call of another tool for what it writes: a reported
// write path that matches or is computed at run time, or targets the tool
// reported but could not resolve.
func (r Rule) deniesWritesOf(ti *targetsInfo) bool {
	if r.Pattern == "" || r.family() != familyWritePath || !ti.reported {
		return false
	}
	if !ti.known {
		return true
	}
	for _, p := range ti.t.Paths {
		if p.Access == AccessWrite && (p.Computed || globMatch(r.Pattern, p)) {
			return true
		}
	}
	return false
}

// RuleMatch is one allow rule that permitted a call, and the target it
// matched: a command's words, a path or a host, as the call's [Targets]
// hold it ("" when a rule without a pattern allowed the whole call).
type RuleMatch struct {
	Rule   Rule
	Target string
}

// allowMatch reports whether the allow rules permit the call: a bare rule for
// the tool, or pattern rules that together cover every target of the call.
// It returns the rule that covered each target, in the targets' order, one
// entry per rule and target (a target covered by several rules is reported
// with the first).
func allowMatch(rules []Rule, tool string, ti *targetsInfo) ([]RuleMatch, bool) {
	var applicable []Rule
	for _, r := range rules {
		if !r.appliesTo(tool) {
			continue
		}
		if r.Pattern == "" {
			return []RuleMatch{{Rule: r}}, true
		}
		applicable = append(applicable, r)
	}
	if len(applicable) == 0 || !ti.known {
		return nil, false
	}
	// Every item must be covered by some rule; a call that reports no items
	// is not permitted by pattern rules (nothing was shown to match).
	n, _ := applicable[0].matchItems(ti, false)
	if n == 0 {
		return nil, false
	}
	var matches []RuleMatch
	for i := range n {
		covered := false
		for _, r := range applicable {
			if _, m := r.matchItems(ti, false); m(i) {
				matches = append(matches, RuleMatch{Rule: r, Target: r.itemText(ti, i)})
				covered = true
				break
			}
		}
		if !covered {
			return nil, false
		}
	}
	return matches, true
}

// itemText returns item i of the targets as r's family counts them (see
// matchItems), for a person to read.
func (r Rule) itemText(ti *targetsInfo, i int) string {
	command := func(c Command) string { return strings.Join(c.Args, " ") }
	switch r.family() {
	case familyCommand:
		return command(ti.t.Commands[i])
	case familyReadPath, familyWritePath:
		for _, p := range ti.t.Paths {
			if r.family() == familyReadPath || p.Access == AccessWrite {
				if i == 0 {
					return p.Path
				}
				i--
			}
		}
		return ""
	case familyHost:
		return ti.t.Hosts[i]
	}
	np, nh := len(ti.t.Paths), len(ti.t.Hosts)
	switch {
	case i < np:
		return ti.t.Paths[i].Path
	case i < np+nh:
		return ti.t.Hosts[i-np]
	}
	return command(ti.t.Commands[i-np-nh])
}

// AllowedBy reports whether rules, read as allow rules, permit a call of tool
// whose targets are t, as step 4 of [Permissions.Check] decides it, and
// returns a rule that did: one that matched (the one for the first target,
// when several rules together cover the call). A nil t, or one with
// Unresolved set, is a call whose targets are unknown: only a bare rule for
// the tool permits it. It lets an approval handler keep rules of its own (an
// "always" answer) and match them exactly as the pipeline matches its allow
// rules.
func AllowedBy(rules []Rule, tool string, t *Targets) (Rule, bool) {
	ti := &targetsInfo{why: "the targets are unknown"}
	if t != nil {
		ti.t = *t
		ti.known = t.Unresolved == ""
	}
	m, ok := allowMatch(rules, tool, ti)
	if !ok {
		return Rule{}, false
	}
	return m[0].Rule, true
}

// globMatch matches a rule's path pattern against a path target.
func globMatch(pattern string, t PathTarget) bool {
	pattern = strings.ToLower(pattern)
	p := strings.ToLower(path.Clean("/" + t.Path))
	rel, inside := "", false
	if t.Root != "" {
		root := strings.ToLower(path.Clean("/" + t.Root))
		if p == root {
			rel, inside = ".", true
		} else if r, ok := strings.CutPrefix(p, strings.TrimSuffix(root, "/")+"/"); ok {
			rel, inside = r, true
		}
	}
	if abs, ok := strings.CutPrefix(pattern, "//"); ok {
		return segmentsMatch(splitPath(path.Clean("/"+abs)), splitPath(p))
	}
	trimmed := strings.TrimSuffix(pattern, "/")
	if !strings.Contains(trimmed, "/") {
		// No slash: match a name at any depth.
		subject := p
		if inside {
			subject = rel
		}
		for _, seg := range splitPath(subject) {
			if ok, _ := path.Match(trimmed, seg); ok {
				return true
			}
		}
		return false
	}
	if !inside {
		return false
	}
	return segmentsMatch(splitPath(path.Clean("/"+trimmed)), splitPath(rel))
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" || p == "." {
		return nil
	}
	return strings.Split(p, "/")
}

// segmentsMatch reports whether pat matches subj or one of its ancestors
// (a pattern naming a directory covers everything beneath it).
func segmentsMatch(pat, subj []string) bool {
	if len(pat) == 0 {
		return true
	}
	if pat[0] == "**" {
		for i := 0; i <= len(subj); i++ {
			if segmentsMatch(pat[1:], subj[i:]) {
				return true
			}
		}
		return false
	}
	if len(subj) == 0 {
		return false
	}
	if ok, _ := path.Match(pat[0], subj[0]); !ok {
		return false
	}
	return segmentsMatch(pat[1:], subj[1:])
}
