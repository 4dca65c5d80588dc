package bashtool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/shellcmd"
	"github.com/paigasus/helikon/tool/functiontool"
)

// InputName is the tool that writes to a background command's input. Claude
// Code's family has no such tool; the name and the shape (input, then the new
// output after a wait) follow Codex's write_stdin within that family's
// naming.
const InputName = "BashInput"

// maxPending bounds the unfinished input a shell holds that a new input is
// judged with (see [splitInput]): more than a person types before the end
// of a construct.
const maxPending = 64 << 10

// InputArgs are BashInput's arguments.
type InputArgs struct {
	ShellID string `json:"shell_id" jsonschema:"the shell_id Bash returned for the background command"`
	Input   string `json:"input" jsonschema:"the text to write to the command's standard input; end a line with \\n for a shell or an interpreter to run it"`
	Close   bool   `json:"close,omitempty" jsonschema:"close the standard input after writing (end of file)"`
	WaitMS  int64  `json:"wait_ms,omitempty" jsonschema:"optional: after writing, wait up to this many milliseconds (at most 60000) for new output and return it"`
}

// InputTool is BashInput: it writes to the standard input of a command
// started with Bash run_in_background, and the permission pipeline judges
// what it writes (see [InputTool.Targets]). It shares the Bash tool's
// process table, allow and deny lists and root. It is safe for concurrent
// use.
type InputTool[C any] struct {
	*functiontool.Tool[C, InputArgs, OutputResult]
	bash *Tool[C]

	mu      sync.Mutex
	pending map[*process.Entry]*inputState
}

// inputState is what a shell holds of the input written to it: the text it
// has not run yet, because a line or a construct is unfinished.
type inputState struct {
	mu      sync.Mutex // held from judging an input to writing it
	pending string
}

var _ helikon.ContextTargeter = (*InputTool[struct{}])(nil)

// NewInputTool returns BashInput over the process table of bash, which must
// have one ([Options].Processes).
func NewInputTool[C any](bash *Tool[C]) (*InputTool[C], error) {
	if bash == nil || bash.procs == nil {
		return nil, errors.New("bashtool: BashInput needs the Bash tool's process table (Options.Processes)")
	}
	t := &InputTool[C]{bash: bash, pending: map[*process.Entry]*inputState{}}
	ft, err := functiontool.New(InputName,
		"Write to the standard input of a background command started with Bash run_in_background (a shell, a REPL, a program asking a question), and return its new output. "+
			"Input to a shell is checked as a Bash command line, with the same rules; input to any other program is checked as that program's command line, and usually needs approval.",
		t.run, &functiontool.Options{Effect: helikon.EffectSideEffect})
	if err != nil {
		return nil, fmt.Errorf("bashtool: %w", err)
	}
	t.Tool = ft
	return t, nil
}

// Targets reports what writing the input would run, for the permission
// pipeline and the Bash tool's lists. Bash(...) rules apply to BashInput
// calls as to Bash calls, and BashInput(...) rules to BashInput calls only.
//
// The command line the process was started with says who reads the input:
//
//   - A shell reading commands from its input (bash, sh, dash, zsh, ksh,
//     mksh, ash, without -c or a script): the input is a command line, and
//     it is analysed as Bash's command is, with the shell's unfinished
//     input before it (an unfinished line or construct: "r" then "m -rf
//     /\n" is judged as "rm -rf /"). Every command is reported with an
//     unknown directory (earlier input may have changed it), so the
//     policy-file guard judges relative names that may lead to a policy
//     file as it does after a cd it cannot follow. Input that is not text
//     (control characters other than tab and newline, invalid UTF-8) is
//     refused: a terminal or the shell may read it otherwise than the
//     analysis.
//   - Any other program (python3, node, a REPL, docker exec -it): the
//     input is code or data the pipeline cannot analyse, and it is
//     reported as that program's command line: a rule must allow that
//     program (BashInput(python3), or a Bash rule that allows running it
//     with any code), otherwise the policy decides (the toolbox's asks).
//
// A line typed into a shell that starts an interpreter is judged as a Bash
// line; the lines after it, which the interpreter reads, are judged as Bash
// lines too: code that does not parse as Bash is unresolved (every deny
// pattern matches, no allow pattern does), but a line of another language
// that parses as commands the rules allow passes as those commands. The
// analysis has the limits of package shellcmd.
func (t *InputTool[C]) Targets(args json.RawMessage) (helikon.Targets, error) {
	return t.TargetsContext(context.Background(), args)
}

