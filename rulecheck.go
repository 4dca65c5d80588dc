package helikon

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// UnknownToolError reports a rule that names no tool there is, so that it
// can never match: a deny rule that cannot deny is worse than none, since
// whoever wrote it believes it holds. [Permissions.CheckTools] returns it.
type UnknownToolError struct {
	List string // the rule's list: "deny", "ask" or "allow"
	Rule Rule
	// Suggestion is the tool the rule most likely means (the same name in
	// another case, else one within a small edit distance), "" when none
	// is close.
	Suggestion string
	// Tools are the tool names the rule was checked against, sorted.
	Tools []string
}

// Error returns, for example, "deny rule bash(rm): no tool named bash; did
// you mean Bash?".
func (e *UnknownToolError) Error() string {
	msg := fmt.Sprintf("%s rule %s: no tool named %s", e.List, e.Rule, e.Rule.Tool)
	if e.Suggestion != "" {
		return msg + "; did you mean " + e.Suggestion + "?"
	}
	if len(e.Tools) == 0 {
		return msg + "; there are no tools"
	}
	return msg + " (tools: " + strings.Join(e.Tools, ", ") + ")"
}

// CheckTools checks every rule of p against the names of the tools it will
// decide for, and returns an error holding one *[UnknownToolError] (match
// it with [errors.As]) for each rule that names none of them, in the order
// deny, ask, allow; nil when every rule can match. A Write or Edit rule with
// a pattern counts as naming either tool, since it covers both; as a deny or
// ask rule it also refuses writes that other tools report (see [Rule]), so
// it is accepted whatever tools there are.
//
// Tool names are compared exactly, as the pipeline compares them: "bash"
// is not "Bash", and CheckTools suggests the name it is closest to. The
// pipeline cannot run it by itself, since it never sees the whole toolset;
// whoever assembles tools and permissions calls it (the agent builder and
// the CLI do), with every tool a call may name: a rule for a tool added
// later would be refused.
func (p *Permissions) CheckTools(names []string) error {
	if p == nil {
		return nil
	}
	sorted := slices.Sorted(slices.Values(names))
	sorted = slices.Compact(sorted)
	var errs []error
	for i, rules := range [3][]Rule{p.Deny, p.Ask, p.Allow} {
		for _, r := range rules {
			if r.canMatch(sorted, i < 2) {
				continue
			}
			errs = append(errs, &UnknownToolError{List: [3]string{"deny", "ask", "allow"}[i], Rule: r, Suggestion: SuggestTool(r.Tool, sorted), Tools: sorted})
		}
	}
	return errors.Join(errs...)
}

// canMatch reports whether r names one of tools (sorted); deny is true for
// deny and ask rules, which match as deny rules do.
func (r Rule) canMatch(tools []string, deny bool) bool {
	if _, ok := slices.BinarySearch(tools, r.Tool); ok {
		return true
	}
	if r.Pattern == "" || r.family() != familyWritePath {
		return false
	}
	if deny {
		return true // it also refuses what other tools report writing
	}
	return slices.ContainsFunc(tools, func(t string) bool { return familyOf(t) == familyWritePath })
}

// maxSuggestDistance is the largest edit distance at which [SuggestTool]
// still suggests a name: two edits catch a doubled or dropped letter and a
// swap (Bsah), and stay clear of unrelated short names (Read and Edit are
// two apart, so a name is suggested only when it is the single closest).
const maxSuggestDistance = 2

// SuggestTool returns the name in tools that name most likely means: one
// equal to it but for case, else the single one nearest to it by edit
// distance (compared without case), at most two edits away and less than
// half its length; "" when there is none.
func SuggestTool(name string, tools []string) string {
	for _, t := range tools {
		if strings.EqualFold(t, name) && t != name {
			return t
		}
	}
	best, bestD, tie := "", maxSuggestDistance+1, false
	lower := strings.ToLower(name)
	for _, t := range tools {
		d := editDistance(lower, strings.ToLower(t))
		switch {
		case d < bestD:
			best, bestD, tie = t, d, false
		case d == bestD:
			tie = true
		}
	}
	if best == "" || tie || 2*bestD >= len(name) {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, by bytes (tool
// names are ASCII), with an adjacent swap counting as one edit.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
