package agentcli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/workspace"
)

const checkpointHelp = `  /diff [all]    what the last turn changed in the files (all: since the oldest turn kept)
  /undo          take back the last turn's changes to the files, its commands' included
  /checkpoints   the turns whose changes can be taken back
  /rewind N      take back the changes of the last N turns`

// checkpointCommand runs /diff, /undo, /checkpoints or /rewind, and
// reports whether name was one of them.
func (c *conversation) checkpointCommand(ctx context.Context, name, arg string) bool {
	switch name {
	case "/diff", "/undo", "/checkpoints", "/rewind":
	default:
		return false
	}
	if c.cfg.Checkpoints == nil {
		fmt.Fprintf(c.env.Stderr, "helikon: %s needs checkpoints, which this workspace does not take (they are taken on local workspaces, unless --checkpoints=false)\n", name)
		return true
	}
	var err error
	switch name {
	case "/diff":
		n := 1
		if arg == "all" {
			n = 0
		}
		var changes []workspace.Change
		if changes, err = c.r.Diff(ctx, c.id, n); err == nil {
			c.showChanges(c.env.Stdout, changes)
		}
	case "/checkpoints":
		var list []workspace.CheckpointInfo
		if list, err = c.r.Checkpoints(ctx, c.id); err == nil {
			if len(list) == 0 {
				fmt.Fprintln(c.env.Stderr, "helikon: no turn to take back")
			}
			for i, cp := range list {
				label := strings.TrimPrefix(cp.Label, "session "+c.id+": ")
				fmt.Fprintf(c.env.Stderr, "  %d  %s  %s  (%d entries)\n", len(list)-i, cp.Created.Format("15:04:05"), safeText(clip(label, 60)), cp.Entries)
			}
			if len(list) > 0 {
				fmt.Fprintln(c.env.Stderr, "/rewind N takes back the changes of the turns from the one numbered N on")
			}
		}
	case "/undo", "/rewind":
		n := 1
		if name == "/rewind" {
			if n, err = strconv.Atoi(arg); err != nil || n < 1 {
				fmt.Fprintln(c.env.Stderr, "helikon: /rewind N takes a number of turns, 1 or more (/checkpoints lists them)")
				return true
			}
		}
		var cp workspace.CheckpointInfo
		if cp, err = c.r.Rewind(ctx, c.id, n); err == nil {
			label := strings.TrimPrefix(cp.Label, "session "+c.id+": ")
			fmt.Fprintf(c.env.Stderr, "helikon: the files are back to where they were before %q; the conversation keeps its messages\n", safeText(clip(label, 60)))
		}
	}
	if err != nil {
		fmt.Fprintf(c.env.Stderr, "helikon: %s: %s\n", name, safeText(err.Error()))
	}
	return true
}

// showChanges prints changes: one line per path, and the unified diff of
// text files.
func (c *conversation) showChanges(w io.Writer, changes []workspace.Change) {
	if len(changes) == 0 {
		fmt.Fprintln(c.env.Stderr, "helikon: no changes")
		return
	}
	cli.WriteChanges(w, changes, c.color)
}
