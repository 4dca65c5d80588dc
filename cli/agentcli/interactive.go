package agentcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/paigasus/helikon/cli"

	// Line editing and history: liner is small (one dependency, for
	// character widths), still released, and reads the terminal only while
	// a prompt is open, so an approval asked mid-turn and the signal that
	// cancels a turn never compete with a reader left running in the
	// background (chzyer/readline keeps one; its maintained fork is not
	// served by the module proxy).
	"github.com/peterh/liner"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/agent/runner"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/session"
	"github.com/paigasus/helikon/workspace/local"
)

// errTurnCancelled is the error of a turn the user cancelled with Ctrl-C.
var errTurnCancelled = errors.New("turn cancelled")

const conversationHelp = `Each line is a turn of the session. Commands:
  /help          this text
  /mode [MODE]   show the permission mode, or tighten it (default, plan, dont-ask; never looser)
  /session       the session's id, to resume it with --session ID
` + checkpointHelp + `
` + reviewHelp + `
  /exit          leave (so do Ctrl-D and Ctrl-C at the prompt)
Ctrl-C while a turn runs cancels that turn; a second Ctrl-C leaves once it has stopped.`

// conversationContext returns the context a conversation runs in: SIGINT no
// longer ends the command (it cancels one turn, see conversation.turn), so
// the context is cut loose from ctx, which main cancels on SIGINT, and is
// cancelled on SIGTERM alone. stop releases the signal.
func conversationContext(ctx context.Context) (context.Context, func()) {
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		select {
		case <-term:
			cancel()
		case <-c.Done():
		}
	}()
	return c, func() {
		signal.Stop(term)
		cancel()
	}
}

// conversation is an interactive session of helikon run on a terminal.
type conversation struct {
	env   *cli.Env
	out   *renderer
	line  *liner.State
	cfg   runner.Config[App]
	r     *runner.Runner[App]
	id    string
	color bool

	mu         sync.Mutex
	cancelTurn context.CancelFunc // nil between turns
	interrupts atomic.Int32       // Ctrl-Cs during the current turn
	calls      map[string]string  // a call's "TOOL TARGET", by call id
	lastCall   string             // the "TOOL TARGET" of the call seen last
	review     *local.Review      // the pending review (helikon run --review), or nil
}

