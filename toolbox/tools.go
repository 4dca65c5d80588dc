package toolbox

import (
	"errors"
	"fmt"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/tool/filetool"
	"github.com/paigasus/helikon/tool/webfetch"
	"github.com/paigasus/helikon/tool/websearch"
	"github.com/paigasus/helikon/workspace"
)

// Names are the built-in tools, sorted: the tools [NewTool] builds, and the
// ones a rule may name besides the caller's own ([Options].OtherTools).
var Names = []string{bashtool.Name, bashtool.InputName, bashtool.ListName, bashtool.OutputName, "Edit", bashtool.KillName, "Read", webfetch.Name, websearch.Name, "Write"}

// ProcessTools are the tools of background commands, which [New] adds to
// the default tools when [Options].Processes is set: reading a command's
// new output, writing to its input, ending it and listing them.
var ProcessTools = []string{bashtool.OutputName, bashtool.InputName, bashtool.KillName, bashtool.ListName}

// ErrNoProcessTable is returned when a tool of background commands is asked
// for without a [ToolOptions].ProcessTable.
var ErrNoProcessTable = errors.New("the tools of background commands need a process table: set Options.Processes (or ToolOptions.ProcessTable)")

// defaultTools are the tools [New] builds when [Options].Tools is nil:
// every built-in one but WebSearch, which needs a search service
// ([ToolOptions].Searcher).
var defaultTools = []string{"Read", "Write", "Edit", bashtool.Name, webfetch.Name}

// ErrNoSearcher is returned when WebSearch is asked for without a
// [ToolOptions].Searcher.
var ErrNoSearcher = errors.New("WebSearch needs a search service: set ToolOptions.Searcher (websearch.NewBrave or websearch.NewTavily)")

// ToolOptions configure the built-in tools. The zero value gives each its
// defaults.
type ToolOptions struct {
	// Bash configures Bash (allowed and denied programs, output limits).
	Bash *bashtool.Options
	// MaxWriteBytes is the largest content Write writes and the largest file
	// Edit changes; zero means [filetool.DefaultMaxWriteBytes].
	MaxWriteBytes int64
	// WebFetch configures WebFetch (host lists, private addresses, limits).
	WebFetch *webfetch.Options
	// Searcher is the search service WebSearch calls; WebSearch is built
	// only with one.
	Searcher websearch.Searcher
	// WebSearch configures WebSearch (domains, result count).
	WebSearch *websearch.Options
	// ProcessTable, when set, is where Bash starts background commands
	// (run_in_background), and the table BashOutput, BashInput, KillShell
	// and BashList act on ([ProcessTools]); nil refuses run_in_background
	// and those tools. [New] sets it from [Options].Processes.
	ProcessTable process.Source
}

// NewTool builds the built-in tool called name (one of [Names]) on ws: the
// file tools read and write ws's files, Bash runs commands in ws (its
// backend), WebFetch and WebSearch do not touch it. o may be nil. It is
// what [New] builds its toolset with, for callers that assemble their own.
func NewTool[A any](ws workspace.Workspace, name string, o *ToolOptions) (helikon.Tool[A], error) {
	if o == nil {
		o = &ToolOptions{}
	}
	switch name {
	case "Read":
		return filetool.NewRead[A](ws, nil), nil
	case "Write":
		return filetool.NewWrite[A](ws, &filetool.WriteOptions{MaxBytes: o.MaxWriteBytes}), nil
	case "Edit":
		return filetool.NewEdit[A](ws, &filetool.EditOptions{MaxBytes: o.MaxWriteBytes}), nil
	case bashtool.Name:
		return bashtool.New[A](ws, bashOptions(o))
	case bashtool.OutputName, bashtool.InputName, bashtool.KillName, bashtool.ListName:
		return processTool[A](ws, name, o)
	case webfetch.Name:
		return webfetch.New[A](o.WebFetch)
	case websearch.Name:
		if o.Searcher == nil {
			return nil, ErrNoSearcher
		}
		return websearch.New[A](o.Searcher, o.WebSearch)
	}
	return nil, fmt.Errorf("unknown built-in tool %q (built-in: %v)", name, Names)
}

// bashOptions are Bash's options with the process table.
func bashOptions(o *ToolOptions) *bashtool.Options {
	var bo bashtool.Options
	if o.Bash != nil {
		bo = *o.Bash
	}
	if bo.Processes == nil {
		bo.Processes = o.ProcessTable
	}
	return &bo
}

// processTool builds one of [ProcessTools]. BashInput gets a Bash tool of
// its own with Bash's options, whose lists and root it judges input with.
func processTool[A any](ws workspace.Workspace, name string, o *ToolOptions) (helikon.Tool[A], error) {
	bo := bashOptions(o)
	if bo.Processes == nil {
		return nil, ErrNoProcessTable
	}
	switch name {
	case bashtool.OutputName:
		return bashtool.NewOutputTool[A](bo.Processes)
	case bashtool.KillName:
		return bashtool.NewKillTool[A](bo.Processes)
	case bashtool.ListName:
		return bashtool.NewListTool[A](bo.Processes)
	}
	bash, err := bashtool.New[A](ws, bo)
	if err != nil {
		return nil, err
	}
	return bashtool.NewInputTool(bash)
}