// TargetsContext is Targets for a call whose context is ctx, which names
// the session whose process the input is for (see [process.Sessions]).
func (t *InputTool[C]) TargetsContext(ctx context.Context, args json.RawMessage) (helikon.Targets, error) {
	return t.DecodeTargets(args, func(in InputArgs) helikon.Targets {
		e, err := get(ctx, t.bash.procs, in.ShellID)
		if err != nil {
			return helikon.Targets{Unresolved: err.Error()}
		}
		st := t.state(e)
		st.mu.Lock()
		pending := st.pending
		st.mu.Unlock()
		tg, _, err := t.judge(e, pending, in.Input)
		if err != nil {
			return helikon.Targets{Unresolved: err.Error()}
		}
		return tg
	})
}

// state returns e's input state, forgetting those of ended processes.
func (t *InputTool[C]) state(e *process.Entry) *inputState {
	t.mu.Lock()
	defer t.mu.Unlock()
	st, ok := t.pending[e]
	if !ok {
		for old := range t.pending {
			if !old.Info().Running {
				delete(t.pending, old)
			}
		}
		st = &inputState{}
		t.pending[e] = st
	}
	return st
}

// judge returns the targets of writing input to e, whose shell holds
// pending, and what it holds afterwards.
func (t *InputTool[C]) judge(e *process.Entry, pending, input string) (helikon.Targets, string, error) {
	readers, shell, why := inputReaders(e.Command)
	if why != "" {
		return helikon.Targets{Unresolved: why}, pending, nil
	}
	tg := helikon.Targets{Commands: readers}
	if !shell {
		return tg, pending, nil
	}
	judged, next, err := splitInput(pending, input)
	if err != nil {
		return helikon.Targets{}, pending, err
	}
	lt := t.bash.targetsOf(Args{Command: judged})
	for i := range lt.Commands {
		lt.Commands[i].DirUnknown = "earlier input to the shell may have changed its directory"
	}
	lt.Commands = append(tg.Commands, lt.Commands...)
	return lt, next, nil
}

// shells are the programs that read commands from their input when given no
// command (-c) and no script.
var shells = []string{"ash", "bash", "dash", "ksh", "mksh", "rbash", "sh", "zsh"}

// inputReaders returns the commands of the command line start that may read
// a process's input, besides the shells: every simple command but the
// wrappers and shells that hand their input on (exec bash, env X=1 bash,
// bash -c '...'), and whether a shell reading commands is among them. why
// is set when the line names no command.
func inputReaders(start string) (readers []helikon.Command, shell bool, why string) {
	cmds := shellcmd.Analyze(start).Commands
	for i, c := range cmds {
		if i+1 < len(cmds) && isSuffix(cmds[i+1].Args, c.Args) {
			continue // a wrapper: the next command is the one it runs
		}
		if slices.Contains(shells, c.Program()) && !(len(c.Dynamic) > 0 && c.Dynamic[0]) {
			switch readsCommands(c.Args[1:]) {
			case "stdin":
				shell = true
				continue
			case "-c":
				continue // its commands are listed after it
			}
		}
		readers = append(readers, helikon.Command{Args: c.Args, Dynamic: c.Dynamic})
	}
	if len(readers) == 0 && !shell {
		return nil, false, "the command line of the process names no program that reads its input"
	}
	return readers, shell, ""
}

// readsCommands says where a shell given args reads its commands from:
// "stdin", "-c" (its arguments) or "script" (a file).
func readsCommands(args []string) string {
	for _, a := range args {
		switch {
		case a == "--" || a == "-":
			return "stdin"
		case strings.HasPrefix(a, "--"):
			continue // --login, --norc, --posix
		case strings.HasPrefix(a, "-") || strings.HasPrefix(a, "+"):
			if strings.Contains(a[1:], "c") {
				return "-c"
			}
			if strings.Contains(a[1:], "s") {
				return "stdin"
			}
		default:
			return "script"
		}
	}
	return "stdin"
}

// isSuffix reports whether inner ends outer and is shorter.
func isSuffix(inner, outer []string) bool {
	return len(inner) > 0 && len(inner) < len(outer) && slices.Equal(outer[len(outer)-len(inner):], inner)
}

