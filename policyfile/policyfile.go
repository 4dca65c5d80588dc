// Package policyfile reads the files a helikon permission policy is kept in:
// helikon's project file (.helikon/settings.json in the root), the user's
// file (helikon/settings.json in [os.UserConfigDir]) and, when asked, Claude
// Code's project settings (.claude/settings.json and
// .claude/settings.local.json in the root), and merges them into one
// [Settings]. It sits above the permission pipeline and below the CLI, which
// applies its flags on top.
//
// # Precedence
//
// Rules merge: a deny, ask or allow rule from any file applies (and a deny
// rule beats every allow rule, wherever each comes from). A single setting
// (mode, backend, limits, WebFetch's allowed hosts) comes from the file of
// highest precedence that sets it, lowest first: the user's file, Claude's
// settings.json, Claude's settings.local.json, helikon's project file; an
// untrusted project's files may only tighten it (see Trust). Command-line
// flags override them all.
//
// # Trust
//
// The project's files come with the project, which may not be the user's
// own: a cloned repository could ship a file that allows every command. So
// a project file may only tighten the policy until the project is trusted:
// one the user's file lists under trustedProjects, or one the caller says is
// trusted ([Options].TrustProject; for Claude's files, asking for them,
// [Options].Claude, is trusting them). The user's file and the trusted files
// make the policy an untrusted file is measured against, and [Load] fails
// (an error wrapping [ErrUntrusted]) naming each thing the untrusted file
// would loosen, rather than silently dropping it:
//
//   - an allow rule;
//   - a mode looser than the trusted files' (or than default, where none
//     sets one), in the order bypass, accept-edits, default, plan,
//     dont-ask;
//   - the host backend, or another backend than the one a trusted file
//     names: backends are not ordered by containment, so no change of one
//     can be shown to tighten;
//   - a limit above the trusted files' (limits.timeout, cpuSeconds,
//     fileSizeBytes, memoryBytes), or, where none sets it, above the
//     backends' default (30s, the timeout plus 5 s of CPU, 1 GiB files; an
//     address space has no default, so any limit on it tightens). A zero
//     limit is the same as one not written;
//   - a webFetch.allowHosts pattern that the trusted files' allowed hosts do
//     not cover (an untrusted list narrows a trusted one, or "any host"
//     where none is set, and never widens it).
//
// What tightens (deny and ask rules, denied hosts and the credential
// locations the OS sandbox hides, sandbox.hidePaths, which add up across
// files, and each setting above made tighter) always applies, and, taking
// precedence over the trusted files, the tighter value is the one the
// policy has and says it comes from. Command-line flags still override
// every file: the user typed them. A project is its directory, not a
// spelling of it: the root and the trustedProjects entries are compared
// with their symbolic links resolved, and the project files' paths in
// [Settings].Protected are spelt under the resolved root.
//
// # Claude Code's rules
//
// Each Claude Code rule is mapped to helikon rules with the same meaning,
// and a rule helikon cannot honour exactly is an error naming it, never a
// broader rule. Deny and ask rules may become broader (they then refuse or
// ask about more), allow rules never do:
//
//   - Bash(cmd args) is that command exactly: Bash(=cmd args) for allow,
//     Bash(cmd args) (also with further arguments) for deny and ask;
//     Bash(cmd args:*) and Bash(cmd args *) are it followed by anything,
//     helikon's Bash(cmd args). Other wildcards, quotes, $ and shell
//     operators are refused.
//   - Read(p), Edit(p): //abs is absolute, ~/p is in the home directory, /p
//     and p/q are anchored at the root, a bare name (.env, *.pem) matches at
//     any depth within the root (/**/.env); ./ is dropped. Negations (!p),
//     . and .. are refused, as are directory-only patterns (p/) in allow.
//     A bare Edit rule covers Write too, as in Claude Code. helikon compares
//     paths without case (as a case-insensitive file system would); a
//     mapped rule differs from a case-sensitive reading in case only.
//   - WebFetch(domain:example.com) is that host only (=example.com) for
//     allow, and the host with its subdomains for deny and ask.
//   - mcp__server__tool names that tool; helikon names an MCP server's tools
//     --mcp-prefix + name, so the rule applies with --mcp-prefix
//     mcp__server__ (helikon run refuses a deny or ask rule that names none
//     of its tools). A whole server (mcp__server) or a wildcard is refused.
//   - Tool names are compared as written, as helikon compares them: a rule
//     for bash(...) or Bash(...) spelt otherwise is not mapped to Bash but
//     refused, naming the tool it likely means. helikon does not rely on
//     Claude Code reading lowercase names as the tools they resemble; a
//     deny rule that silently matched nothing would be worse than none.
//     The merged rules still parse for tools helikon does not have (Glob,
//     a mistyped name): the commands check them against their tools
//     ([helikon.Permissions.CheckTools]) and refuse a rule that names none.
//   - defaultMode is the mode (default, acceptEdits, plan, dontAsk,
//     bypassPermissions); disableBypassPermissionsMode "disable" makes the
//     bypass mode an error. additionalDirectories are not granted: every
//     tool stays confined to the root (a note says so).
//
// Codex execpolicy files (prefix_rule(...)) are not read: they are Starlark
// programs, whose evaluation helikon would have to reproduce exactly to
// honour them, and their prefix rules say nothing of files or hosts.
package policyfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/hostmatch"
)

