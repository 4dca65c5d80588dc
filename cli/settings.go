package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/policyfile"
)

// PolicyFileFlags select the policy files a command reads (package
// policyfile): helikon's project file in the root and the user's file
// always, Claude Code's settings when asked.
type PolicyFileFlags struct {
	ClaudeSettings bool   // --claude-settings
	TrustProject   bool   // --trust-project
	UserSettings   string // --user-settings FILE, "none" for no user file

	loaded      bool
	settings    *policyfile.Settings
	settingsErr error
}

func (pf *PolicyFileFlags) add(fs *flag.FlagSet) {
	fs.BoolVar(&pf.ClaudeSettings, "claude-settings", false, "also read the permissions of Claude Code's .claude/settings.json and .claude/settings.local.json in the root (trusting them)")
	fs.BoolVar(&pf.TrustProject, "trust-project", false, "let the root's policy files loosen the policy (allow rules, a looser mode, limit or WebFetch host list, another backend)")
	fs.StringVar(&pf.UserSettings, "user-settings", "", "the user's policy `FILE` (default: helikon/settings.json in the user config directory; none: no user file)")
}

// Settings reads the policy files for the root, once.
func (c *CommonFlags) Settings() (*policyfile.Settings, error) {
	if !c.loaded {
		c.loaded = true
		root, err := c.RootDir()
		if err != nil {
			c.settingsErr = err
			return nil, err
		}
		o := &policyfile.Options{Root: root, Claude: c.ClaudeSettings, TrustProject: c.TrustProject, UserFile: c.UserSettings}
		if c.UserSettings == "none" {
			o.UserFile, o.NoUserFile = "", true
		}
		c.settings, c.settingsErr = policyfile.Load(o)
		if c.settingsErr == nil {
			if b := c.settings.Backend; b.Value != "" && backendFactories[resolveAlias(b.Value)] == nil {
				c.settingsErr = fmt.Errorf("%s: unknown backend %q (available: %s)", b.From, b.Value, strings.Join(BackendNames(), ", "))
			}
		}
	}
	return c.settings, c.settingsErr
}

// given reports whether the flag name was set on the command line.
func (c *CommonFlags) given(name string) bool {
	found := false
	if c.fs != nil {
		c.fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	}
	return found
}

// WithFileSettings returns b with the policy files' backend and limits filling
// in what the flags left unset, and the files' hidden paths
// (sandbox.hidePaths) added to the flags'.
func (c *CommonFlags) WithFileSettings(b *BackendFlags) *BackendFlags {
	pol, err := c.Settings()
	if err != nil || pol == nil {
		return b
	}
	out := *b
	if !c.given("backend") && pol.Backend.Value != "" {
		out.Name = pol.Backend.Value
	}
	if !c.given("timeout") && pol.Timeout.From != "" {
		out.Timeout = pol.Timeout.Value
	}
	for _, l := range []struct {
		flag string
		set  policyfile.Setting[int64]
		dst  *int64
	}{{"cpu", pol.CPUSeconds, &out.CPU}, {"fsize", pol.FileSize, &out.FSize}, {"mem", pol.Memory, &out.Mem}} {
		if !c.given(l.flag) && l.set.From != "" {
			*l.dst = l.set.Value
		}
	}
	if !c.given("caches") && pol.Caches.From != "" {
		// policyfile refuses an untrusted project file that turns
		// sharing on: what is here is the operator's.
		out.Caches = pol.Caches.Value
	}
	if len(pol.HidePaths) > 0 {
		// The files' hidden paths add to the flags' (and to the
		// sandbox's built-in list): hiding only tightens.
		var hide []string
		if b.HidePaths != nil {
			hide = slices.Clone(*b.HidePaths)
		}
		hide = append(hide, pol.HidePaths...)
		out.HidePaths = &hide
	}
	return &out
}

// FetchHosts returns WebFetch's host lists: the flags', the files' where
// --allow-host is not given, and every file's denied hosts.
func (c *CommonFlags) FetchHosts(allow, deny []string) ([]string, []string) {
	pol, err := c.Settings()
	if err != nil || pol == nil {
		return allow, deny
	}
	if !c.given("allow-host") && pol.AllowHosts.From != "" {
		allow = pol.AllowHosts.Value
	}
	return allow, append(slices.Clone(deny), pol.DenyHosts...)
}

