// Package cli implements the helikon command-line tool's frame and the
// commands that need no model: exec, guarantees, doctor, proxy, forkd,
// diff, apply and discard (of a pending review) and help. It links the
// sandbox backends and the egress proxy but none of the model SDKs,
// OpenTelemetry, SQLite, readability or the MCP SDK, so that the helikon
// binary (cmd/helikon, a thin main around [RunProcess]) starts about as
// fast as any small Go program: it is what every sandboxed command and the
// OS sandbox's unprivileged launcher pay for.
//
// The agent commands (run, mcp, tool, fetch, search, policy) live in package
// agentcli and in a second binary, helikon-agent (cmd/helikon/helikon-agent),
// which links both packages. The helikon binary lists them in its usage and
// replaces itself with helikon-agent (execve: same process, stdio, terminal,
// signals and exit status) when one is asked for; see [ExecAgent]. An agent
// command registers with [RegisterAgent] and must be listed in agentCommands
// below; TestFrontLinksNoHeavyPackage keeps the heavy packages out of this one.
//
// Conventions every command follows:
//   - --help on every command prints its usage on stdout and exits 0;
//   - machine-readable output (JSON) goes to stdout, diagnostics to stderr;
//   - exit status 0 success, 1 other failure, 2 invalid arguments, 3 denied,
//     124 timeout (exec), 125 usage error or a requested protection that is
//     unavailable on this machine (fail closed).
//
// Commands live one per file and register themselves with [Register] from an
// init function. Built-in tools register a [ToolProvider]; execution backends
// register a [BackendFactory].
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/paigasus/helikon"
)

// Exit statuses.
const (
	ExitOK          = 0
	ExitOther       = 1
	ExitInvalidArgs = 2
	ExitDenied      = 3
	ExitTimeout     = 124
	ExitUsage       = 125 // also: a requested protection is unavailable
)

// Env is the process environment a command runs in; tests substitute it.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer // JSON results only
	Stderr io.Writer // diagnostics, prompts and usage errors
	// Getenv reads environment variables (os.Getenv when nil).
	Getenv func(string) string
	// IsTerminal reports whether stdin and stderr are a terminal (for
	// interactive approvals and spinners); nil means no.
	IsTerminal func() bool
	// flagSets, when set, collects the flag sets [ParseArgs] parses: the
	// completion learns a command's flags this way.
	flagSets *[]*flag.FlagSet
}

// Var reads the environment variable k through e.Getenv.
func (e *Env) Var(k string) string {
	if e.Getenv == nil {
		return os.Getenv(k)
	}
	return e.Getenv(k)
}

// Command is one helikon sub-command.
type Command struct {
	Name    string // the word after helikon, such as "exec"
	Summary string // one line, shown by helikon --help
	// Run executes the command with the arguments after its name and
	// returns the exit status.
	Run func(ctx context.Context, env *Env, args []string) int
}

var commands = map[string]*Command{}

// agentCommands are the commands of the agent binary (package agentcli),
// with their summaries: the helikon binary lists them and passes them on to
// helikon-agent, so a new agent command is added here and registered with
// [RegisterAgent].
var agentCommands = map[string]string{
	"fetch":      "fetch a URL through the SSRF guard and print it as WebFetch JSON or Markdown",
	"mcp":        "serve the built-in tools to MCP clients (stdio or streamable HTTP)",
	"policy":     "check what the permission policy decides for a tool call, without running it",
	"run":        "run a coding agent on PROMPT over the sandboxed toolset in --root",
	"search":     "search the web with Brave or Tavily and print WebSearch JSON",
	"tool":       "invoke one built-in tool once and print its JSON output",
	"workspaces": "list the sessions' remote workspaces (containers, microVMs), or reap those left behind",
}

// Register adds a command of the helikon binary. It panics on a duplicate
// name or the name of an agent command (programming errors caught by any
// test that runs the CLI).
func Register(c *Command) {
	if _, agent := agentCommands[c.Name]; agent {
		panic("cli: " + c.Name + " is an agent command: register it with RegisterAgent")
	}
	register(c)
}

// RegisterAgent adds a command of the agent binary, whose summary is the one
// agentCommands lists. It panics when name is not listed there (the helikon
// binary would neither show nor pass it on) or is already registered.
func RegisterAgent(name string, run func(ctx context.Context, env *Env, args []string) int) {
	summary, ok := agentCommands[name]
	if !ok {
		panic("cli: agent command " + name + " is not listed in agentCommands")
	}
	register(&Command{Name: name, Summary: summary, Run: run})
}

func register(c *Command) {
	if _, dup := commands[c.Name]; dup {
		panic("cli: duplicate command " + c.Name)
	}
	commands[c.Name] = c
}

