package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
)

func init() {
	Register(&Command{Name: "diff", Summary: "show the changes of the pending review of --root (helikon run --review)", Run: runReviewDiff})
	Register(&Command{Name: "apply", Summary: "apply the pending review of --root to it: all changes, or the PATHs given", Run: runReviewApply})
	Register(&Command{Name: "discard", Summary: "throw away the pending review of --root", Run: runReviewDiscard})
}

const reviewHelp = `A review is what helikon run --review leaves pending: the agent worked in a
copy of --root, kept under $XDG_STATE_HOME/helikon/reviews (one per project
directory, found by its path), and nothing reached --root yet.`

// reviewFlags are the flags of diff, apply and discard.
type reviewFlags struct {
	root   string
	asJSON bool
}

func parseReviewFlags(env *Env, name, synopsis string, args []string) (f *reviewFlags, pos []string, done bool, status int) {
	fs := NewFlagSet(name, synopsis+"\n\n"+reviewHelp, env.Stderr)
	f = &reviewFlags{}
	fs.StringVar(&f.root, "root", ".", "the project `DIR` whose review it is")
	fs.BoolVar(&f.asJSON, "json", false, "print the changes as JSON")
	pos, done, status = ParseArgs(fs, env, args)
	return f, pos, done, status
}

// findReview returns the pending review of --root, or the exit status of
// its failure, reported.
func findReview(env *Env, cmd string, f *reviewFlags) (*local.Review, int) {
	r, err := local.FindReview(f.root, nil)
	if errors.Is(err, local.ErrNoReview) {
		return nil, Failf(env, ExitOther, "%s: %v", cmd, err)
	}
	if err != nil {
		return nil, Failf(env, ExitOther, "%s: %v", cmd, err)
	}
	return r, ExitOK
}

func runReviewDiff(ctx context.Context, env *Env, args []string) int {
	f, pos, done, status := parseReviewFlags(env, "diff", "diff [--root DIR] [--json]\n\nPrints what the pending review of --root changed: one line per path, and the\nunified diff of text files (JSON: a list of changes).", args)
	if done {
		return status
	}
	if len(pos) > 0 {
		return Failf(env, ExitInvalidArgs, "diff: unexpected argument %q", pos[0])
	}
	r, status := findReview(env, "diff", f)
	if status != ExitOK {
		return status
	}
	defer r.Close()
	changes, err := r.Diff(ctx)
	if err != nil {
		return Failf(env, ExitOther, "diff: %v", err)
	}
	return printChanges(env, f, changes)
}

func printChanges(env *Env, f *reviewFlags, changes []workspace.Change) int {
	if f.asJSON {
		if changes == nil {
			changes = []workspace.Change{}
		}
		out, err := json.MarshalIndent(changes, "", "  ")
		if err != nil {
			return Failf(env, ExitOther, "%v", err)
		}
		fmt.Fprintln(env.Stdout, string(out))
		return ExitOK
	}
	if len(changes) == 0 {
		fmt.Fprintln(env.Stderr, "helikon: no changes")
	}
	WriteChanges(env.Stdout, changes, env.Var("NO_COLOR") == "" && env.IsTerminal != nil && env.IsTerminal())
	return ExitOK
}

func runReviewApply(ctx context.Context, env *Env, args []string) int {
	f, pos, done, status := parseReviewFlags(env, "apply", "apply [--root DIR] [--json] [PATH...]\n\nCopies the changes of the pending review into --root: all of them, or those of\nthe PATHs given (relative to --root) and below them. A path changed in --root\nsince the review began is a conflict: nothing is applied, and the paths are\nnamed. Each file is replaced atomically; an apply interrupted by a crash is\nfinished by the next one. Once every change is applied the review is removed.", args)
	if done {
		return status
	}
	r, status := findReview(env, "apply", f)
	if status != ExitOK {
		return status
	}
	defer r.Close()
	applied, err := r.Apply(ctx, pos...)
	if errors.Is(err, local.ErrReviewConflict) {
		return Failf(env, ExitOther, "apply: %v; look at those paths in %s, then apply the others by name or discard the review", err, r.Project())
	}
	if err != nil {
		return Failf(env, ExitOther, "apply: %v", err)
	}
	if !f.asJSON {
		for _, c := range applied {
			fmt.Fprintf(env.Stdout, "%-8s %s\n", c.Kind, QuotePath(c.Path))
		}
		fmt.Fprintf(env.Stderr, "helikon: applied %d changes to %s\n", len(applied), r.Project())
		return ExitOK
	}
	return printChanges(env, f, applied)
}

