package agentcli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon/cli"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/tool/webfetch"
	"github.com/paigasus/helikon/tool/websearch"
)

func init() {
	cli.RegisterAgent("policy", runPolicy)
}

// CheckJSON is helikon policy check's --json output.
type CheckJSON struct {
	Tool     string          `json:"tool"`
	Args     json.RawMessage `json:"args"`
	Mode     string          `json:"mode"`
	Decision string          `json:"decision"`       // allow, deny or ask
	Stage    helikon.Stage   `json:"stage"`          // what decided: deny_rule, guard, ask_rule, allow_rule, mode, policy, approval
	Rule     string          `json:"rule,omitempty"` // the rule that decided, in helikon's form
	From     string          `json:"from,omitempty"` // where the rule is written: flag, or path:line:column
	Written  string          `json:"written,omitempty"`
	Reason   string          `json:"reason"`
	Targets  *CheckTargets   `json:"targets,omitempty"`
	// Matches, when allow rules decided, are the rule that matched each
	// target of the call (each command of a Bash line), in order.
	Matches []CheckMatch `json:"matches,omitempty"`
	// NeverMatches are the rules of the policy that name no tool there is,
	// each with where it is written and the tool it likely means: every
	// command that runs tools refuses such a policy.
	NeverMatches []string `json:"never_matches,omitempty"`
}

// CheckTargets is what the tool reported the call would touch, in the
// output's snake_case (helikon.Targets has no JSON form of its own).
type CheckTargets struct {
	Paths      []CheckPath    `json:"paths,omitempty"`
	Commands   []CheckCommand `json:"commands,omitempty"`
	Hosts      []string       `json:"hosts,omitempty"`
	Unresolved string         `json:"unresolved,omitempty"` // why the tool could not say, when it could not
}

// CheckPath is one path a call would read or write.
type CheckPath struct {
	Path     string `json:"path"`
	Root     string `json:"root,omitempty"`
	Access   string `json:"access"`             // read or write
	Computed bool   `json:"computed,omitempty"` // computed at run time
}

// CheckCommand is one command a Bash call would run.
type CheckCommand struct {
	Args       []string `json:"args"`
	Dynamic    []bool   `json:"dynamic,omitempty"`
	Dirs       []string `json:"dirs,omitempty"`
	DirUnknown string   `json:"dir_unknown,omitempty"`
}

func checkTargets(t helikon.Targets) *CheckTargets {
	out := &CheckTargets{Hosts: t.Hosts, Unresolved: t.Unresolved}
	for _, p := range t.Paths {
		access := "read"
		if p.Access == helikon.AccessWrite {
			access = "write"
		}
		out.Paths = append(out.Paths, CheckPath{Path: p.Path, Root: p.Root, Access: access, Computed: p.Computed})
	}
	for _, c := range t.Commands {
		out.Commands = append(out.Commands, CheckCommand{Args: c.Args, Dynamic: c.Dynamic, Dirs: c.Dirs, DirUnknown: c.DirUnknown})
	}
	return out
}

// CheckMatch is one allow rule that matched one target of the call.
type CheckMatch struct {
	Rule    string `json:"rule"`
	Target  string `json:"target,omitempty"` // the command, path or host it matched
	From    string `json:"from,omitempty"`
	Written string `json:"written,omitempty"`
}

const policyCheckSynopsis = `policy check [--root DIR] [--json] [flags] TOOL ARG

Prints what the permission pipeline decides for one call of TOOL, and what
decided it (a deny, ask or allow rule and where it is written, a guard, the
mode, or helikon run's default of asking before anything that is not
read-only), without running anything. ARG is the command line for Bash, the
path for Read, Write and Edit, the URL for WebFetch, the query for
WebSearch, or the tool's JSON arguments (for an MCP server's tool,
mcp__SERVER__TOOL, as helikon run --mcp and helikon mcp wrap name it: give
its effect with --effect read_only when the server annotates it
readOnlyHint, and --wrap to decide as mcp wrap does). The policy is the one helikon run
would use in --root: its policy files and the rule flags. A rule that can
never match (it names no tool, as bash(rm) for Bash(rm)) is listed: every
command that runs tools refuses it. Exits 0 whatever the decision (use
--json to branch on it), 125 on a usage error, an invalid policy file or
a rule that can never match (the decision is still printed).`