// converse holds a conversation: one session (sessionID, or a new one called
// newID), a turn for each line read, first (when set) being the first turn.
// It returns the exit status.
// review is the run's pending review (--review), or nil.
func converse(ctx context.Context, env *cli.Env, out *renderer, ta *TerminalApprover, cfg runner.Config[App], sessionID, newID, first string, review *local.Review) int {
	r, err := runner.New(cfg)
	if err != nil {
		return cli.Failf(env, cli.ExitOther, "run: %v", err)
	}
	c := &conversation{env: env, out: out, cfg: cfg, r: r, id: sessionID, calls: map[string]string{}, review: review,
		color: env.Var("NO_COLOR") == "" && env.IsTerminal != nil && env.IsTerminal()}
	if c.id == "" {
		c.id = newID
	} else if err := session.ValidateID(c.id); err != nil {
		return cli.Failf(env, cli.ExitUsage, "run: %v", err)
	}
	c.line = liner.NewLiner()
	defer c.line.Close()
	c.line.SetCtrlCAborts(true)
	ta.ReadAnswer = c.readAnswer
	if sessionID != "" {
		if err := c.showHistory(ctx); err != nil {
			return cli.Failf(env, cli.ExitOther, "run: %v", err)
		}
	}
	fmt.Fprintf(env.Stderr, "helikon: session %s in %s mode; /help for commands, Ctrl-D to leave\n", c.id, cfg.Mode)
	ran := false
	defer func() {
		if ran {
			fmt.Fprintf(env.Stderr, "helikon: session %s (resume with --session %s)\n", c.id, c.id)
		}
	}()
	for ctx.Err() == nil {
		text := first
		first = ""
		if text == "" {
			text, err = c.line.Prompt("› ")
			if err != nil { // Ctrl-D, Ctrl-C or a terminal gone
				fmt.Fprintln(env.Stderr)
				return cli.ExitOK
			}
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		c.line.AppendHistory(text)
		if strings.HasPrefix(text, "/") {
			if c.command(ctx, text) {
				return cli.ExitOK
			}
			continue
		}
		ran = true
		if c.turn(ctx, text) > 1 {
			return cli.ExitOK
		}
	}
	return cli.ExitOK
}

// command runs a slash command and reports whether to leave.
func (c *conversation) command(ctx context.Context, text string) (leave bool) {
	name, arg, _ := strings.Cut(text, " ")
	arg = strings.TrimSpace(arg)
	if c.checkpointCommand(ctx, name, arg) {
		return false
	}
	if handled, end := c.reviewCommand(ctx, name, arg); handled {
		return end
	}
	switch name {
	case "/exit", "/quit":
		return true
	case "/help":
		fmt.Fprintln(c.env.Stderr, conversationHelp)
	case "/session":
		fmt.Fprintf(c.env.Stderr, "helikon: session %s (resume with --session %s)\n", c.id, c.id)
	case "/mode":
		if arg == "" {
			fmt.Fprintf(c.env.Stderr, "helikon: mode %s\n", c.cfg.Mode)
			break
		}
		if err := c.tighten(arg); err != nil {
			fmt.Fprintf(c.env.Stderr, "helikon: %v\n", err)
			break
		}
		fmt.Fprintf(c.env.Stderr, "helikon: mode %s from the next turn on\n", c.cfg.Mode)
	default:
		fmt.Fprintf(c.env.Stderr, "helikon: unknown command %s; /help lists them\n", safeText(name))
	}
	return false
}

// tighten switches the turns to come to the mode called name, which may
// only tighten the current one (as [helikon.RunContext.TightenMode]).
func (c *conversation) tighten(name string) error {
	m, err := helikon.ParseMode(name)
	if err != nil {
		return err
	}
	if !c.cfg.Mode.CanBecome(m) {
		return fmt.Errorf("cannot change permission mode from %s to %s: %w (start again with --mode to loosen it)", c.cfg.Mode, m, helikon.ErrModeLoosen)
	}
	cfg := c.cfg
	cfg.Mode = m
	r, err := runner.New(cfg)
	if err != nil {
		return err
	}
	c.cfg, c.r = cfg, r
	return nil
}

// turn runs one turn and returns the number of Ctrl-Cs the user pressed
// while it ran: 1 cancelled it, 2 or more also ask to leave.
func (c *conversation) turn(ctx context.Context, prompt string) int32 {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.interrupts.Store(0)
	c.mu.Lock()
	c.cancelTurn = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.cancelTurn = nil
		c.mu.Unlock()
	}()
	// SIGINT cancels this turn only: main's handler would end the command.
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-sig:
				c.interrupt()
			case <-done:
				return
			}
		}
	}()
	var runErr error
	for ev, err := range c.r.Run(tctx, c.id, prompt) {
		if ev != nil {
			c.event(ev)
		}
		if err != nil {
			runErr = err
		}
	}
	c.out.pause()
	n := c.interrupts.Load()
	switch {
	case n > 0:
		fmt.Fprintln(c.env.Stderr, c.paint("33", "helikon: "+errTurnCancelled.Error()))
	case runErr != nil:
		fmt.Fprintf(c.env.Stderr, "%s\n", c.paint("31", "helikon: run: "+safeText(runErr.Error())))
	}
	return n
}

// interrupt cancels the turn under way, as Ctrl-C does.
func (c *conversation) interrupt() {
	if c.interrupts.Add(1) == 1 {
		c.out.pause()
		fmt.Fprintln(c.env.Stderr, "\nhelikon: cancelling the turn (Ctrl-C again to leave)")
	}
	c.mu.Lock()
	if c.cancelTurn != nil {
		c.cancelTurn()
	}
	c.mu.Unlock()
}

// readAnswer reads an approval's answer through the line editor, the only
// reader of the terminal. The terminal does not turn Ctrl-C into a signal
// while a prompt is open: there it cancels the turn through interrupt.
func (c *conversation) readAnswer(_ context.Context, prompt string) (string, error) {
	restore := holdSignalKeys()
	s, err := c.line.Prompt(prompt)
	restore()
	if errors.Is(err, liner.ErrPromptAborted) {
		c.interrupt()
		return "", errTurnCancelled
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "y", "yes", "a", "always":
		// The call runs now (the approver holds c.out.printing).
		c.out.spinLabel = c.lastCall
		c.out.startSpinner()
	}
	return s, err
}

// event shows ev: the agent's own tool calls compactly (see toolEvent),
// everything else as helikon run does.
func (c *conversation) event(ev *agent.Event) {
	if !ev.Forwarded() && c.toolEvent(ev) {
		return
	}
	switch ev.Kind {
	case agent.EventRunStarted, agent.EventRunFailed:
		return // the conversation says what it needs to
	}
	c.out.event(ev)
}

