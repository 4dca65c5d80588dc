package agentcli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
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

	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/session"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/llmagent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/provider/anthropic"
	"github.com/paigasus/helikon/provider/openai"
	"github.com/paigasus/helikon/session/sqlitestore"
	"github.com/paigasus/helikon/tool/mcptools"
	"github.com/paigasus/helikon/tool/websearch"
	"github.com/paigasus/helikon/toolbox"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"

	"go.opentelemetry.io/otel/trace"
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
		m, err := openai.New(id, &openai.Options{BaseURL: strings.TrimSuffix(host, "/") + "/v1", NoAPIKey: true, APIKey: "ollama", Getenv: getenv})
		if err != nil {
			return nil, err
		}
		return &servedModel{LLM: m, name: spec, hint: "is Ollama running at " + host + "? (OLLAMA_HOST sets where; ollama pull " + id + " fetches the model)"}, nil
	}
	return nil, fmt.Errorf("unknown model provider %q; %s", provider, modelHelp)
}

// servedModel is a model reached through another provider's API (Ollama
// through OpenAI's): it is named as the user wrote it, and its failures say
// what to check, rather than name the API it borrows.
type servedModel struct {
	model.LLM
	name string // the spec the user typed, such as ollama:qwen3
	hint string // what to check when a call fails
}

func (m *servedModel) Name() string { return m.name }