// ProjectFile is helikon's project policy file, relative to the root.
const ProjectFile = ".helikon/settings.json"

// ClaudeFiles are Claude Code's project settings, relative to the root,
// lowest precedence first.
var ClaudeFiles = []string{".claude/settings.json", ".claude/settings.local.json"}

// maxFileBytes bounds a policy file; a settings file is a few kilobytes.
const maxFileBytes = 1 << 20

// UserFile returns the path of the user's policy file,
// helikon/settings.json in [os.UserConfigDir].
func UserFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("user policy file: %w", err)
	}
	return filepath.Join(dir, "helikon", "settings.json"), nil
}

// Kind says where a file comes from.
type Kind string

// The kinds of policy file.
const (
	KindUser    Kind = "user"
	KindProject Kind = "project"
	KindClaude  Kind = "claude"
)

// Setting is a single setting and the place it was set at
// ("path:line:column"), "" when no file set it.
type Setting[T any] struct {
	Value T
	From  string
}

// Origin is where a rule in [Settings] comes from.
type Origin struct {
	From string // "path:line:column"
	List string // allow, ask or deny
	Text string // the rule as written there
}

// Source is one file that was read.
type Source struct {
	Path  string
	Kind  Kind
	Notes []string // what the file asks that is not applied, and why
}

// Settings is the merged content of the policy files: every file's rules,
// and each single setting with the file it comes from.
type Settings struct {
	// Sources are the files read, lowest precedence first.
	Sources []Source
	// Absent are the files looked for and not found.
	Absent []string
	// Deny, Ask and Allow are every file's rules.
	Deny, Ask, Allow []helikon.Rule
	// Origins says where each rule comes from.
	Origins map[helikon.Rule]Origin
	// Mode is the permission mode.
	Mode Setting[helikon.PermissionMode]
	// NoBypass, when not "", is where bypass mode was disabled.
	NoBypass string
	// Backend names the execution backend.
	Backend Setting[string]
	// Timeout, CPUSeconds, FileSize and Memory are the command limits;
	// zero (From "") is the backend's default.
	Timeout    Setting[time.Duration]
	CPUSeconds Setting[int64]
	FileSize   Setting[int64]
	Memory     Setting[int64]
	// AllowHosts are the only hosts WebFetch may fetch (empty: any).
	AllowHosts Setting[[]string]
	// DenyHosts are hosts WebFetch never fetches, from every file.
	DenyHosts []string
	// HidePaths are more credential locations the OS sandbox never lets
	// commands read (sandbox.hidePaths), from every file: absolute, or
	// relative to the home directory (a leading ~/ is dropped). They add
	// to the sandbox's built-in list; nothing removes from it. A project
	// file may add them untrusted: hiding more only tightens.
	HidePaths []string
	// Caches is how long the OS sandbox keeps the tools' named caches
	// (sandbox.caches): "session" (the default: no sharing), "project"
	// (across the sessions of one project) or "user" (across every
	// project). Sharing is the operator's choice: an untrusted project
	// file may set "session" but never turn sharing on (ErrUntrusted),
	// and no key names a cache's directory.
	Caches Setting[string]
	// Protected are the absolute paths of every policy file that applies
	// to the root, read or not: no tool call may write them.
	Protected []string
}

