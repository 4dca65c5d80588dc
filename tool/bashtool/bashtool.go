// Package bashtool is the Bash tool: it runs a shell command through an
// execution backend ([backend.Backend]) and returns its output and exit
// status to the model.
//
// The tool knows nothing of any one backend: its containment is the
// backend's, and its description shows the backend's guarantee label (for
// example "host (no containment)") so the model knows the tier it runs
// under. What may run is decided in two places that share one command
// matcher built on a real shell parser (package shellcmd): the tool's own
// allow and deny lists of programs ([Options]), checked on every call, and
// the permission pipeline's Bash(program) rules, which see the programs
// through [Tool.Targets].
//
// # Guarantees
//
//   - A command whose programs cannot all be determined statically (a
//     program named by a variable, eval, source, an unparseable command) is
//     refused by an allow list and by a deny list: both fail closed.
//   - A non-zero exit, a timeout and truncated output are results, not
//     errors; exit_code is null when the command was killed.
//   - A write redirection is reported as a command "> PATH" besides its path
//     target, so Bash(...) allow rules of programs do not cover writing a
//     file through a redirection (see [Tool.Targets]).
//   - timeout_ms can shorten the backend's timeout, never lengthen it.
//
// # Not guaranteed
//
// The allow and deny lists restrict which programs a command names, not
// what those programs do. A code runner (python, node, perl, awk, GNU sed,
// tar --to-command, git with aliases, -c core.pager or hooks, make, package
// managers, ssh, pagers and editors) is listed under its own name and can
// run anything: an allow list must not name one, and a deny list of a
// program is bypassed through any code runner it does not also deny. Where
// bash is missing and the tool falls back to sh, the top-level line is
// analysed as bash, so dash's own reading of $'...' and [[ there is not
// covered. Use the lists to keep a model on task, and a containing backend
// to keep it in bounds.
package bashtool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/shellcmd"
	"github.com/paigasus/helikon/tool/functiontool"
)

// Name is the tool's name.
const Name = "Bash"

// Args are the tool's arguments.
type Args struct {
	Command     string `json:"command" jsonschema:"the shell command to run with bash -c, in the sandbox root directory"`
	TimeoutMS   int64  `json:"timeout_ms,omitempty" jsonschema:"optional timeout in milliseconds; it can shorten the default timeout but not extend it"`
	Description string `json:"description,omitempty" jsonschema:"optional short description of what the command does, for the human watching"`
	// RunInBackground is honoured when the tool has a process table
	// ([Options].Processes); otherwise it is refused.
	RunInBackground bool `json:"run_in_background,omitempty" jsonschema:"start the command in the background and return at once with a shell_id; read its output with BashOutput and end it with KillShell"`
	// YieldMS, honoured with a process table as RunInBackground is, runs
	// the command as a process and waits for it at most this long: a
	// command that ends sooner is a result like any other (standard
	// error joined to standard output), one that runs on is not killed
	// but returned with its shell_id and its output so far, to continue
	// with BashOutput, BashInput and KillShell (Codex's yield).
	YieldMS int64 `json:"yield_ms,omitempty" jsonschema:"wait at most this many milliseconds for the command; if it is still running then, it is not killed: the call returns its output so far and a shell_id to continue with BashOutput, BashInput or KillShell (stderr is joined to stdout)"`
}

// Output is the tool's result.
type Output struct {
	Stdout string `json:"stdout" jsonschema:"standard output, capped"`
	Stderr string `json:"stderr" jsonschema:"standard error, capped"`
	// ExitCode is nil when the command was killed (timeout, signal).
	ExitCode  *int `json:"exit_code" jsonschema:"the exit status, or null when the command was killed"`
	TimedOut  bool `json:"timed_out" jsonschema:"true when the timeout stopped the command"`
	Truncated bool `json:"truncated" jsonschema:"true when stdout or stderr reached the output cap and was cut"`
	// ShellID names a command started with run_in_background, or one
	// that outlived yield_ms.
	ShellID string `json:"shell_id,omitempty" jsonschema:"the id of the background command, for BashOutput and KillShell"`
	// Running says that the command outlived yield_ms and runs on as
	// ShellID.
	Running bool `json:"running,omitempty" jsonschema:"true when the command outlived yield_ms and runs on as shell_id"`
	// Missed counts output bytes the process's ring no longer held
	// when they were read (yield_ms only).
	Missed int64 `json:"missed_bytes,omitempty" jsonschema:"output bytes lost before they could be read"`
}