func (m *servedModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[*model.Chunk, error] {
	return func(yield func(*model.Chunk, error) bool) {
		for c, err := range m.LLM.Stream(ctx, req) {
			if err != nil && ctx.Err() == nil {
				err = fmt.Errorf("%w; %s", err, m.hint)
			}
			if !yield(c, err) {
				return
			}
		}
	}
}

const defaultInstructions = `You are a coding agent working in the directory %s. Use the tools to inspect and change files there: Read before you Edit, and prefer Edit for small changes. Bash runs commands in that directory. A tool call may be denied by the user's permission settings; then do not retry it, find another way or explain what you would have done. Finish with a short summary of what you did.`

const runUsage = "run [PROMPT] [flags]\n\nRuns a coding agent on PROMPT over the sandboxed toolset in --root (Read, Write,\nEdit, Bash, WebFetch, and WebSearch when BRAVE_API_KEY or TAVILY_API_KEY is set).\nThe answer streams to stdout; tool calls and their outcomes go to stderr.\nCalls that need approval are asked on the terminal (y/n/always) and denied\nwithout one. Every run is saved: --session ID resumes one.\n\nWith no PROMPT on a terminal, or with -i, it holds a conversation: each line\nyou type is a turn of one session (--session ID resumes one, showing its\nearlier turns); Ctrl-C cancels the turn under way, Ctrl-C at the prompt or\nCtrl-D leaves; /help lists the commands (/mode MODE, /session, /exit)."

// runAgent is helikon-agent run. Its steps report their own failures and
// return the exit status (cli.ExitOK: go on). What they open is closed when
// it returns, the last opened first: the session store, the tracer, the MCP
// servers, then the workspace (ToolEnv.Close, on a context of its own: the
// run's may have been cancelled by a signal).
func runAgent(ctx context.Context, env *cli.Env, args []string) int {
	f, pos, done, status := parseRunFlags(env, args)
	if done {
		return status
	}
	term := env.IsTerminal != nil && env.IsTerminal()
	chat := f.interactive || len(pos) == 0 && term
	switch {
	case chat && (!term || f.json):
		return cli.Failf(env, cli.ExitUsage, "run: a conversation (-i) needs a terminal and no --json")
	case len(pos) == 0 && !chat:
		return cli.UsageFailf(env, f.fs, "run: want a PROMPT")
	case chat:
		var stopSignals func()
		ctx, stopSignals = conversationContext(ctx)
		defer stopSignals()
	}
	a, status := f.resolve(env)
	if status != cli.ExitOK {
		return status
	}
	a.term, a.chat, a.prompt = term, chat, strings.Join(pos, " ")
	a.workDir = a.root
	if f.review {
		if a.review, status = a.startReview(ctx); status != cli.ExitOK {
			return status
		}
		defer a.review.Close()
		a.workDir = a.review.Tree()
	}
	te := &ToolEnv{Ctx: ctx, Env: env, Root: a.workDir, Common: f.common, BackendFlags: f.backendFlags, Session: a.sid}
	defer te.Close()
	tools, status := a.buildTools(ctx, te)
	defer tools.close()
	if status != cli.ExitOK {
		return status
	}
	if a.review != nil {
		ws, err := te.Workspace()
		if err != nil {
			return cli.Failf(env, cli.ExitUsage, "run: --review: %v", err)
		}
		if status := checkReviewBackend(env, ws); status != cli.ExitOK {
			return status
		}
	}
	if a.chat && f.checkpoints {
		if ws, err := te.Workspace(); err == nil {
			tools.checkpoints, _ = ws.(workspace.Checkpointer)
		}
	}
	tracer, stopTracing, err := setupTracing(ctx, env)
	if err != nil {
		return cli.Failf(env, cli.ExitUsage, "run: %v", err)
	}
	defer stopTracing(context.WithoutCancel(ctx))
	store, status := openSessionStore(ctx, env, f.sessionDB)
	if status != cli.ExitOK {
		return status
	}
	defer store.Close()
	return a.start(ctx, store, tracer, tools)
}

// runFlags are the flags of helikon-agent run.
type runFlags struct {
	fs           *flag.FlagSet // for the synopsis of a usage error
	common       *cli.CommonFlags
	backendFlags *cli.BackendFlags
	toolFlags    *ToolFlags
	model        string
	maxTurns     int
	session      string
	sessionDB    string
	json         bool
	system       string
	mcpServers   *[]string
	mcpPrefix    string
	mcpUnsandbox bool
	interactive  bool
	checkpoints  bool
	review       bool
}

// parseRunFlags defines the flags of run and parses args into them. It
// returns the positional arguments, or done with the exit status when
// parsing ended the command (--help, or a usage error, already reported).
func parseRunFlags(env *cli.Env, args []string) (f *runFlags, pos []string, done bool, status int) {
	fs := cli.NewFlagSet("run", runUsage, env.Stderr)
	f = &runFlags{fs: fs, common: cli.AddCommonFlags(fs), backendFlags: cli.AddBackendFlags(fs), toolFlags: AddToolFlags(fs)}
	fs.StringVar(&f.model, "model", "", "the model as `PROVIDER:MODEL` (default $"+ModelEnv+")")
	fs.IntVar(&f.maxTurns, "max-turns", llmagent.DefaultMaxTurns, "stop after `N` model calls")
	fs.StringVar(&f.session, "session", "", "resume the session `ID` (default: a new session)")
	fs.StringVar(&f.sessionDB, "session-db", "", "the session database `FILE` (default $"+SessionDBEnv+", else $XDG_STATE_HOME/helikon/sessions.db)")
	fs.BoolVar(&f.json, "json", false, "print the event stream as JSON lines on stdout")
	fs.StringVar(&f.system, "instructions", "", "replace the agent's system prompt with `TEXT`")
	f.mcpServers = cli.Multi(fs, "mcp", "add the tools of the MCP server that `COMMAND` starts (a command line, run contained in the OS sandbox over --root with no network and no secrets; repeatable)")
	fs.BoolVar(&f.mcpUnsandbox, "mcp-unsandboxed", false, "run the --mcp servers unsandboxed, with your environment and privileges (trusted servers only), as --backend host does for commands")
	fs.StringVar(&f.mcpPrefix, "mcp-prefix", "", "prepend `PREFIX` to the names of the MCP servers' tools")
	fs.BoolVar(&f.interactive, "i", false, "hold a conversation on the terminal, PROMPT (if any) its first turn (the default with no PROMPT on a terminal)")
	fs.BoolVar(&f.checkpoints, "checkpoints", true, "in a conversation, checkpoint the files before each turn, for /diff, /undo and /rewind (local workspaces; the checkpoints are kept under $XDG_STATE_HOME/helikon/checkpoints)")
	fs.BoolVar(&f.review, "review", false, "hold the agent's changes back: it works in a copy of --root (its tools and commands alike), and you review the diff and apply it, all or in part, or discard it (the OS sandbox only; helikon diff|apply|discard act on a review left pending)")
	pos, done, status = cli.ParseArgs(fs, env, args)
	return f, pos, done, status
}

// agentRun is a run's settings, resolved from its flags and environment.
type agentRun struct {
	*runFlags
	env   *cli.Env
	root  string
	perms *helikon.Permissions
	mode  helikon.PermissionMode
	llm   model.LLM
	// sid is the run's session: --session, else a new one. It names the
	// workspace's session too, so that --session ID finds both again (a
	// remote workspace kept with --keep-workspace).
	sid    string
	term   bool   // stdin and stderr are a terminal
	chat   bool   // hold a conversation rather than run prompt once
	prompt string // the positional arguments: the (first) turn
	// workDir is where the tools work: root, or the review's copy of it.
	workDir string
	review  *local.Review // --review: the pending review, else nil
}

// resolve reads the run's root directory, permissions and model from the
// flags and the environment, and picks its session.
func (f *runFlags) resolve(env *cli.Env) (*agentRun, int) {
	a := &agentRun{runFlags: f, env: env}
	var err error
	if a.root, err = f.common.RootDir(); err != nil {
		return nil, cli.Failf(env, cli.ExitUsage, "run: %v", err)
	}
	if a.perms, a.mode, err = f.common.Permissions(); err != nil {
		return nil, cli.Failf(env, cli.ExitUsage, "run: %v", err)
	}
	spec := f.model
	if spec == "" {
		spec = env.Var(ModelEnv)
	}
	if spec == "" {
		return nil, cli.Failf(env, cli.ExitUsage, "run: no model; %s", modelHelp)
	}
	if a.llm, err = NewModel(spec, env.Var); err != nil {
		return nil, cli.Failf(env, cli.ExitUsage, "run: %v", err)
	}
	a.sid = f.session
	if a.sid == "" {
		a.sid = session.NewID()
	}
	return a, cli.ExitOK
}

// runTools are a run's tools: the built-in ones and the MCP servers'.
type runTools struct {
	builtin *helikon.Toolset[App]
	mcp     []*mcptools.Source[App]
	servers []*mcpServer // the --mcp servers' sandboxes
	// checkpoints is the workspace's, in a conversation (nil: none).
	checkpoints workspace.Checkpointer
}

// close stops the MCP servers, the last started first.
func (t *runTools) close() {
	for _, src := range slices.Backward(t.mcp) {
		src.Close()
	}
	for _, s := range t.servers {
		s.Close()
	}
}

// defaultTools are the built-in tools a command serves when it is not
// told which: every one but the examples, and WebSearch only with a search
// API key (without one it could only fail).
func defaultTools(env *cli.Env, tf *ToolFlags) []string {
	names := tf.Names(false)
	if !tf.Processes() {
		names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(toolbox.ProcessTools, n) })
	}
	if env.Var(websearch.BraveKeyEnv) == "" && env.Var(websearch.TavilyKeyEnv) == "" {
		names = slices.DeleteFunc(names, func(n string) bool { return n == websearch.Name })
	}
	return names
}