// toolEvent shows a tool call as one line, when it ends: the tool, its
// target and the outcome, output folded to its first line; a spinner with
// the elapsed time stands in for it while it runs. It reports whether ev
// was such an event.
func (c *conversation) toolEvent(ev *agent.Event) bool {
	out := c.out
	switch ev.Kind {
	case agent.EventToolCall, agent.EventToolResult, agent.EventPermissionDenied:
	default:
		return false
	}
	out.printing.Lock()
	defer out.printing.Unlock()
	out.pause()
	out.endLine()
	call := ev.ToolCall
	what := clip(call.Name, 80)
	if t := callTarget(call.Args); t != "" {
		what += " " + t
	}
	switch ev.Kind {
	case agent.EventToolCall:
		c.calls[call.ID] = what
		c.lastCall = what
		out.spinLabel = what
		out.startSpinner()
	case agent.EventPermissionDenied:
		fmt.Fprintf(c.env.Stderr, "%s %s · denied: %s\n", c.paint("31", "✗"), what, clip(ev.Reason, 200))
	case agent.EventToolResult:
		delete(c.calls, call.ID)
		switch res := ev.ToolResult; {
		case res.IsError && res.Kind == helikon.KindDenied: // shown by EventPermissionDenied
		case res.IsError:
			fmt.Fprintf(c.env.Stderr, "%s %s · %s: %s\n", c.paint("31", "✗"), what, res.Kind, clip(res.Content, 200))
		default:
			fmt.Fprintf(c.env.Stderr, "%s %s · %s\n", c.paint("32", "✓"), what, c.fold(res.Content))
		}
	}
	return true
}

// fold shows a tool's output in one line: for an output that is a JSON
// object, its text (Bash's stdout, or stderr when that is empty, and a
// failing exit status; Read's content; a page's text) else the object;
// the first line of that text and the number of the rest.
func (c *conversation) fold(content string) string {
	s, status := content, ""
	var m map[string]any
	if json.Unmarshal([]byte(content), &m) == nil {
		for _, k := range []string{"stdout", "stderr", "content", "text", "output"} {
			if v, ok := m[k].(string); ok {
				s = v
				if strings.TrimSpace(v) != "" {
					break
				}
			}
		}
		if code, ok := m["exit_code"].(float64); ok && code != 0 {
			status = fmt.Sprintf("exit %d: ", int(code))
		} else if _, ok := m["exit_code"]; ok && m["exit_code"] == nil {
			status = "killed: "
		}
	}
	s = strings.TrimRight(s, "\n")
	if strings.TrimSpace(s) == "" {
		return status + c.paint("2", "no output")
	}
	firstLine, rest, _ := strings.Cut(s, "\n")
	shown := status + clip(firstLine, 100)
	if rest != "" {
		shown += c.paint("2", fmt.Sprintf(" (+%d lines)", strings.Count(rest, "\n")+1))
	}
	return shown
}

// callTarget returns what a call acts on, from its arguments: the command,
// path, URL or query; else the arguments clipped.
func callTarget(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) == nil {
		for _, k := range []string{"command", "path", "file_path", "url", "query", "pattern"} {
			if s, ok := m[k].(string); ok {
				return clip(s, 100)
			}
		}
	}
	if s := string(args); s != "{}" {
		return clip(s, 100)
	}
	return ""
}

// paint colours s with the SGR code on a terminal without NO_COLOR.
func (c *conversation) paint(code, s string) string {
	if !c.color {
		return s
	}
	return "\033[" + code + "m" + s + "\033[0m"
}

// showHistory prints the earlier turns of the session being resumed: the
// user's prompts, the answers, and one line per tool call.
func (c *conversation) showHistory(ctx context.Context) error {
	sess, err := c.cfg.Store.Get(ctx, c.id)
	if errors.Is(err, session.ErrNotFound) {
		fmt.Fprintf(c.env.Stderr, "helikon: session %s is new\n", c.id)
		return nil
	}
	if err != nil {
		return err
	}
	w := c.env.Stderr
	for _, m := range sess.Messages {
		switch m.Role {
		case model.RoleUser:
			fmt.Fprintf(w, "%s %s\n", c.paint("1", "›"), safeText(m.Text))
		case model.RoleAssistant:
			if t := strings.TrimSpace(m.Text); t != "" {
				fmt.Fprintln(w, safeText(t))
			}
			for _, tc := range m.ToolCalls {
				fmt.Fprintf(w, "%s %s %s\n", c.paint("2", "·"), clip(tc.Name, 80), callTarget(tc.Args))
			}
		}
	}
	fmt.Fprintf(w, "%s\n", c.paint("2", fmt.Sprintf("— %d earlier messages of session %s —", len(sess.Messages), c.id)))
	return nil
}
