package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/paigasus/helikon"
)

// completeCommand is the hidden command the completion scripts run: helikon
// __complete WORD… prints, one per line, the candidates for the last WORD
// (the one being typed, "" after a space). Asking the binary itself, as
// cobra-based CLIs (kubectl, gh) do, keeps the scripts a few lines long and
// always in step with the flags of the binary that is installed; cobra is
// not used because helikon's commands are plain flag.FlagSets.
const completeCommand = "__complete"

func init() {
	Register(&Command{Name: "completion", Summary: "print the shell completion script for bash, zsh or fish", Run: runCompletion})
	Register(&Command{Name: completeCommand, Run: runComplete})
	RegisterCompletion("backend", backendCompletions)
	RegisterCompletion("mode", modeNames)
	RegisterArgCompletion("completion", func() []string { return slices.Sorted(maps.Keys(completionScripts)) })
}

var (
	flagCompletions = map[string]func() []string{}
	argCompletions  = map[string]func() []string{}
)

// RegisterCompletion makes the completion scripts offer values() for the
// flag --name of every command (comma-separated lists are completed
// element by element). It is meant for init functions; a later
// registration for the same name replaces the earlier one.
func RegisterCompletion(name string, values func() []string) { flagCompletions[name] = values }

// RegisterArgCompletion makes the completion scripts offer values() for
// the positional arguments of command (such as the tool names of helikon
// tool).
func RegisterArgCompletion(command string, values func() []string) { argCompletions[command] = values }

// backendCompletions are the names --backend accepts in this binary.
func backendCompletions() []string {
	names := append(BackendNames(), slices.Collect(maps.Keys(backendAliases))...)
	if workspaceExec.engines != nil {
		names = append(names, workspaceExec.engines()...)
	} else {
		names = append(names, AgentBackends...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// modeNames are the permission modes as --mode spells them.
func modeNames() []string {
	var names []string
	for m := helikon.ModeDefault; !strings.HasPrefix(m.String(), "PermissionMode("); m++ {
		names = append(names, m.String())
	}
	return names
}

// commandNames are the visible commands of helikon, with the agent ones.
func commandNames() []string {
	names := slices.Collect(maps.Keys(agentCommands))
	for n, c := range commands {
		if c.Summary != "" {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

const completionUsage = "completion bash|zsh|fish\n\nPrints the script that makes the shell complete helikon's commands, flags,\ntool names, backends and permission modes (for helikon, helikon-agent and\nhelikon-k8s). The script asks the installed binary, so it stays in step\nwith it. Load it with:\n\n  bash: source <(helikon completion bash)    (or save it in /etc/bash_completion.d/helikon)\n  zsh:  source <(helikon completion zsh)     (after compinit)\n  fish: helikon completion fish | source     (or save it in ~/.config/fish/completions/helikon.fish)"

func runCompletion(_ context.Context, env *Env, args []string) int {
	fs := NewFlagSet("completion", completionUsage, env.Stderr)
	pos, done, status := ParseArgs(fs, env, args)
	if done {
		return status
	}
	if len(pos) != 1 || completionScripts[pos[0]] == "" {
		return UsageFailf(env, fs, "completion: name one shell: bash, zsh or fish")
	}
	io.WriteString(env.Stdout, completionScripts[pos[0]])
	return ExitOK
}

// runComplete is helikon __complete WORD…: it never runs a command, and
// prints nothing (leaving the shell to complete file names) when it has
// nothing to offer.
func runComplete(ctx context.Context, env *Env, words []string) int {
	for _, c := range complete(ctx, env, words) {
		fmt.Fprintln(env.Stdout, c)
	}
	return ExitOK
}

// complete returns the candidates for the last of words, the command line
// after the program name.
func complete(ctx context.Context, env *Env, words []string) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, before := words[len(words)-1], words[:len(words)-1]
	if len(before) == 0 {
		return withPrefix(append(commandNames(), "--help", "--version"), cur)
	}
	name := before[0]
	if name == "help" && len(before) == 1 {
		return withPrefix(commandNames(), cur)
	}
	c, ok := commands[name]
	if !ok || c.Summary == "" || slices.Contains(before[1:], "--") {
		return nil
	}
	flags := commandFlags(ctx, c)
	// --flag=VALUE
	if strings.HasPrefix(cur, "-") {
		if flagName, val, ok := strings.Cut(strings.TrimLeft(cur, "-"), "="); ok {
			dashes := cur[:len(cur)-len(strings.TrimLeft(cur, "-"))]
			var out []string
			for _, v := range flagValues(flagName, val) {
				out = append(out, dashes+flagName+"="+v)
			}
			return out
		}
		var names []string
		for _, f := range flags {
			names = append(names, "--"+f.Name)
		}
		return withPrefix(append(names, "--help"), cur)
	}
	// --flag VALUE
	if prev := before[len(before)-1]; len(before) > 1 && strings.HasPrefix(prev, "-") && !strings.Contains(prev, "=") {
		f := flags[strings.TrimLeft(prev, "-")]
		if f != nil && !isBoolFlag(f) {
			return flagValues(f.Name, cur)
		}
	}
	if values := argCompletions[name]; values != nil {
		return withPrefix(values(), cur)
	}
	return nil
}

// flagValues returns the completions of the flag name's value typed so far,
// val: a comma-separated list is completed in its last element.
func flagValues(name, val string) []string {
	values := flagCompletions[name]
	if values == nil {
		return nil
	}
	done, last := "", val
	if i := strings.LastIndexByte(val, ','); i >= 0 {
		done, last = val[:i+1], val[i+1:]
	}
	var out []string
	for _, v := range withPrefix(values(), last) {
		out = append(out, done+v)
	}
	return out
}

// withPrefix returns those of candidates that start with prefix.
func withPrefix(candidates []string, prefix string) []string {
	var out []string
	for _, c := range candidates {
		if strings.HasPrefix(c, prefix) {
			out = append(out, c)
		}
	}
	return out
}

// commandFlags returns the flags of command c, learnt by running it with
// --help and its output discarded: every command defines its flags on a
// flag set it parses with [ParseArgs], which records it, and returns at
// --help before doing anything.
func commandFlags(ctx context.Context, c *Command) map[string]*flag.Flag {
	var sets []*flag.FlagSet
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }, flagSets: &sets}
	c.Run(ctx, env, []string{"--help"})
	flags := map[string]*flag.Flag{}
	for _, fs := range sets {
		fs.VisitAll(func(f *flag.Flag) { flags[f.Name] = f })
	}
	return flags
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