// Options configures the Bash tool. The zero value (or nil) has no allow or
// deny list: every command goes to the backend (and to the permission
// pipeline, when the tool runs under one).
type Options struct {
	// AllowCommands, when not empty, lists the programs commands may run:
	// a program name ("git") or a program with leading arguments ("git
	// status"), matched as in Bash(...) permission rules. A command runs
	// only when every program in it is allowed. A write redirection is a
	// command "> PATH" of its own (see [Tool.Targets]): list ">" to allow
	// every redirection, or "> /abs/path" for one target.
	AllowCommands []string
	// DenyCommands lists programs no command may run, in the same form. A
	// deny entry beats an allow entry.
	DenyCommands []string
	// Root is the directory relative paths in commands are resolved
	// against when reporting targets and checking the lists (a relative
	// program or script that leads under /proc or /dev is refused, see
	// package shellcmd); "" means the backend's working directory when the
	// backend reports one ([backend.WorkingDir]).
	// When neither is known, a command that redirects to a relative path
	// has unresolved targets (see [Tool.Targets]).
	Root string
	// Processes, when set, gives the session's process table (a
	// [*process.Table], or [*process.Sessions] for a table per session):
	// the tool then accepts run_in_background and starts the command in
	// it. Nil refuses run_in_background.
	Processes process.Source
}

// Tool is the Bash tool. It implements [helikon.Tool], [helikon.Effecter],
// [helikon.StructuredOutput] and [helikon.Targeter], and is safe for
// concurrent use.
type Tool[C any] struct {
	*functiontool.Tool[C, Args, Output]
	backend backend.Backend
	lists   shellcmd.Filter
	root    string
	procs   process.Source
}

var _ helikon.Targeter = (*Tool[struct{}])(nil)

// New returns the Bash tool running commands through b.
func New[C any](b backend.Backend, opts *Options) (*Tool[C], error) {
	if b == nil {
		return nil, errors.New("bashtool: nil backend")
	}
	if opts == nil {
		opts = &Options{}
	}
	t := &Tool[C]{backend: b, lists: shellcmd.Filter{Allow: opts.AllowCommands, Deny: opts.DenyCommands}, root: opts.Root, procs: opts.Processes}
	if err := t.lists.Validate(); err != nil {
		return nil, fmt.Errorf("bashtool: %w", err)
	}
	if t.root == "" {
		if d, ok := b.(backend.WorkingDir); ok {
			t.root = d.Dir()
		}
	}
	in, err := jsonschema.For[Args](nil)
	if err != nil {
		return nil, fmt.Errorf("bashtool: %w", err)
	}
	one := 1.0
	in.Properties["timeout_ms"].Minimum = &one
	ft, err := functiontool.New(Name, description(b, opts), t.run, &functiontool.Options{
		Effect:      helikon.EffectSideEffect,
		InputSchema: in,
	})
	if err != nil {
		return nil, fmt.Errorf("bashtool: %w", err)
	}
	t.Tool = ft
	return t, nil
}

// description tells the model what the tool does, under what containment
// and with what limits.
func description(b backend.Backend, opts *Options) string {
	g := b.Guarantees()
	var d strings.Builder
	d.WriteString("Run a shell command with bash -c in the sandbox root directory and return its stdout, stderr and exit code. ")
	d.WriteString("Containment: " + g.Label + ". ")
	if t, ok := b.(backend.TimeLimited); ok {
		fmt.Fprintf(&d, "Commands are killed after %s (timeout_ms can only shorten this), together with everything they started; do not start servers or other long-running processes in the background. ", t.Timeout())
	} else {
		d.WriteString("Commands are killed when they time out (timeout_ms can only shorten the timeout), together with everything they started. ")
	}
	if opts.Processes != nil {
		d.WriteString("To start a server, a watcher or anything else that keeps running, set run_in_background: the call returns a shell_id at once; read the new output with BashOutput, list with BashList, end it with KillShell. ")
		d.WriteString("For a command that may take long (a build, a test suite), set yield_ms: if it is still running after that long, the call returns its output so far and a shell_id instead of killing it. ")
	}
	d.WriteString("Standard input is empty, so do not run interactive programs. Output is capped; a non-zero exit_code or timed_out is reported, not raised.")
	if len(opts.AllowCommands) > 0 {
		d.WriteString(" Only these programs may run: " + strings.Join(opts.AllowCommands, ", ") + ".")
	}
	if len(opts.DenyCommands) > 0 {
		d.WriteString(" These programs may not run: " + strings.Join(opts.DenyCommands, ", ") + ".")
	}
	return d.String()
}