// Options says which files [Load] reads.
type Options struct {
	// Root is the absolute sandbox root, where project files are. [Load]
	// resolves its symbolic links: the project files' paths in
	// [Settings].Protected and the trustedProjects comparison use the
	// resolved spelling, whatever link the root was reached through.
	Root string
	// UserFile is the user's file; "" means [UserFile]'s. NoUserFile skips it.
	UserFile   string
	NoUserFile bool
	// Claude reads Claude Code's settings (they are also read when a
	// helikon file sets claudeSettings) and trusts them.
	Claude bool
	// TrustProject trusts the project's files (see the package doc).
	TrustProject bool
	// Home resolves ~ in Claude Code rules; "" means the user's.
	Home string
}

// settings is helikon's file format.
type settings struct {
	Permissions struct {
		Allow []string `json:"allow"`
		Ask   []string `json:"ask"`
		Deny  []string `json:"deny"`
		Mode  string   `json:"mode"`
	} `json:"permissions"`
	ClaudeSettings bool   `json:"claudeSettings"`
	Backend        string `json:"backend"`
	Limits         struct {
		Timeout       string `json:"timeout"`
		CPUSeconds    int64  `json:"cpuSeconds"`
		FileSizeBytes int64  `json:"fileSizeBytes"`
		MemoryBytes   int64  `json:"memoryBytes"`
	} `json:"limits"`
	WebFetch struct {
		AllowHosts []string `json:"allowHosts"`
		DenyHosts  []string `json:"denyHosts"`
	} `json:"webFetch"`
	Sandbox struct {
		HidePaths []string `json:"hidePaths"`
		Caches    string   `json:"caches"`
	} `json:"sandbox"`
	TrustedProjects []string `json:"trustedProjects"`
}

// parsed is one file read, before merging.
type parsed struct {
	src      Source
	doc      *doc
	rules    [3][]ruleAt // deny, ask, allow
	mode     *Setting[helikon.PermissionMode]
	noBypass string
	claude   bool
	set      settings
	trusted  []string
	// The single settings the file sets, nil where it sets none.
	backend               *Setting[string]
	timeout               *Setting[time.Duration]
	cpu, fileSize, memory *Setting[int64]
	allowHosts            *Setting[[]string]
	caches                *Setting[string]
}

type ruleAt struct {
	rules []helikon.Rule
	o     Origin
}

var lists = [3]string{"deny", "ask", "allow"}

// Load reads the policy files o names. A file that does not exist is
// skipped; one that cannot be read, or whose content is invalid (an error
// wrapping [ErrInvalid], with its line and column), is an error.
func Load(o *Options) (*Settings, error) {
	home := o.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	pol := &Settings{Origins: map[helikon.Rule]Origin{}}
	var files []*parsed
	read := func(path string, kind Kind) (*parsed, error) {
		p, err := readFile(path, kind, home)
		if p == nil && err == nil {
			pol.Absent = append(pol.Absent, path)
		}
		if p != nil {
			files = append(files, p)
		}
		return p, err
	}
	var user *parsed
	if !o.NoUserFile {
		path := o.UserFile
		if path == "" {
			var err error
			if path, err = UserFile(); err != nil {
				return nil, err
			}
		}
		var err error
		if user, err = read(path, KindUser); err != nil {
			return nil, err
		}
		pol.Protected = append(pol.Protected, path)
	}
	root := realPath(o.Root)
	projectPath := filepath.Join(root, filepath.FromSlash(ProjectFile))
	project, err := readFile(projectPath, KindProject, home)
	if err != nil {
		return nil, err
	}
	claude := o.Claude || user != nil && user.claude || project != nil && project.claude
	for _, f := range ClaudeFiles {
		path := filepath.Join(root, filepath.FromSlash(f))
		pol.Protected = append(pol.Protected, path)
		if claude {
			if _, err := read(path, KindClaude); err != nil {
				return nil, err
			}
		}
	}
	pol.Protected = append(pol.Protected, projectPath)
	if project != nil {
		files = append(files, project)
	} else {
		pol.Absent = append(pol.Absent, projectPath)
	}
	trusted := o.TrustProject
	if user != nil {
		for _, t := range user.trusted {
			// Resolved, as the root is: an entry naming the project
			// through a link is the project.
			trusted = trusted || realPath(t) == root
		}
	}
	// The trusted files come first in files (the user's, then Claude's
	// when asked for, then the project's when trusted), so an untrusted
	// file, which may only tighten what they make, also takes precedence
	// over all of them: the merged policy is never looser than theirs.
	base := &Settings{Origins: map[helikon.Rule]Origin{}}
	for _, f := range files {
		if f.src.Kind == KindUser || trusted || f.src.Kind == KindClaude && o.Claude {
			base.merge(f)
			continue
		}
		if err := f.checkTightenOnly(base); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		pol.merge(f)
	}
	return pol, nil
}

