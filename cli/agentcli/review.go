package agentcli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
)

const reviewHelp = `  /review        what the agent changed in its copy of the project, not yet applied
  /apply [PATH…] apply those changes to the project (all, or the PATHs); all ends the conversation
  /discard       throw them away and end the conversation`

// startReview begins (or continues) the review of the run's root: the
// tools are then built on the review's copy. It refuses a backend whose
// commands could write the project beneath the copy.
func (a *agentRun) startReview(ctx context.Context) (*local.Review, int) {
	f := a.backendFlags
	if f != nil && f.Name != "" && f.Name != cli.DefaultBackend && f.Name != local.EngineName {
		return nil, cli.Failf(a.env, cli.ExitUsage, "run: --review needs the OS sandbox (--backend os): with --backend %s the agent's changes would not be held in a copy of --root", f.Name)
	}
	r, err := local.StartReview(ctx, a.root, nil)
	if err != nil {
		return nil, cli.Failf(a.env, cli.ExitOther, "run: --review: %v", err)
	}
	fmt.Fprintf(a.env.Stderr, "helikon: review mode: the agent works in a copy of %s (%s); nothing reaches %s until you apply it\n", a.root, r.Tree(), a.root)
	return r, cli.ExitOK
}

// checkReviewBackend fails closed when the workspace's commands are not
// confined to its root: they could write the project beneath the copy.
func checkReviewBackend(env *cli.Env, ws workspace.Workspace) int {
	if g := ws.Guarantees(); g.Filesystem == backend.IsolationNone {
		return cli.Failf(env, cli.ExitUsage, "run: --review needs commands confined to the copy, and the backend %q confines nothing; use the OS sandbox", g.Label)
	}
	return cli.ExitOK
}

// endReview runs when a single-prompt run in review mode is over: it shows
// the changes, and on a terminal asks whether to apply them; otherwise it
// leaves the review pending and says how to apply or discard it.
func (a *agentRun) endReview(ctx context.Context, r *local.Review) int {
	changes, err := r.Diff(ctx)
	if err != nil {
		return cli.Failf(a.env, cli.ExitOther, "run: review: %v", err)
	}
	if len(changes) == 0 {
		fmt.Fprintln(a.env.Stderr, "helikon: the agent changed nothing; the review is discarded")
		if err := r.Discard(ctx); err != nil {
			return cli.Failf(a.env, cli.ExitOther, "run: review: %v", err)
		}
		return cli.ExitOK
	}
	color := a.env.Var("NO_COLOR") == "" && a.term
	cli.WriteChanges(a.env.Stderr, changes, color)
	later := fmt.Sprintf("helikon: the changes are kept for review: helikon diff, helikon apply [PATH...] or helikon discard, with --root %s", r.Project())
	if !a.term || a.json {
		fmt.Fprintln(a.env.Stderr, later)
		return cli.ExitOK
	}
	fmt.Fprintf(a.env.Stderr, "apply these %d changes to %s? [y/N] ", len(changes), r.Project())
	line, _ := bufio.NewReader(a.env.Stdin).ReadString('\n')
	if ans := strings.ToLower(strings.TrimSpace(line)); ans != "y" && ans != "yes" {
		fmt.Fprintln(a.env.Stderr, later)
		return cli.ExitOK
	}
	return applyReview(ctx, a.env, r, nil)
}

// applyReview applies the review's changes (all, or paths) and reports.
func applyReview(ctx context.Context, env *cli.Env, r *local.Review, paths []string) int {
	applied, err := r.Apply(ctx, paths...)
	if errors.Is(err, local.ErrReviewConflict) {
		return cli.Failf(env, cli.ExitOther, "apply: %v; look at those paths in %s, then apply the others by name (helikon apply PATH...) or discard the review", err, r.Project())
	}
	if err != nil {
		return cli.Failf(env, cli.ExitOther, "apply: %v", err)
	}
	fmt.Fprintf(env.Stderr, "helikon: applied %d changes to %s\n", len(applied), r.Project())
	return cli.ExitOK
}

// reviewCommand runs /review, /apply or /discard in a conversation, and
// reports whether name was one of them; end is set when the conversation
// is to end (the review applied whole, or discarded: the agent's copy is
// gone).
func (c *conversation) reviewCommand(ctx context.Context, name, arg string) (handled, end bool) {
	switch name {
	case "/review", "/apply", "/discard":
	default:
		return false, false
	}
	r := c.review
	if r == nil {
		fmt.Fprintf(c.env.Stderr, "helikon: %s is for runs in review mode (helikon run --review)\n", name)
		return true, false
	}
	switch name {
	case "/review":
		changes, err := r.Diff(ctx)
		if err != nil {
			fmt.Fprintf(c.env.Stderr, "helikon: /review: %s\n", safeText(err.Error()))
			return true, false
		}
		c.showChanges(c.env.Stdout, changes)
	case "/apply":
		paths := strings.Fields(arg)
		if applyReview(ctx, c.env, r, paths) != cli.ExitOK {
			return true, false
		}
		if _, err := local.FindReview(r.Project(), nil); errors.Is(err, local.ErrNoReview) {
			fmt.Fprintln(c.env.Stderr, "helikon: every change is applied; the review is over")
			return true, true
		}
	case "/discard":
		if err := r.Discard(ctx); err != nil {
			fmt.Fprintf(c.env.Stderr, "helikon: /discard: %s\n", safeText(err.Error()))
			return true, false
		}
		fmt.Fprintf(c.env.Stderr, "helikon: discarded the review; nothing more of it reaches %s\n", r.Project())
		return true, true
	}
	return true, false
}