// buildTools builds the built-in tools (WebSearch only with a search API
// key) on te's workspace and connects to the --mcp servers, then checks
// that no two tools share a name and that the MCP rules name tools there
// are. It returns the tools built, to be closed, even on failure.
func (a *agentRun) buildTools(ctx context.Context, te *ToolEnv) (*runTools, int) {
	t := &runTools{}
	names := defaultTools(a.env, a.toolFlags)
	var err error
	if t.builtin, err = a.toolFlags.BuildSet(te, names); err != nil {
		if errors.Is(err, backend.ErrUnavailable) {
			return t, cli.Failf(a.env, cli.ExitUsage, "run: %v", err)
		}
		return t, cli.Failf(a.env, cli.ExitOther, "run: %v", err)
	}
	for _, cmdline := range *a.mcpServers {
		srv, err := newMCPServer(ctx, a.env, te.Root, cmdline, a.mcpUnsandbox, a.backendFlags)
		if err != nil {
			if errors.Is(err, backend.ErrUnavailable) {
				return t, cli.Failf(a.env, cli.ExitUsage, "run: --mcp %q: %v", cmdline, err)
			}
			return t, cli.Failf(a.env, cli.ExitOther, "run: --mcp %q: %v", cmdline, err)
		}
		t.servers = append(t.servers, srv)
		slog.Debug("mcp server", slog.String("server", cmdline), slog.String("containment", srv.containment))
		src, err := mcptools.Connect[App](ctx, srv.dial, &mcptools.ClientOptions{Prefix: a.mcpPrefix})
		if err != nil {
			return t, cli.Failf(a.env, cli.ExitOther, "run: --mcp %q: %v", cmdline, err)
		}
		t.mcp = append(t.mcp, src)
	}
	all := t.builtin
	if len(t.mcp) > 0 {
		// Name clashes between the built-in tools and the servers' are an
		// error now, not when the model calls one of them.
		if all, err = mcptools.Toolset(ctx, t.builtin.Tools(), t.mcp...); err != nil {
			return t, cli.Failf(a.env, cli.ExitUsage, "run: %v", err)
		}
	}
	if err := checkMCPRules(a.perms, all.Names()); err != nil {
		return t, cli.Failf(a.env, cli.ExitUsage, "run: %v", err)
	}
	// Every built-in tool counts, built or not: a WebSearch rule is no
	// misspelling because this run has no search key.
	if err := a.common.CheckRules(a.perms, append(a.toolFlags.Names(false), all.Names()...), true); err != nil {
		return t, cli.Failf(a.env, cli.ExitUsage, "run: %v", err)
	}
	return t, cli.ExitOK
}