// Main runs the helikon CLI with args (without the program name) and returns
// the exit status.
func Main(ctx context.Context, env *Env, args []string) int {
	if usageOnly(args) {
		usage(env.Stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	name := args[0]
	if name == "--version" {
		name = "version"
	}
	if name == "help" {
		name, args = args[1], []string{args[1], "--help"}
	}
	c, ok := commands[name]
	if !ok && agentCommands[name] != "" {
		return Failf(env, ExitUsage, "%s is a command of %s, which this program does not include", name, AgentBinary)
	}
	if !ok {
		fmt.Fprintf(env.Stderr, "helikon: unknown command %q\n\n", name)
		usage(env.Stderr)
		return ExitUsage
	}
	return c.Run(ctx, env, args[1:])
}

// usageOnly reports whether args ask for the usage and nothing else.
func usageOnly(args []string) bool {
	return len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1
}

func usage(out io.Writer) {
	var w strings.Builder // one write instead of one per line
	fmt.Fprintln(&w, "helikon: tools AI agents can be trusted with.")
	fmt.Fprintln(&w, "\nUsage: helikon COMMAND [flags] [args]\n\nCommands:")
	summaries := maps.Clone(agentCommands)
	for n, c := range commands {
		if c.Summary != "" { // hidden: __complete
			summaries[n] = c.Summary
		}
	}
	for _, n := range slices.Sorted(maps.Keys(summaries)) {
		fmt.Fprintf(&w, "  %-12s %s\n", n, summaries[n])
	}
	fmt.Fprintln(&w, "\nRun 'helikon COMMAND --help' for a command's flags.")
	io.WriteString(out, w.String())
}

// NewFlagSet returns a flag set for a command whose usage prints synopsis and
// the flags to out.
func NewFlagSet(name, synopsis string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: helikon %s\n", synopsis)
		var any bool
		fs.VisitAll(func(*flag.Flag) { any = true })
		if any {
			fmt.Fprintln(w, "\nFlags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// ParseArgs parses flags that may appear anywhere among the positional
// arguments (helikon tool Read '{…}' --root dir), stopping at "--", after
// which everything is positional. It returns the positional arguments, and
// done=true with the exit status when parsing ended the command (--help or
// a usage error, already reported).
func ParseArgs(fs *flag.FlagSet, env *Env, args []string) (pos []string, done bool, status int) {
	// The flag package prints the usage itself on -help and on errors; keep
	// what it prints, so that help goes to stdout once and errors to stderr.
	if env.flagSets != nil {
		*env.flagSets = append(*env.flagSets, fs)
	}
	var msg strings.Builder
	fs.SetOutput(&msg)
	// A command that finds its positional arguments wrong calls fs.Usage
	// afterwards: that usage goes to stderr, not to the buffer.
	defer fs.SetOutput(env.Stderr)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(env.Stdout)
				fs.Usage()
				return nil, true, ExitOK
			}
			io.WriteString(env.Stderr, msg.String())
			// The usage can run to many lines: say again, last, what was
			// wrong, with the flag the user most likely meant.
			if hint := flagHint(fs, err); hint != "" {
				io.WriteString(env.Stderr, hint)
			}
			return nil, true, ExitUsage
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, false, 0
		}
		// fs.Parse stops at the first non-flag or after "--"; tell them apart.
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), false, 0
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// UsageFailf reports a usage error found after the flags were parsed (a
// missing or extra argument): the message, then the command's synopsis
// and where its flags are listed, on stderr; it returns [ExitUsage].
func UsageFailf(env *Env, fs *flag.FlagSet, format string, args ...any) int {
	Failf(env, ExitUsage, format, args...)
	io.WriteString(env.Stderr, Synopsis(fs))
	return ExitUsage
}

// Synopsis returns the first line of fs's usage ("Usage: helikon exec …")
// and a line saying where its flags are listed.
func Synopsis(fs *flag.FlagSet) string {
	var b strings.Builder
	out := fs.Output()
	fs.SetOutput(&b)
	fs.Usage()
	fs.SetOutput(out)
	first, _, _ := strings.Cut(b.String(), "\n")
	return fmt.Sprintf("%s\n(helikon %s --help lists the flags)\n", first, fs.Name())
}

// flagHint returns, for an error of fs.Parse naming a flag fs does not
// define, a last line that repeats it with the nearest defined flag: the
// usage printed before it can be long enough to hide the error.
func flagHint(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := helikon.SuggestTool(name, names); s != "" {
		return fmt.Sprintf("%s: unknown flag --%s; did you mean --%s?\n", fs.Name(), name, s)
	}
	return fmt.Sprintf("%s: unknown flag --%s (helikon %s --help lists them)\n", fs.Name(), name, fs.Name())
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }

func (m *multiFlag) Set(v string) error {
	*m = append(*m, v)
	return nil
}

// Multi defines a repeatable string flag on fs and returns its values.
func Multi(fs *flag.FlagSet, name, usage string) *[]string {
	var m multiFlag
	fs.Var(&m, name, usage)
	return (*[]string)(&m)
}

// Failf reports a usage-level failure on stderr and returns status.
func Failf(env *Env, status int, format string, args ...any) int {
	fmt.Fprintf(env.Stderr, "helikon: "+format+"\n", args...)
	return status
}