func runReviewDiscard(ctx context.Context, env *Env, args []string) int {
	f, pos, done, status := parseReviewFlags(env, "discard", "discard [--root DIR]\n\nThrows away the pending review of --root: its copy and record are removed;\n--root keeps what an earlier apply wrote.", args)
	if done {
		return status
	}
	if len(pos) > 0 {
		return Failf(env, ExitInvalidArgs, "discard: unexpected argument %q", pos[0])
	}
	r, status := findReview(env, "discard", f)
	if status != ExitOK {
		return status
	}
	if err := r.Discard(ctx); err != nil {
		return Failf(env, ExitOther, "discard: %v", err)
	}
	fmt.Fprintf(env.Stderr, "helikon: discarded the review of %s\n", r.Project())
	return ExitOK
}

// QuotePath returns p as it can be shown on one line of a terminal: as it
// is, or Go-quoted when it holds a newline, a control character or bytes
// that are not UTF-8.
func QuotePath(p string) string {
	if strings.ContainsFunc(p, func(r rune) bool { return r == '\n' || unsafeRune(r) }) || !strconv.CanBackquote(p) {
		return strconv.Quote(p)
	}
	return p
}

// WriteChanges prints changes to w: one line per path, and the unified
// diff of text files, coloured when color is set. Every byte that comes
// from the files is made safe for a terminal ([SafeText]).
func WriteChanges(w io.Writer, changes []workspace.Change, color bool) {
	paint := func(code, s string) string {
		if !color {
			return s
		}
		return "\033[" + code + "m" + s + "\033[0m"
	}
	for _, ch := range changes {
		line := fmt.Sprintf("%-8s %s", ch.Kind, QuotePath(ch.Path))
		switch {
		case ch.Kind == workspace.ChangeMode:
			line += fmt.Sprintf(" (%v → %v)", ch.OldMode, ch.NewMode)
		case ch.NewTarget != "" || ch.OldTarget != "":
			line += fmt.Sprintf(" (link %q → %q)", ch.OldTarget, ch.NewTarget)
		case ch.Binary:
			line += fmt.Sprintf(" (binary, %d → %d bytes)", ch.OldSize, ch.NewSize)
		}
		fmt.Fprintln(w, paint("1", line))
		if ch.Diff != "" {
			for _, l := range strings.SplitAfter(strings.TrimSuffix(ch.Diff, "\n"), "\n") {
				l = SafeText(l)
				switch {
				case strings.HasPrefix(l, "+"):
					l = paint("32", l)
				case strings.HasPrefix(l, "-"):
					l = paint("31", l)
				}
				fmt.Fprint(w, l)
			}
			fmt.Fprintln(w)
		}
	}
}

// SafeText returns s made safe to show on a terminal: control characters
// other than newline and tab (ESC above all, which starts the sequences that
// move the cursor, clear lines, recolour or conceal text) and bidirectional
// overrides are shown escaped as Go quotes them. What a model or a tool sends
// could otherwise rewrite a prompt the user is reading. Bytes that are not
// valid UTF-8 are kept (a multi-byte character may arrive split across two
// text deltas).
func SafeText(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if unsafeRune(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteString(s[:n])
		}
		s = s[n:]
	}
	return b.String()
}

func unsafeRune(r rune) bool {
	return r != '\n' && r != '\t' && r != utf8.RuneError && (unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r))
}
