package agentcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/paigasus/helikon/cmd/helikon/internal/cli"
	"github.com/paigasus/helikon/session"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/mcptools"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/provider/anthropic"
	"github.com/paigasus/helikon/provider/openai"
	"github.com/paigasus/helikon/session/sqlitestore"
	"github.com/paigasus/helikon/websearch"
)

func init() {
	cli.RegisterAgent("run", runAgent)
}

// ModelEnv is the environment variable naming the default model.
const ModelEnv = "HELIKON_MODEL"

// SessionDBEnv is the environment variable naming the session database.
const SessionDBEnv = "HELIKON_SESSION_DB"

const modelHelp = `set one with --model PROVIDER:MODEL or the HELIKON_MODEL environment variable, for example
  --model openai:gpt-4.1            (OPENAI_API_KEY; OPENAI_BASE_URL for a compatible server)
  --model openai-responses:gpt-4.1  (the same, over the Responses API)
  --model anthropic:claude-sonnet-4-5 (ANTHROPIC_API_KEY)
  --model ollama:llama3.1           (OLLAMA_HOST, default http://localhost:11434)`

// NewModel returns the model a "provider:id" spec names.
func NewModel(spec string, getenv func(string) string) (model.LLM, error) {
	provider, id, ok := strings.Cut(spec, ":")
	if !ok || provider == "" || id == "" {
		return nil, fmt.Errorf("model %q is not of the form PROVIDER:MODEL; %s", spec, modelHelp)
	}
	switch provider {
	case "openai":
		return openai.New(id, &openai.Options{Getenv: getenv})
	case "openai-responses":
		return openai.New(id, &openai.Options{API: openai.Responses, Getenv: getenv})
	case "anthropic":
		return anthropic.New(id, &anthropic.Options{Getenv: getenv})
	case "ollama":
		host := getenv("OLLAMA_HOST")
		if host == "" {
			host = "http://localhost:11434"
		}
		if !strings.Contains(host, "://") {
			host = "http://" + host
		}
		return openai.New(id, &openai.Options{BaseURL: strings.TrimSuffix(host, "/") + "/v1", NoAPIKey: true, APIKey: "ollama", Getenv: getenv})
	}
	return nil, fmt.Errorf("unknown model provider %q; %s", provider, modelHelp)
}

const defaultInstructions = `You are a coding agent working in the directory %s. Use the tools to inspect and change files there: Read before you Edit, and prefer Edit for small changes. Bash runs commands in that directory. A tool call may be denied by the user's permission settings; then do not retry it, find another way or explain what you would have done. Finish with a short summary of what you did.`