// Backend returns the backend commands run through.
func (t *Tool[C]) Backend() backend.Backend { return t.backend }

func (t *Tool[C]) run(tc *helikon.ToolContext[C], in Args) (Output, error) {
	if strings.TrimSpace(in.Command) == "" {
		return Output{}, helikon.InvalidArgs("command is empty: give the shell command to run")
	}
	if err := t.checkLists(tc, in); err != nil {
		return Output{}, err
	}
	if in.RunInBackground {
		return t.background(tc, in)
	}
	if in.YieldMS < 0 {
		return Output{}, helikon.InvalidArgs("yield_ms is negative: give the milliseconds to wait, or leave it out")
	}
	if in.YieldMS > 0 {
		return t.yield(tc, in)
	}
	req := &backend.Request{Command: in.Command}
	if in.TimeoutMS > 0 {
		req.Timeout = time.Duration(in.TimeoutMS) * time.Millisecond
	}
	res, err := t.backend.Run(tc, req)
	if err != nil {
		if ctxErr := tc.Err(); ctxErr != nil {
			return Output{}, fmt.Errorf("the command was cancelled: %w", ctxErr)
		}
		if errors.Is(err, backend.ErrUnavailable) {
			return Output{}, fmt.Errorf("the execution backend cannot run commands here: %w", err)
		}
		return Output{}, fmt.Errorf("the command could not be run: %w", err)
	}
	return Output{
		Stdout:    string(res.Stdout),
		Stderr:    string(res.Stderr),
		ExitCode:  res.ExitCode,
		TimedOut:  res.TimedOut,
		Truncated: res.Truncated,
	}, nil
}

// yield starts in.Command in the tool's process table and waits for it up
// to in.YieldMS: its result when it ended by then, else its output so far
// and its shell id, the process running on.
func (t *Tool[C]) yield(tc *helikon.ToolContext[C], in Args) (Output, error) {
	if t.procs == nil {
		return Output{}, helikon.InvalidArgs("yield_ms is not available here (no background commands): run the command to its end without it")
	}
	tab, err := t.procs.TableFor(tc)
	if err != nil {
		return Output{}, err
	}
	req := &backend.StartRequest{Request: backend.Request{Command: in.Command}}
	if in.TimeoutMS > 0 {
		req.Lifetime = time.Duration(in.TimeoutMS) * time.Millisecond
	}
	e, err := tab.Start(tc, req)
	if err != nil {
		return Output{}, fmt.Errorf("the command could not be started: %w", err)
	}
	p := e.Process()
	timer := time.NewTimer(time.Duration(min(in.YieldMS, int64(backend.MaxLifetime/time.Millisecond))) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-p.Done():
	case <-timer.C:
	case <-tc.Done():
		_, _ = tab.Kill(context.WithoutCancel(tc), e.ID)
		return Output{}, fmt.Errorf("the command was cancelled: %w", tc.Err())
	}
	c, err := e.ReadNew(tc, 0, 0)
	if err != nil {
		return Output{}, err
	}
	out := Output{Stdout: string(c.Data), Missed: c.Missed}
	select {
	case <-p.Done():
	default:
		out.ShellID, out.Running = e.ID, true
		return out, nil
	}
	res, err := p.Wait(tc)
	if err != nil && res == nil {
		return Output{}, fmt.Errorf("the command's end could not be collected: %w", err)
	}
	out.ExitCode, out.TimedOut = res.ExitCode, res.TimedOut
	return out, nil
}

// background starts in.Command in the tool's process table.
func (t *Tool[C]) background(tc *helikon.ToolContext[C], in Args) (Output, error) {
	if t.procs == nil {
		return Output{}, helikon.InvalidArgs("run_in_background is not available here: run the command to its end without it")
	}
	req := &backend.StartRequest{Request: backend.Request{Command: in.Command}}
	if in.TimeoutMS > 0 {
		req.Lifetime = time.Duration(in.TimeoutMS) * time.Millisecond
	}
	tab, err := t.procs.TableFor(tc)
	if err != nil {
		return Output{}, err
	}
	e, err := tab.Start(tc, req)
	if err != nil {
		return Output{}, fmt.Errorf("the command could not be started in the background: %w", err)
	}
	return Output{ShellID: e.ID}, nil
}