// splitInput returns the text a shell holding pending (input it has not run
// yet) will have read once input is written, which is what is judged, and
// what it holds afterwards: the text after the last newline, or all of it
// while a construct (a quote, a loop, a here-document) is open. A shell runs
// nothing before a newline, so an input without one is judged with the text
// that follows it when that comes. Input that is not text is refused: a
// control character may be read otherwise by the shell or a terminal (a
// backspace, a carriage return, an interrupt) than by the analysis.
func splitInput(pending, input string) (judged, next string, err error) {
	if !utf8.ValidString(input) {
		return "", pending, errors.New("input to a shell must be UTF-8 text")
	}
	for _, r := range input {
		if r < ' ' && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			return "", pending, fmt.Errorf("input to a shell may not hold the control character %U: write commands as text lines (to interrupt or end the command, use KillShell)", r)
		}
	}
	judged = pending + input
	if len(judged) > maxPending {
		return "", pending, fmt.Errorf("the shell holds %d bytes of unfinished input and this would make it %d (at most %d): finish the line or the construct (a quote, a loop, a here-document)", len(pending), len(judged), maxPending)
	}
	i := strings.LastIndexByte(judged, '\n')
	if i < 0 {
		return judged, judged, nil
	}
	complete := judged[:i+1]
	if continued(complete) {
		return judged, judged, nil
	}
	if _, perr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(complete), ""); perr != nil && syntax.IsIncomplete(perr) {
		return judged, judged, nil
	}
	return judged, judged[i+1:], nil
}

// continued reports whether text ends with a backslash-newline, which
// joins the next line to it (the parser does not count that as
// unfinished). Inside a comment it does not, and the line is kept the
// longer for nothing.
func continued(text string) bool {
	n := 0
	for i := len(text) - 2; i >= 0 && text[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// run writes in.Input to the process, judged again under the process's
// input lock: what it writes is what the pipeline checked, or the call
// fails.
func (t *InputTool[C]) run(tc *helikon.ToolContext[C], in InputArgs) (OutputResult, error) {
	e, err := get(tc, t.bash.procs, in.ShellID)
	if err != nil {
		return OutputResult{}, err
	}
	st := t.state(e)
	st.mu.Lock()
	tg, next, err := t.judge(e, st.pending, in.Input)
	if err == nil {
		if checked := tc.Targets(); checked != nil && !sameTargets(checked, &tg) {
			err = errors.New("other input reached the process after this call was checked: send it again")
		} else {
			err = t.bash.lists.CheckTargets(&tg)
		}
	}
	if err != nil {
		st.mu.Unlock()
		return OutputResult{}, helikon.InvalidArgs(err.Error())
	}
	if in.Input != "" {
		_, err = e.Write([]byte(in.Input))
	}
	if err == nil {
		st.pending = next
		if in.Close {
			err = e.Process().Input().Close()
		}
	}
	st.mu.Unlock()
	if err != nil {
		return OutputResult{}, fmt.Errorf("%s: writing its input: %w", in.ShellID, err)
	}
	return readNew(tc, e, in.WaitMS, nil)
}

// sameTargets reports whether two reports of targets say the same.
func sameTargets(a, b *helikon.Targets) bool {
	return reflect.DeepEqual(a.Commands, b.Commands) && reflect.DeepEqual(a.Paths, b.Paths) &&
		slices.Equal(a.Hosts, b.Hosts) && a.Unresolved == b.Unresolved
}

// readNew reads e's new output, waiting up to waitMS for some, keeping
// only the lines re matches when it is not nil.
func readNew[C any](tc *helikon.ToolContext[C], e *process.Entry, waitMS int64, re *regexp.Regexp) (OutputResult, error) {
	wait := min(time.Duration(max(waitMS, 0))*time.Millisecond, maxWait)
	c, err := e.ReadNew(tc, wait, 0)
	if err != nil {
		return OutputResult{}, err
	}
	out := string(c.Data)
	if re != nil {
		var kept []string
		for line := range strings.Lines(out) {
			if re.MatchString(strings.TrimRight(line, "\n")) {
				kept = append(kept, line)
			}
		}
		out = strings.Join(kept, "")
	}
	return OutputResult{Status: status(e.Info()), Output: out, MissedBytes: c.Missed}, nil
}