// openSessionStore opens the session database at path, else at
// $HELIKON_SESSION_DB or under the user's state directory, making its
// directory if need be.
func openSessionStore(ctx context.Context, env *cli.Env, path string) (*sqlitestore.Store, int) {
	if path == "" {
		var err error
		if path, err = defaultSessionDB(env); err != nil {
			return nil, cli.Failf(env, cli.ExitUsage, "run: %v; set --session-db", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, cli.Failf(env, cli.ExitOther, "run: session database: %v", err)
	}
	store, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		return nil, cli.Failf(env, cli.ExitOther, "run: %v", err)
	}
	return store, cli.ExitOK
}

// start builds the agent over tools and its runner, which keeps the
// sessions in store, with approvals asked on the terminal, then holds the
// conversation or runs the prompt once.
func (a *agentRun) start(ctx context.Context, store *sqlitestore.Store, tracer trace.Tracer, tools *runTools) int {
	instructions := a.system
	if instructions == "" {
		instructions = fmt.Sprintf(defaultInstructions, a.workDir)
	}
	var sources []llmagent.ToolSource[App]
	for _, src := range tools.mcp {
		sources = append(sources, src)
	}
	assistant, err := llmagent.New(llmagent.Config[App]{
		Name:         "helikon",
		Instructions: instructions,
		Model:        a.llm,
		Tools:        tools.builtin.Tools(),
		ToolSources:  sources,
		MaxTurns:     a.maxTurns,
	})
	if err != nil {
		return cli.Failf(a.env, cli.ExitOther, "run: %v", err)
	}
	out := &renderer{env: a.env, spin: a.term && !a.json}
	ta := a.approver()
	a.perms.Approver = out.approver(ta)
	a.perms.Policy = askUnlessReadOnly
	// The command reports failures itself; the runner's log would repeat them.
	// buildTools checked the rules against every built-in tool, built
	// here or not.
	rcfg := runner.Config[App]{Agent: assistant, Store: store, Permissions: a.perms, Mode: a.mode, Tracer: tracer, Logger: slog.New(slog.DiscardHandler), OtherTools: a.toolFlags.Names(false)}
	if tools.checkpoints != nil {
		rcfg.Checkpoints = tools.checkpoints
	}
	r, err := runner.New(rcfg)
	if err != nil {
		return cli.Failf(a.env, cli.ExitUsage, "run: %v", err)
	}
	defer out.pause()
	if a.chat {
		status := converse(ctx, a.env, out, ta, rcfg, a.session, a.sid, a.prompt, a.review)
		if a.review != nil {
			if _, err := local.FindReview(a.root, nil); err == nil {
				fmt.Fprintf(a.env.Stderr, "helikon: the changes are kept for review: helikon diff, helikon apply [PATH...] or helikon discard, with --root %s (helikon run --review goes on with them)\n", a.root)
			}
		}
		return status
	}
	status := a.runOnce(ctx, out, r)
	if a.review != nil {
		out.pause()
		if s := a.endReview(ctx, a.review); status == cli.ExitOK {
			status = s
		}
	}
	return status
}

// approver returns the run's terminal approver, whose "always" answers are
// saved as allow rules in the project's policy file.
func (a *agentRun) approver() *TerminalApprover {
	ta := NewTerminalApprover(a.env)
	save := SaveAllowRules(a.root)
	ta.Save = func(rules []helikon.Rule) (string, error) {
		where, err := save(rules)
		if err == nil && !a.common.TrustProject {
			where += " (a project file's allow rules apply to runs that trust the project: --trust-project, or trustedProjects in your user policy file)"
		}
		return where, err
	}
	return ta
}

// runOnce runs the agent on the prompt in the run's session, printing its
// events, then names the session to resume, and returns the exit status of
// the run's outcome.
func (a *agentRun) runOnce(ctx context.Context, out *renderer, r *runner.Runner[App]) int {
	id, runErr := printRun(a.env, out, a.json, r.Run(ctx, a.sid, a.prompt))
	if id != "" && !a.json {
		fmt.Fprintf(a.env.Stderr, "helikon: session %s (resume with --session %s)\n", id, id)
	}
	if runErr != nil {
		fmt.Fprintf(a.env.Stderr, "helikon: run: %v\n", runErr)
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

// askUnlessReadOnly is the CLI's policy, the library's with reasons that
// name the CLI's flags: read-only calls run, anything else asks
// (AcceptEdits has already let writes through, Bypass everything).
var askUnlessReadOnly = toolbox.AskUnlessReadOnly{Reason: func(c *helikon.Call) string {
	if c.Effect == helikon.EffectWrite {
		return fmt.Sprintf("%s changes files; --mode accept-edits approves such calls, --allow %s permits it", c.Tool, c.Tool)
	}
	return fmt.Sprintf("%s has effect %s, which no mode but bypass approves; --allow %s (or a narrower rule) permits it", c.Tool, c.Effect, c.Tool)
}}

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