// policyReport is the policy part of helikon doctor's report.
// unmatchable reports whether a rule of the report can never match.
func (rep policyReport) unmatchable() bool {
	return slices.ContainsFunc(rep.Rules, func(r ruleReport) bool { return r.Problem != "" })
}

type policyReport struct {
	Files    []policyFileReport `json:"files"`
	Settings []settingReport    `json:"settings"`
	Rules    []ruleReport       `json:"rules"`
	Error    string             `json:"error,omitempty"`
}

type policyFileReport struct {
	Kind  string   `json:"kind"`
	Path  string   `json:"path"`
	Read  bool     `json:"read"`
	Notes []string `json:"notes,omitempty"`
}

type settingReport struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	From  string `json:"from"` // "flag", "default" or path:line:column
}

type ruleReport struct {
	List string `json:"list"`
	Rule string `json:"rule"`
	From string `json:"from"`           // "flag" or path:line:column
	Text string `json:"text,omitempty"` // as written in the file, when it differs
	// Problem says why the rule can never match (it names no tool there
	// is); every command that runs tools refuses the policy then.
	Problem string `json:"problem,omitempty"`
}

// reportPolicy describes the policy c's files and flags make.
func reportPolicy(c *CommonFlags) policyReport {
	var rep policyReport
	pol, err := c.Settings()
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	for _, s := range pol.Sources {
		rep.Files = append(rep.Files, policyFileReport{Kind: string(s.Kind), Path: s.Path, Read: true, Notes: s.Notes})
	}
	for _, a := range pol.Absent {
		rep.Files = append(rep.Files, policyFileReport{Kind: "absent", Path: a})
	}
	setting := func(name, flagName, value, from, def string) {
		switch {
		case flagName != "" && c.given(flagName):
			value, from = c.fs.Lookup(flagName).Value.String(), "flag --"+flagName
		case from == "":
			value, from = def, "default"
		}
		rep.Settings = append(rep.Settings, settingReport{name, value, from})
	}
	setting("mode", "mode", pol.Mode.Value.String(), pol.Mode.From, "default")
	setting("backend", "backend", pol.Backend.Value, pol.Backend.From, DefaultBackend+" where available")
	setting("timeout", "timeout", pol.Timeout.Value.String(), pol.Timeout.From, "the backend's")
	setting("cpu seconds", "cpu", fmt.Sprint(pol.CPUSeconds.Value), pol.CPUSeconds.From, "timeout + 5s")
	setting("file size", "fsize", fmt.Sprint(pol.FileSize.Value), pol.FileSize.From, "1 GiB")
	setting("memory", "mem", fmt.Sprint(pol.Memory.Value), pol.Memory.From, "no limit")
	setting("WebFetch hosts", "allow-host", strings.Join(pol.AllowHosts.Value, ", "), pol.AllowHosts.From, "any")
	for i, rules := range [3][]helikon.Rule{pol.Deny, pol.Ask, pol.Allow} {
		for _, r := range rules {
			o := pol.Origins[r]
			rr := ruleReport{List: [3]string{"deny", "ask", "allow"}[i], Rule: r.String(), From: o.From}
			if o.Text != r.String() {
				rr.Text = o.Text
			}
			rr.Problem = ruleProblem(i, r)
			rep.Rules = append(rep.Rules, rr)
		}
	}
	for i, flagRules := range [3]*[]string{c.Deny, c.Ask, c.Allow} {
		if flagRules == nil {
			continue
		}
		for _, r := range *flagRules {
			rr := ruleReport{List: [3]string{"deny", "ask", "allow"}[i], Rule: r, From: "flag"}
			if pr, err := helikon.ParseRule(r); err == nil {
				rr.Problem = ruleProblem(i, pr)
			}
			rep.Rules = append(rep.Rules, rr)
		}
	}
	return rep
}

// ruleProblem says why r, of list i (deny, ask, allow), can never match a
// built-in tool; "" when it can, or when it names an MCP tool (helikon run
// checks those once its servers are connected).
func ruleProblem(i int, r helikon.Rule) string {
	if strings.HasPrefix(r.Tool, "mcp__") {
		return ""
	}
	var p helikon.Permissions
	*[3]*[]helikon.Rule{&p.Deny, &p.Ask, &p.Allow}[i] = []helikon.Rule{r}
	var ute *helikon.UnknownToolError
	if errors.As(p.CheckTools(BuiltinTools), &ute) {
		return ute.Error()
	}
	return ""
}

