package bashtool

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/tool/functiontool"
)

// The tools of background commands follow Claude Code's names and shapes
// (Bash run_in_background, BashOutput with bash_id and filter, KillShell with
// shell_id), which models are trained to call; see docs/design.md
// "## Processes".
const (
	// OutputName is the tool that reads a background command's new output.
	OutputName = "BashOutput"
	// KillName is the tool that ends a background command.
	KillName = "KillShell"
	// ListName is the tool that lists the session's background commands.
	ListName = "BashList"
)

// maxWait bounds BashOutput's wait_ms: a call must come back to the model.
const maxWait = 60 * time.Second

// OutputArgs are BashOutput's arguments.
type OutputArgs struct {
	BashID string `json:"bash_id" jsonschema:"the shell_id Bash returned for the background command"`
	Filter string `json:"filter,omitempty" jsonschema:"optional regular expression: only the new output lines that match it are returned (the others are still consumed)"`
	WaitMS int64  `json:"wait_ms,omitempty" jsonschema:"optional: when there is no new output yet, wait up to this many milliseconds (at most 60000) for some"`
}

// Status is a background command's state as the tools report it.
type Status struct {
	ShellID  string `json:"shell_id" jsonschema:"the background command's id"`
	Command  string `json:"command" jsonschema:"the command line"`
	State    string `json:"status" jsonschema:"running, exited, killed, or timed_out"`
	ExitCode *int   `json:"exit_code,omitempty" jsonschema:"the exit status once it exited"`
}

// OutputResult is BashOutput's result.
type OutputResult struct {
	Status
	Output      string `json:"output" jsonschema:"the output written since the last BashOutput (stdout and stderr merged)"`
	MissedBytes int64  `json:"missed_bytes,omitempty" jsonschema:"output that was dropped before it was read, because only the most recent output is kept"`
}

// KillArgs are KillShell's arguments.
type KillArgs struct {
	ShellID string `json:"shell_id" jsonschema:"the shell_id of the background command to end"`
}

// ListArgs are BashList's arguments (none).
type ListArgs struct{}

// ListResult is BashList's result.
type ListResult struct {
	Shells []Status `json:"shells" jsonschema:"the session's background commands, oldest first"`
}

func status(in process.Info) Status {
	s := Status{ShellID: in.ID, Command: in.Command, ExitCode: in.ExitCode}
	switch {
	case in.Running:
		s.State = "running"
	case in.Ended == "lifetime":
		s.State = "timed_out"
	case in.ExitCode == nil:
		s.State = "killed"
	default:
		s.State = "exited"
	}
	return s
}

// notFound turns a lookup error into what the model should do.
func notFound(err error) error {
	if errors.Is(err, process.ErrNotFound) {
		return helikon.InvalidArgs(err.Error())
	}
	return err
}

// get returns the process id names in the table of the call's session.
func get(ctx context.Context, src process.Source, id string) (*process.Entry, error) {
	t, err := src.TableFor(ctx)
	if err != nil {
		return nil, err
	}
	e, err := t.Get(id)
	if err != nil {
		return nil, notFound(err)
	}
	return e, nil
}

// NewOutputTool returns BashOutput over tab.
func NewOutputTool[C any](tab process.Source) (*functiontool.Tool[C, OutputArgs, OutputResult], error) {
	if tab == nil {
		return nil, errors.New("bashtool: nil process table")
	}
	return functiontool.New(OutputName,
		"Read the new output of a background command started with Bash run_in_background: what it wrote since the last BashOutput call, with its status. Set wait_ms to wait for output that has not come yet.",
		func(tc *helikon.ToolContext[C], in OutputArgs) (OutputResult, error) {
			var re *regexp.Regexp
			if in.Filter != "" {
				var err error
				if re, err = regexp.Compile(in.Filter); err != nil {
					return OutputResult{}, helikon.InvalidArgs("filter is not a valid regular expression: " + err.Error())
				}
			}
			e, err := get(tc, tab, in.BashID)
			if err != nil {
				return OutputResult{}, notFound(err)
			}
			return readNew(tc, e, in.WaitMS, re)
		}, &functiontool.Options{Effect: helikon.EffectReadOnly})
}

// NewKillTool returns KillShell over tab.
func NewKillTool[C any](tab process.Source) (*functiontool.Tool[C, KillArgs, Status], error) {
	if tab == nil {
		return nil, errors.New("bashtool: nil process table")
	}
	return functiontool.New(KillName,
		"End a background command started with Bash run_in_background, and everything it started.",
		func(tc *helikon.ToolContext[C], in KillArgs) (Status, error) {
			t, err := tab.TableFor(tc)
			if err != nil {
				return Status{}, err
			}
			if _, err := t.Kill(tc, in.ShellID); err != nil {
				return Status{}, fmt.Errorf("%s: %w", in.ShellID, notFound(err))
			}
			e, err := t.Get(in.ShellID)
			if err != nil {
				return Status{}, notFound(err)
			}
			return status(e.Info()), nil
		}, &functiontool.Options{Effect: helikon.EffectSideEffect})
}

// NewListTool returns BashList over tab.
func NewListTool[C any](tab process.Source) (*functiontool.Tool[C, ListArgs, ListResult], error) {
	if tab == nil {
		return nil, errors.New("bashtool: nil process table")
	}
	return functiontool.New(ListName,
		"List the background commands of this session with their shell_id and status.",
		func(tc *helikon.ToolContext[C], _ ListArgs) (ListResult, error) {
			t, err := tab.TableFor(tc)
			if err != nil {
				return ListResult{}, err
			}
			r := ListResult{Shells: []Status{}}
			for _, in := range t.List() {
				r.Shells = append(r.Shells, status(in))
			}
			return r, nil
		}, &functiontool.Options{Effect: helikon.EffectReadOnly})
}