func runPolicy(ctx context.Context, env *cli.Env, args []string) int {
	if len(args) == 0 || args[0] != "check" {
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			fmt.Fprintln(env.Stdout, "Usage: helikon "+policyCheckSynopsis)
			return cli.ExitOK
		}
		return cli.Failf(env, cli.ExitUsage, "policy: want a subcommand: helikon %s", strings.SplitN(policyCheckSynopsis, "\n", 2)[0])
	}
	fs := cli.NewFlagSet("policy check", policyCheckSynopsis, env.Stderr)
	common := cli.AddCommonFlags(fs)
	tflags := AddToolFlags(fs)
	jsonOut := fs.Bool("json", false, "print the decision as JSON")
	effect := fs.String("effect", "", "for an MCP tool (mcp__SERVER__TOOL): its `EFFECT` from the server's annotations, read_only (readOnlyHint) or side_effect (default)")
	wrap := fs.Bool("wrap", false, "decide as helikon mcp wrap does (no default question before calls that are not read-only; the MCP host asks its own) rather than as helikon run")
	pos, done, status := cli.ParseArgs(fs, env, args[1:])
	if done {
		return status
	}
	if len(pos) != 2 {
		return cli.UsageFailf(env, fs, "policy check: want TOOL and ARG, as in: helikon policy check Bash 'git push'")
	}
	root, err := common.RootDir()
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "policy check: %v", err)
	}
	perms, mode, err := common.Permissions()
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "policy check: %v", err)
	}
	te := &ToolEnv{Ctx: ctx, Env: env, Root: root, Common: common, DryRun: true, BackendFlags: &cli.BackendFlags{}}
	var t helikon.Tool[App]
	if strings.HasPrefix(pos[0], "mcp__") {
		t, err = mcpCheckTool(pos[0], *effect)
	} else if *effect != "" {
		err = fmt.Errorf("--effect is for MCP tools (mcp__SERVER__TOOL); %s's effect is its own", pos[0])
	} else {
		t, err = tflags.Build(te, pos[0])
	}
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "policy check: %v", err)
	}
	callArgs, err := checkArgs(pos[0], pos[1])
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "policy check: %v", err)
	}
	policy := helikon.Policy(askUnlessReadOnly)
	if *wrap {
		policy = nil
	}
	res := checkCall(ctx, t, perms, policy, mode, callArgs)
	status = cli.ExitOK
	if err := common.CheckRules(perms, tflags.Names(true), false); err != nil {
		for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
			res.NeverMatches = append(res.NeverMatches, e.Error())
		}
		status = cli.ExitUsage
	}
	if pol, _ := common.Settings(); pol != nil {
		origin := func(rule string) (from, written string) {
			from = "flag"
			if r, err := helikon.ParseRule(rule); err == nil {
				if o, ok := pol.Origins[r]; ok {
					from = o.From
					if o.Text != rule {
						written = o.Text
					}
				}
			}
			return from, written
		}
		if res.Rule != "" {
			res.From, res.Written = origin(res.Rule)
		}
		for i := range res.Matches {
			res.Matches[i].From, res.Matches[i].Written = origin(res.Matches[i].Rule)
		}
	}
	if *jsonOut {
		b, _ := json.Marshal(res)
		fmt.Fprintln(env.Stdout, string(b))
		return status
	}
	fmt.Fprintf(env.Stdout, "%s: %s %s in %s mode\n", res.Decision, res.Tool, safeText(string(res.Args)), res.Mode)
	written := func(w string) string {
		if w == "" {
			return ""
		}
		return ", written " + safeText(w)
	}
	switch {
	case len(res.Matches) > 1:
		fmt.Fprintf(env.Stdout, "  decided by: allow rules, one for each command or target:\n")
		for _, m := range res.Matches {
			fmt.Fprintf(env.Stdout, "    %s (%s%s) for %s\n", safeText(m.Rule), m.From, written(m.Written), safeText(strconv.Quote(m.Target)))
		}
	case res.Rule != "":
		fmt.Fprintf(env.Stdout, "  decided by: %s rule %s (%s%s)\n", strings.TrimSuffix(string(res.Stage), "_rule"), safeText(res.Rule), res.From, written(res.Written))
	case res.Stage == helikon.StageApproval || res.Stage == helikon.StagePolicy:
		fmt.Fprintf(env.Stdout, "  decided by: %s (helikon run asks before any call that is not read-only)\n", res.Stage)
	default:
		fmt.Fprintf(env.Stdout, "  decided by: %s\n", res.Stage)
	}
	fmt.Fprintf(env.Stdout, "  reason: %s\n", safeText(res.Reason))
	for _, m := range res.NeverMatches {
		fmt.Fprintf(env.Stdout, "  NEVER MATCHES (every command that runs tools refuses this policy): %s\n", safeText(m))
	}
	return status
}