// realPath returns p, clean, with the symbolic links of its longest existing
// leading part resolved; the rest is kept as written (a project whose
// .helikon directory does not exist yet still has one name for it).
func realPath(p string) string {
	p = filepath.Clean(p)
	var rest []string
	for d := p; ; d = filepath.Dir(d) {
		if real, err := filepath.EvalSymlinks(d); err == nil {
			return filepath.Join(append([]string{real}, rest...)...)
		}
		if filepath.Dir(d) == d {
			return p
		}
		rest = append([]string{filepath.Base(d)}, rest...)
	}
}

// readFile reads and parses one file; it returns nil, nil when the file does
// not exist.
func readFile(path string, kind Kind, home string) (*parsed, error) {
	fh, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading policy file: %w", err)
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading policy file %s: %w", path, err)
	}
	if len(data) > maxFileBytes {
		return nil, &Error{Path: path, Msg: fmt.Sprintf("larger than %d bytes", maxFileBytes)}
	}
	d, err := parseDoc(path, data)
	if err != nil {
		return nil, err
	}
	p := &parsed{src: Source{Path: path, Kind: kind}, doc: d}
	if kind == KindClaude {
		return p, p.parseClaude(home)
	}
	return p, p.parseHelikon()
}

// parseHelikon reads helikon's format.
func (p *parsed) parseHelikon() error {
	d := p.doc
	var top map[string]json.RawMessage
	if err := d.decode("", d.data, &top); err != nil {
		return err
	}
	known := []string{"permissions", "claudeSettings", "backend", "limits", "webFetch", "sandbox"}
	if p.src.Kind == KindUser {
		known = append(known, "trustedProjects")
	}
	if err := d.checkKeys("", top, known...); err != nil {
		return err
	}
	for _, sub := range [][2]string{{"permissions", "allow ask deny mode"}, {"limits", "timeout cpuSeconds fileSizeBytes memoryBytes"}, {"webFetch", "allowHosts denyHosts"}, {"sandbox", "hidePaths caches"}} {
		if raw, ok := top[sub[0]]; ok {
			var obj map[string]json.RawMessage
			if err := d.decode(sub[0], raw, &obj); err != nil {
				return err
			}
			if err := d.checkKeys(sub[0], obj, strings.Fields(sub[1])...); err != nil {
				return err
			}
		}
	}
	if err := d.decode("", d.data, &p.set); err != nil {
		return err
	}
	s := &p.set
	for i, list := range [3][]string{s.Permissions.Deny, s.Permissions.Ask, s.Permissions.Allow} {
		for j, text := range list {
			key := fmt.Sprintf("permissions.%s[%d]", lists[i], j)
			r, err := helikon.ParseRule(text)
			if err != nil {
				return d.errKey(key, "%v", err)
			}
			p.rules[i] = append(p.rules[i], ruleAt{[]helikon.Rule{r}, Origin{From: p.at(key), List: lists[i], Text: text}})
		}
	}
	if s.Permissions.Mode != "" {
		m, err := helikon.ParseMode(s.Permissions.Mode)
		if err != nil {
			return d.errKey("permissions.mode", "%v", err)
		}
		p.mode = &Setting[helikon.PermissionMode]{m, p.at("permissions.mode")}
	}
	if s.Backend != "" {
		p.backend = &Setting[string]{s.Backend, p.at("backend")}
	}
	if s.Limits.Timeout != "" {
		t, err := time.ParseDuration(s.Limits.Timeout)
		if err != nil {
			return d.errKey("limits.timeout", "limits.timeout: %v (write it as 30s or 2m)", err)
		}
		if t < 0 {
			return d.errKey("limits.timeout", "limits.timeout must not be negative")
		}
		// Zero is the backend's default, as for the other limits, where
		// a zero cannot be told from a limit not written.
		if t > 0 {
			p.timeout = &Setting[time.Duration]{t, p.at("limits.timeout")}
		}
	}
	for _, l := range []struct {
		key string
		v   int64
		dst **Setting[int64]
	}{{"limits.cpuSeconds", s.Limits.CPUSeconds, &p.cpu}, {"limits.fileSizeBytes", s.Limits.FileSizeBytes, &p.fileSize}, {"limits.memoryBytes", s.Limits.MemoryBytes, &p.memory}} {
		if l.v < 0 {
			return d.errKey(l.key, "%s must not be negative", l.key)
		}
		if l.v > 0 {
			*l.dst = &Setting[int64]{l.v, p.at(l.key)}
		}
	}
	for i, hosts := range [2][]string{s.WebFetch.AllowHosts, s.WebFetch.DenyHosts} {
		for j, h := range hosts {
			if !hostmatch.Valid(h) {
				key := fmt.Sprintf("webFetch.%s[%d]", [2]string{"allowHosts", "denyHosts"}[i], j)
				return d.errKey(key, "%q is not a host pattern such as example.com or *.example.com", h)
			}
		}
	}
	if len(s.WebFetch.AllowHosts) > 0 {
		p.allowHosts = &Setting[[]string]{s.WebFetch.AllowHosts, p.at("webFetch.allowHosts")}
	}
	for j, h := range s.Sandbox.HidePaths {
		if msg := hidePathProblem(h); msg != "" {
			return d.errKey(fmt.Sprintf("sandbox.hidePaths[%d]", j), "%q: %s", h, msg)
		}
	}
	switch s.Sandbox.Caches {
	case "":
	case "session", "project", "user":
		p.caches = &Setting[string]{s.Sandbox.Caches, p.at("sandbox.caches")}
	default:
		return d.errKey("sandbox.caches", "%q: want session (no sharing), project or user", s.Sandbox.Caches)
	}
	for j, t := range s.TrustedProjects {
		if !filepath.IsAbs(t) {
			return d.errKey(fmt.Sprintf("trustedProjects[%d]", j), "trustedProjects holds absolute directories, not %q", t)
		}
	}
	p.trusted = s.TrustedProjects
	p.claude = s.ClaudeSettings
	return nil
}