func runAgent(ctx context.Context, env *cli.Env, args []string) int {
	fs := cli.NewFlagSet("run", "run [PROMPT] [flags]\n\nRuns a coding agent on PROMPT over the sandboxed toolset in --root (Read, Write,\nEdit, Bash, WebFetch, and WebSearch when BRAVE_API_KEY or TAVILY_API_KEY is set).\nThe answer streams to stdout; tool calls and their outcomes go to stderr.\nCalls that need approval are asked on the terminal (y/n/always) and denied\nwithout one. Every run is saved: --session ID resumes one.\n\nWith no PROMPT on a terminal, or with -i, it holds a conversation: each line\nyou type is a turn of one session (--session ID resumes one, showing its\nearlier turns); Ctrl-C cancels the turn under way, Ctrl-C at the prompt or\nCtrl-D leaves; /help lists the commands (/mode MODE, /session, /exit).", env.Stderr)
	common := cli.AddCommonFlags(fs)
	bflags := cli.AddBackendFlags(fs)
	tflags := AddToolFlags(fs)
	modelSpec := fs.String("model", "", "the model as `PROVIDER:MODEL` (default $"+ModelEnv+")")
	maxTurns := fs.Int("max-turns", llmagent.DefaultMaxTurns, "stop after `N` model calls")
	sessionID := fs.String("session", "", "resume the session `ID` (default: a new session)")
	sessionDB := fs.String("session-db", "", "the session database `FILE` (default $"+SessionDBEnv+", else $XDG_STATE_HOME/helikon/sessions.db)")
	jsonOut := fs.Bool("json", false, "print the event stream as JSON lines on stdout")
	system := fs.String("instructions", "", "replace the agent's system prompt with `TEXT`")
	mcpServers := cli.Multi(fs, "mcp", "add the tools of the MCP server that `COMMAND` starts (a command line, run unsandboxed with this environment: trusted servers only; repeatable)")
	mcpPrefix := fs.String("mcp-prefix", "", "prepend `PREFIX` to the names of the MCP servers' tools")
	interactive := fs.Bool("i", false, "hold a conversation on the terminal, PROMPT (if any) its first turn (the default with no PROMPT on a terminal)")
	pos, done, status := cli.ParseArgs(fs, env, args)
	if done {
		return status
	}
	term := env.IsTerminal != nil && env.IsTerminal()
	chat := *interactive || len(pos) == 0 && term
	switch {
	case chat && (!term || *jsonOut):
		return cli.Failf(env, cli.ExitUsage, "run: a conversation (-i) needs a terminal and no --json")
	case len(pos) == 0 && !chat:
		return cli.Failf(env, cli.ExitUsage, "run: want a PROMPT")
	case chat:
		var stopSignals func()
		ctx, stopSignals = conversationContext(ctx)
		defer stopSignals()
	}
	prompt := strings.Join(pos, " ")
	root, err := common.RootDir()
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "run: %v", err)
	}
	perms, mode, err := common.Permissions()
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "run: %v", err)
	}
	spec := *modelSpec
	if spec == "" {
		spec = env.Var(ModelEnv)
	}
	if spec == "" {
		return cli.Failf(env, cli.ExitUsage, "run: no model; %s", modelHelp)
	}
	llm, err := NewModel(spec, env.Var)
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "run: %v", err)
	}
	// The conversation's session names the workspace's too, so --session ID
	// finds both again (a remote workspace kept with --keep-workspace).
	sid := *sessionID
	if sid == "" {
		sid = session.NewID()
	}
	te := &ToolEnv{Ctx: ctx, Env: env, Root: root, Common: common, BackendFlags: bflags, Session: sid}
	defer te.Close()
	names := tflags.Names(false)
	if env.Var(websearch.BraveKeyEnv) == "" && env.Var(websearch.TavilyKeyEnv) == "" {
		names = slices.DeleteFunc(names, func(n string) bool { return n == websearch.Name })
	}
	toolset, err := tflags.BuildSet(te, names)
	if err != nil {
		if errors.Is(err, backend.ErrUnavailable) {
			return cli.Failf(env, cli.ExitUsage, "run: %v", err)
		}
		return cli.Failf(env, cli.ExitOther, "run: %v", err)
	}
	var sources []llmagent.ToolSource[App]
	var mcpSources []*mcptools.Source[App]
	for _, cmdline := range *mcpServers {
		src, err := mcptools.Connect[App](ctx, mcptools.Command(cmdline), &mcptools.ClientOptions{Prefix: *mcpPrefix})
		if err != nil {
			return cli.Failf(env, cli.ExitOther, "run: --mcp %q: %v", cmdline, err)
		}
		defer src.Close()
		sources = append(sources, src)
		mcpSources = append(mcpSources, src)
	}
	allTools := toolset
	if len(mcpSources) > 0 {
		// Name clashes between the built-in tools and the servers' are an
		// error now, not when the model calls one of them.
		if allTools, err = mcptools.Toolset(ctx, toolset.Tools(), mcpSources...); err != nil {
			return cli.Failf(env, cli.ExitUsage, "run: %v", err)
		}
	}
	if err := checkMCPRules(perms, allTools.Names()); err != nil {
		return cli.Failf(env, cli.ExitUsage, "run: %v", err)
	}
	tracer, stopTracing, err := setupTracing(ctx, env)
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "run: %v", err)
	}
	defer stopTracing(context.WithoutCancel(ctx))
	dbPath := *sessionDB
	if dbPath == "" {
		if dbPath, err = defaultSessionDB(env); err != nil {
			return cli.Failf(env, cli.ExitUsage, "run: %v; set --session-db", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o700); err != nil {
		return cli.Failf(env, cli.ExitOther, "run: session database: %v", err)
	}
	store, err := sqlitestore.Open(ctx, dbPath, nil)
	if err != nil {
		return cli.Failf(env, cli.ExitOther, "run: %v", err)
	}
	defer store.Close()

	instructions := *system
	if instructions == "" {
		instructions = fmt.Sprintf(defaultInstructions, root)
	}
	assistant, err := llmagent.New(llmagent.Config[App]{
		Name:         "helikon",
		Instructions: instructions,
		Model:        llm,
		Tools:        toolset.Tools(),
		ToolSources:  sources,
		MaxTurns:     *maxTurns,
	})
	if err != nil {
		return cli.Failf(env, cli.ExitOther, "run: %v", err)
	}
	out := &renderer{env: env, spin: term && !*jsonOut}
	ta := NewTerminalApprover(env)
	save := SaveAllowRules(root)
	ta.Save = func(rules []helikon.Rule) (string, error) {
		where, err := save(rules)
		if err == nil && !common.TrustProject {
			where += " (a project file's allow rules apply to runs that trust the project: --trust-project, or trustedProjects in your user policy file)"
		}
		return where, err
	}
	perms.Approver = out.approver(ta)
	perms.Policy = askUnlessReadOnly
	// The command reports failures itself; the runner's log would repeat them.
	rcfg := runner.Config[App]{Agent: assistant, Store: store, Permissions: perms, Mode: mode, Tracer: tracer, Logger: slog.New(slog.DiscardHandler)}
	r, err := runner.New(rcfg)
	if err != nil {
		return cli.Failf(env, cli.ExitOther, "run: %v", err)
	}
	defer out.pause()
	if chat {
		return converse(ctx, env, out, ta, rcfg, *sessionID, sid, prompt)
	}
	id, runErr := printRun(env, out, *jsonOut, r.Run(ctx, sid, prompt))
	if id != "" && !*jsonOut {
		fmt.Fprintf(env.Stderr, "helikon: session %s (resume with --session %s)\n", id, id)
	}
	if runErr != nil {
		fmt.Fprintf(env.Stderr, "helikon: run: %v\n", runErr)
		switch {
		case errors.Is(runErr, helikon.ErrInvalidArgs):
			return cli.ExitInvalidArgs
		case errors.Is(runErr, backend.ErrUnavailable):
			return cli.ExitUsage
		}
		return cli.ExitOther
	}
	return cli.ExitOK
}

// printRun shows a run's events as they come: as JSON lines on stdout with
// jsonOut (sub-agents' events included, marked by their depth and path),
// else through out for a person. It returns the run's session id and error.
func printRun(env *cli.Env, out *renderer, jsonOut bool, seq iter.Seq2[*agent.Event, error]) (id string, runErr error) {
	enc := json.NewEncoder(env.Stdout)
	for ev, err := range seq {
		if ev != nil && ev.SessionID != "" {
			id = ev.SessionID
		}
		if jsonOut {
			if ev != nil {
				enc.Encode(ev)
			}
		} else if ev != nil {
			out.event(ev)
		}
		if err != nil {
			runErr = err
		}
	}
	out.pause()
	return id, runErr
}

// askUnlessReadOnly is the CLI's policy: read-only calls run, anything else
// asks (AcceptEdits has already let writes through, Bypass everything).
var askUnlessReadOnly = helikon.PolicyFunc(func(_ context.Context, c *helikon.Call, _ *helikon.Targets) (helikon.PolicyDecision, error) {
	if c.Effect == helikon.EffectReadOnly {
		return helikon.PolicyAllow(), nil
	}
	return helikon.PolicyAsk(fmt.Sprintf("%s has effect %s; --mode accept-edits approves writes, --allow %s permits it", c.Tool, c.Effect, c.Tool)), nil
})

func defaultSessionDB(env *cli.Env) (string, error) {
	if p := env.Var(SessionDBEnv); p != "" {
		return p, nil
	}
	if d := env.Var("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "helikon", "sessions.db"), nil
	}
	home := env.Var("HOME")
	if home == "" {
		return "", errors.New("no HOME to keep the session database in")
	}
	return filepath.Join(home, ".local", "state", "helikon", "sessions.db"), nil
}

// renderer prints a run for a person: the answer on stdout as it streams,
// tool calls and outcomes on stderr, and a spinner on a terminal while the
// model is thinking. What sub-agents do goes to stderr too, indented by
// depth and prefixed with the sub-agent's name; their text is shown a turn
// (or the text before a tool call) at a time, never on stdout, which carries
// the run's own answer only.
type renderer struct {
	env *cli.Env
	// printing is held while an event is printed or an approval asked:
	// sub-agents ask for approvals on their own goroutines while the run's
	// goroutine prints the events of others.
	printing  sync.Mutex
	spin      bool
	midLine   bool                        // stdout does not end in a newline
	subText   map[string]*strings.Builder // text a sub-agent streamed and not yet shown, by path
	mu        sync.Mutex
	spinning  bool
	spinLabel string // what the next spinner shows with its elapsed time ("": thinking)
	spinStop  chan struct{}
	spinGroup sync.WaitGroup
}

// maxSubText bounds the streamed text of a sub-agent kept to be shown (it is
// clipped when shown anyway).
const maxSubText = 4096

// approver returns ta as the run's approval handler: the spinner stops before
// a prompt, nothing else is printed while one is open, and a sub-agent's
// request is introduced by a line naming the sub-agent, like its other
// activity.
func (r *renderer) approver(ta *TerminalApprover) helikon.Approver {
	ta.Before = r.pause
	return helikon.ApproverFunc(func(ctx context.Context, req *helikon.ApprovalRequest) (bool, error) {
		r.printing.Lock()
		defer r.printing.Unlock()
		if req.AgentDepth > 0 {
			name := clip(req.Agent, 40)
			if name == "" {
				name = "a sub-agent"
			}
			r.pause()
			r.endLine()
			fmt.Fprintf(r.env.Stderr, "%s%s asks to run %s\n", strings.Repeat("  ", req.AgentDepth), name, clip(req.Tool, 80))
		}
		return ta.Approve(ctx, req)
	})
}

func (r *renderer) event(ev *agent.Event) {
	r.printing.Lock()
	defer r.printing.Unlock()
	if ev.Forwarded() {
		r.subEvent(ev)
		return
	}
	switch ev.Kind {
	case agent.EventTurnStarted:
		r.startSpinner()
	case agent.EventTextDelta:
		r.pause()
		io.WriteString(r.env.Stdout, safeText(ev.Text))
		r.midLine = !strings.HasSuffix(ev.Text, "\n")
	case agent.EventToolCall:
		r.pause()
		r.endLine()
		fmt.Fprintf(r.env.Stderr, "→ %s %s\n", ev.ToolCall.Name, clip(string(ev.ToolCall.Args), 160))
	case agent.EventPermissionDenied:
		r.pause()
		fmt.Fprintf(r.env.Stderr, "✗ %s denied: %s\n", ev.ToolCall.Name, safeText(ev.Reason))
	case agent.EventToolResult:
		r.pause()
		if ev.ToolResult.IsError {
			if ev.ToolResult.Kind != helikon.KindDenied {
				fmt.Fprintf(r.env.Stderr, "✗ %s %s: %s\n", ev.ToolCall.Name, ev.ToolResult.Kind, clip(ev.ToolResult.Content, 200))
			}
		} else {
			fmt.Fprintf(r.env.Stderr, "✓ %s %s\n", ev.ToolCall.Name, clip(ev.ToolResult.Content, 120))
		}
	case agent.EventTurnCompleted:
		r.pause()
	case agent.EventRunCompleted:
		r.pause()
		r.endLine()
		if u := ev.Usage; u != nil {
			fmt.Fprintf(r.env.Stderr, "helikon: %d model calls, %d input and %d output tokens\n", u.Requests, u.InputTokens, u.OutputTokens)
		}
	case agent.EventRunFailed:
		r.pause()
		r.endLine()
	}
}

// subEvent prints an event forwarded from a sub-agent on stderr, as
// "  NAME → TOOL ARGS", indented by the sub-agent's depth.
func (r *renderer) subEvent(ev *agent.Event) {
	key := strings.Join(ev.Path, "\x00")
	switch ev.Kind {
	case agent.EventTurnStarted:
		r.startSpinner()
		return
	case agent.EventTextDelta:
		b := r.subText[key]
		if b == nil {
			if r.subText == nil {
				r.subText = map[string]*strings.Builder{}
			}
			b = &strings.Builder{}
			r.subText[key] = b
		}
		if n := maxSubText - b.Len(); n > 0 {
			b.WriteString(ev.Text[:min(n, len(ev.Text))])
		}
		return
	case agent.EventToolCall, agent.EventPermissionDenied, agent.EventToolResult, agent.EventTurnCompleted:
		// An approval request is introduced by the approver, right before
		// its prompt.
	default:
		return
	}
	r.pause()
	r.endLine()
	prefix := strings.Repeat("  ", max(ev.Depth, len(ev.Path))) + clip(ev.Agent, 40)
	// The text the sub-agent streamed before this event comes first. The
	// entry stays, empty, until the turn ends: its text has been shown.
	if ev.Kind == agent.EventToolCall || ev.Kind == agent.EventTurnCompleted {
		b, streamed := r.subText[key]
		text := ""
		switch {
		case streamed:
			text = b.String()
			b.Reset()
		case ev.Kind == agent.EventTurnCompleted: // a model that did not stream
			for _, m := range ev.Messages {
				if m.Role == model.RoleAssistant {
					text = m.Text
				}
			}
		}
		if text = strings.TrimSpace(text); text != "" {
			fmt.Fprintf(r.env.Stderr, "%s: %s\n", prefix, clip(text, 300))
		}
		if ev.Kind == agent.EventTurnCompleted {
			delete(r.subText, key)
		}
	}
	switch ev.Kind {
	case agent.EventToolCall:
		fmt.Fprintf(r.env.Stderr, "%s → %s %s\n", prefix, clip(ev.ToolCall.Name, 80), clip(string(ev.ToolCall.Args), 160))
	case agent.EventPermissionDenied:
		fmt.Fprintf(r.env.Stderr, "%s ✗ %s denied: %s\n", prefix, clip(ev.ToolCall.Name, 80), clip(ev.Reason, 300))
	case agent.EventToolResult:
		switch res := ev.ToolResult; {
		case !res.IsError:
			fmt.Fprintf(r.env.Stderr, "%s ✓ %s %s\n", prefix, clip(ev.ToolCall.Name, 80), clip(res.Content, 120))
		case res.Kind != helikon.KindDenied:
			fmt.Fprintf(r.env.Stderr, "%s ✗ %s %s: %s\n", prefix, clip(ev.ToolCall.Name, 80), res.Kind, clip(res.Content, 200))
		}
	}
}

func (r *renderer) endLine() {
	if r.midLine {
		fmt.Fprintln(r.env.Stdout)
		r.midLine = false
	}
}

// clip shortens s to n bytes on one line, safe to show on a terminal.
func clip(s string, n int) string {
	s = safeText(strings.Join(strings.Fields(s), " "))
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

func (r *renderer) startSpinner() {
	if !r.spin {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.spinning {
		return
	}
	r.spinning = true
	r.spinStop = make(chan struct{})
	stop := r.spinStop
	label, since := r.spinLabel, time.Now()
	r.spinLabel = ""
	r.spinGroup.Go(func() {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			if label == "" {
				fmt.Fprintf(r.env.Stderr, "\r%s thinking…", spinnerFrames[i%len(spinnerFrames)])
			} else {
				fmt.Fprintf(r.env.Stderr, "\r%s %s %ds\033[K", spinnerFrames[i%len(spinnerFrames)], label, int(time.Since(since).Seconds()))
			}
			select {
			case <-stop:
				fmt.Fprint(r.env.Stderr, "\r\033[K")
				return
			case <-t.C:
			}
		}
	})
}

// pause stops the spinner and clears its line.
func (r *renderer) pause() {
	r.mu.Lock()
	if !r.spinning {
		r.mu.Unlock()
		return
	}
	r.spinning = false
	close(r.spinStop)
	r.mu.Unlock()
	r.spinGroup.Wait()
}