// checkArgs turns ARG into the tool's JSON arguments.
func checkArgs(tool, arg string) (json.RawMessage, error) {
	if s := strings.TrimSpace(arg); strings.HasPrefix(s, "{") {
		if !json.Valid([]byte(s)) {
			return nil, fmt.Errorf("ARG starts with { but is not valid JSON")
		}
		return json.RawMessage(s), nil
	}
	var v any
	switch tool {
	case bashtool.Name:
		v = map[string]string{"command": arg}
	case "Read":
		v = map[string]string{"path": arg}
	case "Write":
		v = map[string]string{"path": arg, "content": ""}
	case "Edit":
		v = map[string]string{"path": arg, "old_string": "a", "new_string": "b"}
	case webfetch.Name:
		v = map[string]string{"url": arg}
	case websearch.Name:
		v = map[string]string{"query": arg}
	default:
		return nil, fmt.Errorf("give %s's arguments as a JSON object", tool)
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return json.RawMessage(strings.TrimSpace(b.String())), err
}

// CheckCall runs a call of t through the pipeline as helikon run would
// (its policy asks before anything not read-only), with an approval handler
// that records the question and answers no, and says what decided.
func CheckCall(ctx context.Context, t helikon.Tool[App], perms *helikon.Permissions, mode helikon.PermissionMode, args json.RawMessage) CheckJSON {
	return checkCall(ctx, t, perms, askUnlessReadOnly, mode, args)
}

// checkCall is CheckCall with the policy given (nil: none, as mcp wrap).
func checkCall(ctx context.Context, t helikon.Tool[App], perms *helikon.Permissions, policy helikon.Policy, mode helikon.PermissionMode, args json.RawMessage) CheckJSON {
	var (
		mu    sync.Mutex
		asked *helikon.ApprovalRequest
	)
	p := *perms
	p.Policy = policy
	p.Approver = helikon.ApproverFunc(func(_ context.Context, req *helikon.ApprovalRequest) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = req
		return false, nil
	})
	call := helikon.CallFor(t, args, mode)
	d := p.Check(ctx, call)
	res := CheckJSON{Tool: t.Name(), Args: args, Mode: mode.String(), Stage: d.Stage, Reason: d.Reason}
	if tg, ok := t.(helikon.Targeter); ok {
		if targets, err := tg.Targets(args); err == nil {
			res.Targets = checkTargets(targets)
		}
	}
	if d.Rule.Tool != "" {
		res.Rule = d.Rule.String()
	}
	for _, m := range d.Matches {
		res.Matches = append(res.Matches, CheckMatch{Rule: m.Rule.String(), Target: m.Target})
	}
	switch {
	case d.Allowed:
		res.Decision = "allow"
	case asked != nil:
		res.Decision = "ask"
		res.Reason = asked.Reason
	default:
		res.Decision = "deny"
	}
	return res
}

// mcpTool stands for an MCP server's tool in policy check: the pipeline
// needs its name and effect only; it is never called.
type mcpTool struct{ helikon.ToolInfo }

func (mcpTool) Invoke(*helikon.ToolContext[App], json.RawMessage) (json.RawMessage, error) {
	return nil, helikon.Other(fmt.Errorf("policy check runs nothing"))
}

// mcpCheckTool is the tool name (mcp__SERVER__TOOL) as helikon run and mcp
// wrap name an MCP server's tool, with the effect its annotations give.
func mcpCheckTool(name, effect string) (helikon.Tool[App], error) {
	server, tool, ok := strings.Cut(strings.TrimPrefix(name, "mcp__"), "__")
	if !ok || server == "" || tool == "" {
		return nil, fmt.Errorf("an MCP tool is named mcp__SERVER__TOOL, as in mcp__filesystem__read_file; %q is not", name)
	}
	if err := helikon.ValidateToolName(name); err != nil {
		return nil, err
	}
	info := helikon.ToolInfo{ToolName: name, InputSchema: &jsonschema.Schema{Type: "object"}}
	switch effect {
	case "", "side_effect":
	case "read_only":
		info.ToolEffect = helikon.EffectReadOnly
	default:
		return nil, fmt.Errorf("--effect %q: want read_only or side_effect (an MCP server's tool is never write: helikon cannot know it changes only files in the sandbox)", effect)
	}
	return mcpTool{info}, nil
}