// parseClaude reads the permissions of a Claude Code settings file; its other
// settings are Claude Code's own.
func (p *parsed) parseClaude(home string) error {
	d := p.doc
	var top map[string]json.RawMessage
	if err := d.decode("", d.data, &top); err != nil {
		return err
	}
	raw, ok := top["permissions"]
	if !ok {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := d.decode("permissions", raw, &obj); err != nil {
		return err
	}
	if err := d.checkKeys("permissions", obj, "allow", "ask", "deny", "defaultMode", "additionalDirectories", "disableBypassPermissionsMode"); err != nil {
		return err
	}
	var perms struct {
		Allow                        []string `json:"allow"`
		Ask                          []string `json:"ask"`
		Deny                         []string `json:"deny"`
		DefaultMode                  string   `json:"defaultMode"`
		AdditionalDirectories        []string `json:"additionalDirectories"`
		DisableBypassPermissionsMode string   `json:"disableBypassPermissionsMode"`
	}
	if err := d.decode("permissions", raw, &perms); err != nil {
		return err
	}
	for i, list := range [3][]string{perms.Deny, perms.Ask, perms.Allow} {
		for j, text := range list {
			key := fmt.Sprintf("permissions.%s[%d]", lists[i], j)
			if tool := claudeOnlyTool(text); tool != "" {
				p.src.Notes = append(p.src.Notes, fmt.Sprintf("%s: %s rule %q is not applied: %s is Claude Code's own tool, which helikon does not have", p.at(key), lists[i], text, tool))
				continue
			}
			rules, err := claudeRule(text, lists[i], home)
			if err != nil {
				return d.errKey(key, "%v", err)
			}
			for _, r := range rules {
				if _, err := helikon.ParseRule(r.String()); err != nil {
					return d.errKey(key, "rule %q maps to %s, which helikon cannot read: %v", text, r, err)
				}
			}
			p.rules[i] = append(p.rules[i], ruleAt{rules, Origin{From: p.at(key), List: lists[i], Text: text}})
		}
	}
	if perms.DefaultMode != "" {
		m, err := helikon.ParseMode(perms.DefaultMode)
		if err != nil {
			return d.errKey("permissions.defaultMode", "defaultMode %q has no helikon equivalent: %v", perms.DefaultMode, err)
		}
		p.mode = &Setting[helikon.PermissionMode]{m, p.at("permissions.defaultMode")}
	}
	switch perms.DisableBypassPermissionsMode {
	case "":
	case "disable":
		p.noBypass = p.at("permissions.disableBypassPermissionsMode")
	default:
		return d.errKey("permissions.disableBypassPermissionsMode", "disableBypassPermissionsMode must be \"disable\"")
	}
	if len(perms.AdditionalDirectories) > 0 {
		p.src.Notes = append(p.src.Notes, fmt.Sprintf("additionalDirectories %v are not granted: helikon confines every tool to the root", perms.AdditionalDirectories))
	}
	return nil
}

// at returns "path:line:column" of the value at key.
func (p *parsed) at(key string) string {
	e := p.doc.errKey(key, "")
	return fmt.Sprintf("%s:%d:%d", e.Path, e.Line, e.Column)
}

// modeOrder ranks the modes loosest first, as docs/design.md orders them.
var modeOrder = map[helikon.PermissionMode]int{helikon.ModeBypass: 0, helikon.ModeAcceptEdits: 1, helikon.ModeDefault: 2, helikon.ModePlan: 3, helikon.ModeDontAsk: 4}

// checkTightenOnly fails when an untrusted project file loosens the policy
// that base, the trusted files merged, makes: an allow rule; a mode looser
// than base's; the host backend, or another backend than the one base
// names (backends are not ordered by containment, so a change cannot be
// shown to tighten); a limit above base's, or above the default where base
// sets none; a WebFetch host that base's allowed hosts do not cover. A
// setting no file sets is compared with the value the run would have
// without it.
func (p *parsed) checkTightenOnly(base *Settings) error {
	var loosen []string
	add := func(format string, args ...any) { loosen = append(loosen, fmt.Sprintf(format, args...)) }
	was := func(value any, from, def string) string {
		if from == "" {
			return def
		}
		return fmt.Sprintf("%v (%s)", value, from)
	}
	for _, r := range p.rules[2] {
		add("allow rule %s (%s)", r.o.Text, r.o.From)
	}
	if m := p.mode; m != nil && modeOrder[m.Value] < modeOrder[base.Mode.Value] {
		add("mode %s (%s), looser than %s", m.Value, m.From, was(base.Mode.Value, base.Mode.From, "the default mode"))
	}
	if b := p.backend; b != nil {
		switch {
		case b.Value == base.Backend.Value:
		case b.Value == "host":
			add("backend host (%s), which contains nothing", b.From)
		case base.Backend.From != "":
			add("backend %s (%s) instead of %s", b.Value, b.From, was(base.Backend.Value, base.Backend.From, ""))
		}
	}
	if c := p.caches; c != nil && c.Value != "session" && c.Value != base.Caches.Value {
		// Sharing reaches later sessions (other projects' with user):
		// only an operator turns it on or widens it.
		add("sandbox.caches %s (%s), sharing caches across sessions, instead of %s", c.Value, c.From, was(base.Caches.Value, base.Caches.From, "session"))
	}
	baseTimeout := backend.DefaultTimeout
	if base.Timeout.From != "" {
		baseTimeout = base.Timeout.Value
	}
	if t := p.timeout; t != nil && t.Value > baseTimeout {
		add("limits.timeout %s (%s), longer than %s", t.Value, t.From, was(base.Timeout.Value, base.Timeout.From, "the default "+backend.DefaultTimeout.String()))
	}
	// Where no trusted file sets them, the backends derive the CPU limit
	// from the timeout and default the file size; the address space has no
	// default, so any limit on it tightens.
	defCPU := backend.ResourceLimits{}.WithDefaults(baseTimeout).CPUSeconds
	for _, l := range []struct {
		key      string
		set, was *Setting[int64]
		def      int64
		defText  string
	}{
		{"limits.cpuSeconds", p.cpu, &base.CPUSeconds, defCPU, fmt.Sprintf("the default %d (the timeout and %s)", defCPU, backend.CPUSlack)},
		{"limits.fileSizeBytes", p.fileSize, &base.FileSize, backend.DefaultFileSize, fmt.Sprintf("the default %d", backend.DefaultFileSize)},
		{"limits.memoryBytes", p.memory, &base.Memory, 0, ""},
	} {
		limit := l.def
		if l.was.From != "" {
			limit = l.was.Value
		}
		if l.set != nil && limit > 0 && l.set.Value > limit {
			add("%s %d (%s), above %s", l.key, l.set.Value, l.set.From, was(l.was.Value, l.was.From, l.defText))
		}
	}
	if h := p.allowHosts; h != nil && base.AllowHosts.From != "" {
		var wider []string
		for _, sub := range h.Value {
			if !slices.ContainsFunc(base.AllowHosts.Value, func(pat string) bool { return hostmatch.Covers(pat, sub) }) {
				wider = append(wider, sub)
			}
		}
		if len(wider) > 0 {
			add("webFetch.allowHosts %s (%s), outside %s (%s)", strings.Join(wider, ", "), h.From, strings.Join(base.AllowHosts.Value, ", "), base.AllowHosts.From)
		}
	}
	if len(loosen) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s is a project file of a project not trusted, and it would loosen the policy: %s; if you trust this project, pass --trust-project or list %s under trustedProjects in your user policy file", ErrUntrusted, p.src.Path, strings.Join(loosen, "; "), filepath.Dir(filepath.Dir(p.src.Path)))
}

// ErrUntrusted is wrapped by the error [Load] returns when a project file of
// an untrusted project would loosen the policy.
var ErrUntrusted = errors.New("untrusted project policy")

// merge adds f to the policy; f has higher precedence than what came before.
func (pol *Settings) merge(f *parsed) {
	pol.Sources = append(pol.Sources, f.src)
	dst := [3]*[]helikon.Rule{&pol.Deny, &pol.Ask, &pol.Allow}
	for i := range f.rules {
		for _, ra := range f.rules[i] {
			for _, r := range ra.rules {
				if !slices.Contains(*dst[i], r) {
					*dst[i] = append(*dst[i], r)
				}
				if _, ok := pol.Origins[r]; !ok {
					pol.Origins[r] = ra.o
				}
			}
		}
	}
	if f.mode != nil {
		pol.Mode = *f.mode
	}
	if f.noBypass != "" {
		pol.NoBypass = f.noBypass
	}
	if f.backend != nil {
		pol.Backend = *f.backend
	}
	if f.timeout != nil {
		pol.Timeout = *f.timeout
	}
	for _, l := range [3][2]*Setting[int64]{{&pol.CPUSeconds, f.cpu}, {&pol.FileSize, f.fileSize}, {&pol.Memory, f.memory}} {
		if l[1] != nil {
			*l[0] = *l[1]
		}
	}
	if f.allowHosts != nil {
		pol.AllowHosts = *f.allowHosts
	}
	if f.caches != nil {
		pol.Caches = *f.caches
	}
	pol.DenyHosts = append(pol.DenyHosts, f.set.WebFetch.DenyHosts...)
	for _, h := range f.set.Sandbox.HidePaths {
		if !slices.Contains(pol.HidePaths, h) {
			pol.HidePaths = append(pol.HidePaths, h)
		}
	}
}

// hidePathProblem says what is wrong with a sandbox.hidePaths entry, or
// "" when it names a path: absolute or relative to the home directory,
// without . or .. elements (a hidden path is compared as written, so one
// that climbs out of the home would hide something else than it reads).
func hidePathProblem(h string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(h, "~/"), "/")
	if strings.TrimSpace(rel) == "" {
		return "sandbox.hidePaths holds paths, not an empty string or the root"
	}
	for _, el := range strings.Split(strings.TrimSuffix(rel, "/"), "/") {
		if el == "" || el == "." || el == ".." {
			return "write the path plainly: no . or .. elements, no doubled slashes"
		}
	}
	return ""
}
