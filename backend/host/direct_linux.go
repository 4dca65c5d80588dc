package host

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/proc"
)

// The direct path: a literal command (see proc.Literal: one simple command
// made only of literal words naming a program, such as ls -la, git status,
// go test ./...) is executed without bash, exactly as `bash -c` would
// execute it, which saves bash's start-up (about half a millisecond, a third
// of a short command's round trip). Exactly means the program gets what it
// would get from bash: the same file found the same way in the command's
// PATH, the same argument vector (argv[0] as written), the same environment
// in the same order (with the PWD, SHLVL and _ that bash exports), the same
// working directory, standard streams, session, signal dispositions and
// resource limits (set with prlimit while the program is stopped at its
// exec, before its first instruction; see proc.Spec.Limits), and it is
// tracked and killed the same way. Whenever one of these cannot be
// established, the command runs through bash as before (see proc.Literal
// for which commands qualify); also with an address-space limit (exec
// itself is subject to it) and when bash does not exec the last command of
// `bash -c` in place. The differential test (direct_test.go) compares the
// two paths on real commands.

// envCache is what bash exports, per environment.
type envCache = proc.ExportCache

// probeEnv runs `bash -c '<prologue>\n/path/to/cat /proc/self/environ
// /proc/self/stat'` in dir with env: cat shows the environment bash gave
// it, byte for byte and in order, and its parent, which is this process
// only when bash executed the command in place (as the direct path does).
func probeEnv(ctx context.Context, dir string, env []string, limits backend.ResourceLimits) *proc.Exported {
	command, cat, ok := proc.ExportProbe()
	if !ok {
		return nil
	}
	argv, err := proc.ShellArgv(command, limits)
	if err != nil {
		return nil
	}
	res, err := proc.Run(context.WithoutCancel(ctx), &proc.Spec{Argv: argv, Dir: dir, Env: env, Timeout: probeTimeout})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 0 || len(res.Stderr) > 0 || res.Truncated {
		return nil
	}
	e, _ := proc.ParseExported(res.Stdout, cat, os.Getpid())
	return e
}

// probeTimeout bounds the environment probe.
const probeTimeout = 10 * time.Second

// runDirect runs req.Command without bash when it can promise bash's
// behaviour (see the top of this file); ok is false when the command must
// run through bash instead, and nothing ran.
func (b *Backend) runDirect(ctx context.Context, req *backend.Request, spec *proc.Spec, limits backend.ResourceLimits) (res *backend.Result, err error, ok bool) {
	if b.noDirect || req.Stdin != nil || limits.AddressSpace > 0 {
		return nil, nil, false
	}
	if t, _ := proc.Available(); t == proc.TrackReaper {
		return nil, nil, false // the reaper would be the program's parent
	}
	words, path, ok := proc.Literal(req.Command, spec.Env, spec.Dir)
	if !ok {
		return nil, nil, false
	}
	prologue := limits.CPUSeconds > 0 || limits.FileSize > 0 || limits.OpenFiles > 0 // as proc.Prologue
	d := b.envs.Get(proc.ExportKey(spec.Dir, spec.Env, prologue), func() *proc.Exported {
		return probeEnv(ctx, spec.Dir, spec.Env, limits)
	})
	if d == nil {
		return nil, nil, false
	}
	env := d.For(path)
	s := *spec
	s.Argv, s.Path, s.Env, s.Limits = words, path, env, &limits
	res, err = proc.Run(ctx, &s)
	var se *proc.StartError
	if errors.Is(err, proc.ErrNoDirectStart) || errors.As(err, &se) {
		return nil, nil, false // nothing ran
	}
	b.directRuns.Add(1)
	return res, err, true
}
