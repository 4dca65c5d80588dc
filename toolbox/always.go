package toolbox

import (
	"context"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/shellcmd"
)

// AlwaysRules returns the rules that allow req's call and nothing wider,
// for an approval's "always" answer: each Bash command exactly, its
// program as written and every argument (touch a → Bash(=touch a), which
// neither touch a b nor ./touch a nor touch b matches), a redirection's
// target exactly (Bash(=> /w/out)), a file itself (src/a/b.go →
// Edit(/src/a/b.go); outside the root Edit(//abs/path)), a host exactly
// (WebFetch(=example.com)), and the tool itself for a tool that reports no
// targets. It returns nil when no such rule can be written (a word computed
// at run time, a word with a space, a name that would read as a glob, a
// program that runs code its words do not spell out: [shellcmd.RunsCode]),
// and for a question a guard or an ask rule asked, which no allow rule
// answers: the question is then answered once.
//
// What the rule does not compare, no allow rule of its kind does: a Bash
// rule compares the argument vectors the line runs and the files it writes
// through redirections, not what it reads through one (< file) nor the
// variables it sets for a command (X=1 touch a); a path rule compares
// without case.
func AlwaysRules(req *helikon.ApprovalRequest) []helikon.Rule {
	if req.Guard || req.Rule != "" {
		return nil
	}
	if req.Targets == nil {
		if slices.Contains(Names, req.Tool) {
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
// or holding a space (a pattern is split at spaces), or a program that
// runs code its words do not spell out.
func exactWords(c helikon.Command) string {
	if len(c.Args) == 0 || strings.HasPrefix(c.Args[0], "=") || shellcmd.RunsCode(c.Program()) {
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

// SessionRules are the allow rules a person's "always" answers added during
// a session: an approval handler consults them before asking, so that the
// same call is not asked about again. They answer only what the pipeline
// asks after its deny rules, guards and ask rules (see [SessionRules.Allows]),
// so they never reach across one. The zero value holds none; it is safe
// for concurrent use.
type SessionRules struct {
	mu    sync.Mutex
	rules []helikon.Rule
}

// Add adds rules (as [AlwaysRules] returns them) to the session's.
func (s *SessionRules) Add(rules ...helikon.Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rules {
		if !slices.Contains(s.rules, r) {
			s.rules = append(s.rules, r)
		}
	}
}

// Rules returns the session's rules, in the order added.
func (s *SessionRules) Rules() []helikon.Rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rules)
}

// Allows returns the session rule that allows req's call, if one does. A
// question a guard or an ask rule asked is never answered by it: those
// must be asked each time.
func (s *SessionRules) Allows(req *helikon.ApprovalRequest) (helikon.Rule, bool) {
	if req.Guard || req.Rule != "" {
		return helikon.Rule{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return helikon.AllowedBy(s.rules, req.Tool, req.Targets)
}

// Answer is a person's answer to an approval request.
type Answer int

const (
	// No denies the call.
	No Answer = iota
	// Yes allows the call, once.
	Yes
	// Always allows the call and adds the rules offered to the session's,
	// so that the same call is not asked about again.
	Always
)

// Approver is an approval handler with "always": it answers from the
// session's rules when one allows the call, and otherwise asks Ask, with
// the rules an "always" answer would add ([AlwaysRules]; nil when none can
// be offered, and Always then means Yes). A terminal, a web page or a chat
// message can be the Ask; Ask is called for one request at a time.
type Approver struct {
	// Ask asks a person about req. offer are the rules Always would add.
	Ask func(ctx context.Context, req *helikon.ApprovalRequest, offer []helikon.Rule) (Answer, error)
	// Session holds the rules of "always" answers; nil keeps them in the
	// Approver alone.
	Session *SessionRules
	// OnAlways, when set, is called with the rules an Always answer added
	// (to save them: [policyfile.AddAllowRules]).
	OnAlways func(rules []helikon.Rule)

	mu  sync.Mutex // one question at a time
	own SessionRules
}

var _ helikon.Approver = (*Approver)(nil)

// Approve implements [helikon.Approver].
func (a *Approver) Approve(ctx context.Context, req *helikon.ApprovalRequest) (bool, error) {
	s := a.Session
	if s == nil {
		s = &a.own
	}
	if _, ok := s.Allows(req); ok {
		return true, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := s.Allows(req); ok { // answered while this one waited
		return true, nil
	}
	offer := AlwaysRules(req)
	ans, err := a.Ask(ctx, req, offer)
	if err != nil {
		return false, err
	}
	if ans == Always && len(offer) > 0 {
		s.Add(offer...)
		if a.OnAlways != nil {
			a.OnAlways(offer)
		}
	}
	return ans == Yes || ans == Always, nil
}
