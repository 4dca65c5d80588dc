package agentcli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/paigasus/helikon/cli"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/toolbox"
)

// ErrNoTerminal is returned by [TerminalApprover] when there is no terminal
// to ask on; the call is then denied.
var ErrNoTerminal = errors.New("approval needed but there is no terminal to ask on")

// maxShownArgs bounds the arguments shown in an approval prompt.
const maxShownArgs = 2000

// TerminalApprover asks the user on a terminal whether a tool call may run. It
// shows the tool, its arguments and the reason, and reads y (yes), n (no),
// a (always) or s (always, and save). "Always" adds rules that allow the
// call exactly and nothing wider (see [toolbox.AlwaysRules]: Bash(=touch a) for
// touch a, which touch a b, touch b and ./touch a do not match;
// Edit(/src/a/b.go) for src/a/b.go), shown in the prompt, to the session's
// rules: the same call is not asked about again. "Save" also writes the rules to the project policy
// file, through Save. Neither is offered for a question a built-in guard or
// an ask rule asked, and the session's rules answer only the questions the
// pipeline asks after its deny rules, guards and ask rules, so they never
// reach across one. Without a terminal it denies with [ErrNoTerminal]. It
// asks one question at a time.
type TerminalApprover struct {
	In  *bufio.Reader // where answers are read from
	Out io.Writer     // where prompts are written
	// IsTerminal reports whether In and Out are a terminal; nil means no.
	IsTerminal func() bool
	// Before is called before a prompt is shown (to stop a spinner).
	Before func()
	// Save, when set, keeps rules in the project policy file and says
	// where; nil offers no "save".
	Save func(rules []helikon.Rule) (string, error)
	// ReadAnswer, when set, reads the answer (a line editor's prompt
	// showing prompt) instead of In; the choices are then written to Out on
	// a line of their own.
	ReadAnswer func(ctx context.Context, prompt string) (string, error)

	mu     sync.Mutex
	always toolbox.SessionRules
	// reading carries the result of a read of In that a cancelled prompt
	// left running; the next prompt takes its line instead of starting a
	// second, concurrent read that would lose the answer.
	reading chan readResult
}

var _ helikon.Approver = (*TerminalApprover)(nil)

// NewTerminalApprover returns an approver on env's stdin and stderr.
func NewTerminalApprover(env *cli.Env) *TerminalApprover {
	return &TerminalApprover{In: bufio.NewReader(env.Stdin), Out: env.Stderr, IsTerminal: env.IsTerminal}
}

// Approve implements [helikon.Approver].
func (a *TerminalApprover) Approve(ctx context.Context, req *helikon.ApprovalRequest) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if r, ok := a.always.Allows(req); ok {
		fmt.Fprintf(a.Out, "helikon: %s allowed by the session rule %s\n", safeText(req.Tool), safeText(r.String()))
		return true, nil
	}
	if a.IsTerminal == nil || !a.IsTerminal() {
		return false, fmt.Errorf("%w: rerun on a terminal, or permit the call with --allow %s or --mode", ErrNoTerminal, req.Tool)
	}
	if a.Before != nil {
		a.Before()
	}
	args := string(req.Args)
	var pretty strings.Builder
	var indented bytes.Buffer
	if err := json.Indent(&indented, req.Args, "    ", "  "); err == nil {
		args = indented.String()
	}
	if len(args) > maxShownArgs {
		args = args[:maxShownArgs] + fmt.Sprintf("… (%d more bytes)", len(args)-maxShownArgs)
	}
	fmt.Fprintf(&pretty, "\nhelikon: %s wants to run (%s).\n", req.Tool, req.Effect)
	fmt.Fprintf(&pretty, "  why asked: %s\n", req.Reason)
	fmt.Fprintf(&pretty, "  arguments: %s\n", args)
	offer := toolbox.AlwaysRules(req)
	choices := "[y]es, [n]o"
	if len(offer) > 0 {
		names := make([]string, len(offer))
		for i, r := range offer {
			names[i] = r.String()
		}
		choices += ", [a]lways, for exactly this call (this session: " + strings.Join(names, ", ") + ")"
		if a.Save != nil {
			choices += ", [s]ave that rule to the project"
		}
	}
	choices = safeText(choices)
	prompt := safeText(pretty.String())
	for {
		var line string
		var err error
		if a.ReadAnswer != nil {
			fmt.Fprintf(a.Out, "%s  %s\n", prompt, choices)
			line, err = a.ReadAnswer(ctx, "  allow? ")
		} else {
			fmt.Fprintf(a.Out, "%s  allow? %s: ", prompt, choices)
			line, err = a.readLine(ctx)
		}
		prompt = ""
		if err != nil {
			fmt.Fprintln(a.Out)
			return false, fmt.Errorf("reading the answer: %w", err)
		}
		ans := strings.ToLower(strings.TrimSpace(line))
		save := ans == "s" || ans == "save"
		switch ans {
		case "y", "yes":
			return true, nil
		case "n", "no", "":
			return false, nil
		case "a", "always", "s", "save":
			if len(offer) == 0 || save && a.Save == nil {
				break
			}
			a.always.Add(offer...)
			if save {
				where, err := a.Save(offer)
				if err != nil {
					fmt.Fprintf(a.Out, "  not saved: %v (the rule holds for this session)\n", err)
				} else {
					fmt.Fprintf(a.Out, "  saved to %s\n", safeText(where))
				}
			}
			return true, nil
		}
		fmt.Fprintf(a.Out, "  please answer %s\n", choices)
	}
}

type readResult struct {
	s   string
	err error
}

// readLine reads a line from In, giving up when ctx is done. The read itself
// cannot be interrupted: on cancellation it is left running, and the next
// call waits for it. Called with a.mu held.
func (a *TerminalApprover) readLine(ctx context.Context) (string, error) {
	if a.reading == nil {
		ch := make(chan readResult, 1)
		go func() {
			s, err := a.In.ReadString('\n')
			if err == io.EOF && s != "" {
				err = nil
			}
			ch <- readResult{s, err}
		}()
		a.reading = ch
	}
	select {
	case res := <-a.reading:
		a.reading = nil
		return res.s, res.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// safeText is [cli.SafeText]: what a model or a tool sends could otherwise
// rewrite an approval prompt the user is reading.
func safeText(s string) string { return cli.SafeText(s) }
