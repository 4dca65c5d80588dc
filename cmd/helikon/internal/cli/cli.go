// Package cli implements the helikon command-line tool. cmd/helikon is a thin
// main around [Main].
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
	"os"
	"sort"
	"strings"
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
}

// getenv reads an environment variable through e.Getenv.
func (e *Env) getenv(k string) string {
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

// Register adds a command. It panics on a duplicate name (a programming
// error caught by any test that runs the CLI).
func Register(c *Command) {
	if _, dup := commands[c.Name]; dup {
		panic("cli: duplicate command " + c.Name)
	}
	commands[c.Name] = c
}

// Main runs the helikon CLI with args (without the program name) and returns
// the exit status.
func Main(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" && len(args) == 1 {
		usage(env.Stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	name := args[0]
	if name == "help" {
		name, args = args[1], []string{args[1], "--help"}
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "helikon: unknown command %q\n\n", name)
		usage(env.Stderr)
		return ExitUsage
	}
	return c.Run(ctx, env, args[1:])
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "helikon: tools AI agents can be trusted with.")
	fmt.Fprintln(w, "\nUsage: helikon COMMAND [flags] [args]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintln(w, "\nRun 'helikon COMMAND --help' for a command's flags.")
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
	var msg strings.Builder
	fs.SetOutput(&msg)
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(env.Stdout)
				fs.Usage()
				return nil, true, ExitOK
			}
			io.WriteString(env.Stderr, msg.String())
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