// print writes the report for a person.
func (rep policyReport) print(w io.Writer) {
	fmt.Fprintln(w, "\nPolicy files (lowest precedence first; flags override them all, rules from all of them apply):")
	if rep.Error != "" {
		fmt.Fprintf(w, "  ERROR: %s\n", rep.Error)
		return
	}
	for _, f := range rep.Files {
		state := "read"
		if !f.Read {
			state = "not there"
		}
		fmt.Fprintf(w, "  %-8s %s (%s)\n", f.Kind, f.Path, state)
		for _, n := range f.Notes {
			fmt.Fprintf(w, "           note: %s\n", n)
		}
	}
	fmt.Fprintln(w, "Settings:")
	for _, s := range rep.Settings {
		fmt.Fprintf(w, "  %-15s %s (%s)\n", s.Name+":", s.Value, s.From)
	}
	if len(rep.Rules) > 0 {
		fmt.Fprintln(w, "Rules:")
	}
	for _, r := range rep.Rules {
		text := ""
		if r.Text != "" {
			text = ", written " + r.Text
		}
		fmt.Fprintf(w, "  %-5s %s (%s%s)\n", r.List, r.Rule, r.From, text)
		if r.Problem != "" {
			fmt.Fprintf(w, "        NEVER MATCHES (every command that runs tools refuses it): %s\n", r.Problem)
		}
	}
}

// BuiltinTools are the names of the CLI's built-in tools, the ones a rule
// may name besides MCP tools: helikon doctor, which runs no tool, checks
// the policy's rules against them (agentcli's tests keep the list equal to
// the tools it registers and to toolbox.Names, which this package may not
// import: toolbox links the web tools, which only helikon-agent carries).
var BuiltinTools = []string{"Bash", "BashInput", "BashList", "BashOutput", "Edit", "KillShell", "Read", "WebFetch", "WebSearch", "Write"}

// CheckRules checks p's rules (the policy files' and the flags') against
// the tools a command may call, and returns an error naming each rule that
// names none of them, with where it comes from: the file's path:line:column,
// or the flag. A rule for an MCP tool (mcp__…) is checked only when mcp is
// true, once the servers' tools are known (helikon run); other commands
// call no MCP tool, so such a rule cannot apply there.
func (c *CommonFlags) CheckRules(p *helikon.Permissions, tools []string, mcp bool) error {
	probs := c.unmatchable(p, tools, mcp)
	if len(probs) == 0 {
		return nil
	}
	errs := make([]error, len(probs))
	for i, pr := range probs {
		errs[i] = pr
	}
	return errors.Join(errs...)
}

// RuleError is an *helikon.UnknownToolError with where the rule comes from.
type RuleError struct {
	From string // "path:line:column", or the flag: "--deny", "--ask", "--allow"
	Err  *helikon.UnknownToolError
}

// Error returns where the rule is written, then what is wrong with it.
func (e *RuleError) Error() string {
	return e.From + ": " + e.Err.Error()
}

// Unwrap returns the *helikon.UnknownToolError, for errors.As.
func (e *RuleError) Unwrap() error { return e.Err }

// unmatchable returns the rules of p that name none of tools.
func (c *CommonFlags) unmatchable(p *helikon.Permissions, tools []string, mcp bool) []*RuleError {
	q := *p
	if !mcp {
		notMCP := func(r helikon.Rule) bool { return strings.HasPrefix(r.Tool, "mcp__") }
		q.Deny = slices.DeleteFunc(slices.Clone(p.Deny), notMCP)
		q.Ask = slices.DeleteFunc(slices.Clone(p.Ask), notMCP)
		q.Allow = slices.DeleteFunc(slices.Clone(p.Allow), notMCP)
	}
	err := q.CheckTools(tools)
	if err == nil {
		return nil
	}
	var origins map[helikon.Rule]policyfile.Origin
	if pol, _ := c.Settings(); pol != nil {
		origins = pol.Origins
	}
	var out []*RuleError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ute *helikon.UnknownToolError
		if !errors.As(e, &ute) {
			continue
		}
		from := "--" + ute.List
		if o, ok := origins[ute.Rule]; ok && o.List == ute.List {
			from = o.From
			if o.Text != ute.Rule.String() {
				// A Claude Code rule, written otherwise in its file.
				from += " (written " + o.Text + ")"
			}
		}
		out = append(out, &RuleError{From: from, Err: ute})
	}
	return out
}
