package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"

	"golang.org/x/term"

	"github.com/paigasus/helikon/internal/prelaunch"
)

// AgentBinary is the name of the binary of the agent commands, built from
// cmd/helikon/helikon-agent next to the helikon binary.
const AgentBinary = "helikon-agent"

// BuildCommand is how to build both binaries from a clone of helikon, as the
// README says (static: they start faster without the C library); the error
// for a missing agent binary names it.
const BuildCommand = "CGO_ENABLED=0 go build -o bin/ ./cmd/..."

// ErrNoAgent is the error of [FindAgent] when there is no agent binary.
var ErrNoAgent = errors.New("no agent binary")

// IsAgentCommand reports whether args (without the program name) ask for an
// agent command that this binary does not include, directly, as helikon
// help COMMAND or as the completion of its arguments (helikon __complete
// COMMAND …, answered by the agent binary that knows its flags).
func IsAgentCommand(args []string) bool {
	if len(args) == 0 {
		return false
	}
	name := args[0]
	switch {
	case name == "help" && len(args) > 1:
		name = args[1]
	case name == completeCommand && len(args) > 2: // past the command's name
		name = args[1]
	}
	_, here := commands[name]
	return agentCommands[name] != "" && !here
}

// FindAgent returns the path of the agent binary: the file named
// [AgentBinary] in the directory of exe (the running binary, symbolic links
// resolved) if it is an executable file, else the one lookPath finds on
// PATH. It fails with an error wrapping [ErrNoAgent] that says how to build
// it.
func FindAgent(exe string, lookPath func(string) (string, error)) (string, error) {
	beside := filepath.Join(filepath.Dir(exe), AgentBinary)
	if path, err := lookPath(beside); err == nil {
		return path, nil
	}
	if path, err := lookPath(AgentBinary); err == nil {
		return path, nil
	}
	return "", fmt.Errorf("%w: the agent commands are in %s, found neither next to %s nor on PATH; build both binaries with %s in a clone of helikon and run bin/helikon", ErrNoAgent, AgentBinary, exe, BuildCommand)
}

// ExecAgent replaces this process with the agent binary, running it with
// args: the same process, so standard input and output, the terminal,
// signals and the exit status are the agent command's own. It returns only
// on failure, after reporting it on stderr, with the exit status: ExitUsage
// when there is no agent binary.
func ExecAgent(stderr io.Writer, args []string) int {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		fmt.Fprintf(stderr, "helikon: finding the agent binary: %v\n", err)
		return ExitUsage
	}
	path, err := FindAgent(exe, exec.LookPath)
	if err != nil {
		fmt.Fprintf(stderr, "helikon: %s: %v\n", args[0], err)
		return ExitUsage
	}
	prelaunch.DiscardEarly() // the agent binary would inherit it as a child it does not know
	err = replaceProcess(path, args)
	fmt.Fprintf(stderr, "helikon: %s: executing %s: %v\n", args[0], path, err)
	return ExitOther
}

// RunProcess runs the CLI as this process with args (without the program
// name) and returns the exit status: standard input and output, the
// environment, SIGINT and SIGTERM cancelling the command's context. The
// helikon binary first passes agent commands on with [ExecAgent], before any
// signal handler is installed, so that signals the caller ignores stay
// ignored in the agent binary.
func RunProcess(args []string) int {
	// A launcher started during initialisation (cmd/helikon's earlylaunch)
	// that no backend took is killed, not left to exit with this process.
	defer prelaunch.DiscardEarly()
	if IsAgentCommand(args) {
		return ExecAgent(os.Stderr, args)
	}
	ctx := context.Background()
	if !usageOnly(args) {
		// Printing the usage runs nothing a signal should stop, and
		// installing the handlers starts OS threads (0.2 ms).
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
	}
	env := &Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		IsTerminal: func() bool { return term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stderr.Fd())) },
	}
	return Main(ctx, env, args)
}
