package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
)

func init() {
	Register(&Command{Name: "exec", Summary: "run one program under an execution backend, stdio passed through", Run: runExec})
}

func runExec(ctx context.Context, env *Env, args []string) int {
	fs := NewFlagSet("exec", "exec [flags] -- PROGRAM [ARG...]\n\nRuns PROGRAM with its arguments (no shell) in the --root directory under the\nchosen backend, with standard input, output and error passed through. With\n--backend docker (or forkd and --session) it runs in the session's workspace,\nmade for the command and removed after it unless --keep-workspace. It\nexits with the program's status: 128+N when a signal N killed it, 124 on\ntimeout, 125 when the backend is unavailable here. The policy files of --root\n(see helikon doctor) give the backend and limits the flags do not; no\npermission rule applies: the command is yours, not an agent's. With -t the\nprogram runs on a new pseudo-terminal (its output then comes through it,\nstandard error included), on every backend that starts processes.", env.Stderr)
	root := fs.String("root", ".", "the working `DIR` (the sandbox root)")
	bflags := AddBackendFlags(fs)
	wflags := AddWorkspaceFlags(fs)
	tty := fs.Bool("t", false, "run the program on a new pseudo-terminal, as the size of this one (or 24x80), this terminal in raw mode meanwhile")
	session := fs.String("session", "", "with a remote --backend (docker, forkd): run in the workspace of session `ID` (attached to when it exists; default: a new one, removed at exit unless --keep-workspace)")
	// exec runs the operator's own command, not an agent's call, so no
	// rule applies to it; the policy files' backend and limits do.
	common := &CommonFlags{fs: fs}
	common.PolicyFileFlags.add(fs)
	argv, done, status := ParseArgs(fs, env, args)
	if done {
		return status
	}
	if len(argv) == 0 || argv[0] == "" {
		return UsageFailf(env, fs, "exec: name the program to run after --, as in: helikon exec --backend host -- ls -la")
	}
	common.Root = *root
	dir, err := common.RootDir()
	if err != nil {
		return Failf(env, ExitUsage, "exec: %v", err)
	}
	if _, err := common.Settings(); err != nil {
		return Failf(env, ExitUsage, "exec: %v", err)
	}
	if *session != "" {
		if err := workspace.ValidSession(*session); err != nil {
			return Failf(env, ExitUsage, "exec: --session: %v", err)
		}
	}
	f := common.WithFileSettings(bflags)
	req := &backend.Request{Argv: argv, Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr}
	var res *backend.Result
	here, agent := workspaceBackend(f.Name, *session != "" || wflags.Keep)
	switch {
	case agent:
		// The Docker client is in the agent binary: the same command line
		// runs there, in this process's place.
		return ExecAgent(env.Stderr, append([]string{"exec"}, args...))
	case here:
		res, err = workspaceExec.run(ctx, env, &WorkspaceRun{Root: dir, Common: common, Backend: f, Workspace: wflags, Session: *session, Request: req, TTY: *tty})
	case *session != "" || wflags.Keep:
		return Failf(env, ExitUsage, "exec: --session and --keep-workspace name a remote workspace (--backend %s); the %s backend runs on this machine", strings.Join(remoteBackends(), ", "), backendName(f.Name))
	default:
		var b backend.Backend
		f.oneCommand = true
		b, err = BuildBackend(ctx, env, dir, f)
		if f.launcher != nil {
			defer f.launcher.Close() // unless the backend took it
		}
		if err != nil {
			status := ExitOther
			if errors.Is(err, backend.ErrUnavailable) {
				status = ExitUsage
			}
			return Failf(env, status, "exec: %v", err)
		}
		if c, ok := b.(io.Closer); ok {
			defer c.Close() // the OS sandbox's session home
		}
		if *tty {
			res, err = RunOnTerminal(ctx, env, b, req, Lifetime(b))
		} else {
			res, err = b.Run(ctx, req)
		}
	}
	if err != nil && res == nil {
		if errors.Is(err, backend.ErrUnavailable) || errors.Is(err, backend.ErrNoProcesses) {
			return Failf(env, ExitUsage, "exec: %v", err)
		}
		return Failf(env, ExitOther, "exec: %v", err)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "helikon: exec: %v\n", err)
	}
	switch {
	case res.TimedOut:
		fmt.Fprintf(env.Stderr, "helikon: exec: %s timed out and was killed\n", argv[0])
		return ExitTimeout
	case res.ExitCode != nil:
		return *res.ExitCode
	case res.Signal > 0:
		return 128 + res.Signal
	}
	return ExitOther
}

// Lifetime is how long helikon exec -t lets its program run on b: b's
// command timeout where it has one, else [backend.DefaultLifetime].
func Lifetime(b backend.Backend) time.Duration {
	if tl, ok := b.(backend.TimeLimited); ok && tl.Timeout() > 0 {
		return tl.Timeout()
	}
	return backend.DefaultLifetime
}
