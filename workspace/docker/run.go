package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/capture"
	"github.com/paigasus/helikon/internal/locale"
	"github.com/paigasus/helikon/internal/proc"
	"github.com/paigasus/helikon/workspace/internal/pidline"
)

// Run runs req in the container with docker exec, as the container's user,
// in Dir, with the image's environment plus the allowlisted variables of
// this process and req.SetEnv. A command that ran is a [backend.Result]
// whatever its exit status; a timeout is a result with TimedOut set. When
// the timeout expires or ctx is cancelled, the command and every process
// of its session in the container are killed (see the package doc) and
// Run returns once its output has ended. A container that no longer exists
// or no longer runs fails with an error wrapping [workspace.ErrGone].
func (w *Workspace) Run(ctx context.Context, req *backend.Request) (*backend.Result, error) {
	if req == nil {
		return nil, errors.New("docker: nil request")
	}
	if req.Command != "" && len(req.Argv) > 0 {
		return nil, errors.New("docker: a request sets both Command and Argv; set one")
	}
	if len(req.Argv) > 0 && req.Argv[0] == "" {
		return nil, errors.New("docker: empty program name in Argv")
	}
	if w.isClosed() {
		return nil, errClosed
	}
	timeout := backend.EffectiveTimeout(w.timeout, req.Timeout)
	limits := w.limits.Merge(req.Limits).WithDefaults(timeout)
	limits.Processes = 0
	allow := w.allow
	if len(req.Env) > 0 {
		allow = append(slices.Clone(w.allow), req.Env...)
	}
	env := backend.ScrubEnv(os.Environ(), allow, req.SetEnv)
	argv := req.Argv
	if len(argv) == 0 {
		argv = []string{w.shell, "-c", req.Command}
	}
	out := capture.New(req, w.outputCap)
	begin := time.Now()
	o, err := w.exec(ctx, &execSpec{
		script:  wrapper(proc.Prologue(limits, false), unsafeLocale(w.baseEnv, env), w.readOnly),
		argv:    argv,
		env:     env,
		stdin:   req.Stdin,
		stdout:  out.Stdout,
		stderr:  out.Stderr,
		timeout: timeout,
	})
	if o == nil {
		return nil, err
	}
	res := &backend.Result{TimedOut: o.timedOut, Duration: time.Since(begin)}
	if o.killed {
		res.Signal = int(syscall.SIGKILL)
	} else {
		code := o.exitCode
		res.ExitCode = &code
	}
	out.Fill(res)
	return res, err
}

// wrapper is the script every command runs under, as /bin/sh -c SCRIPT
// helikon ARGV...: it prints its pid (the exec's process is the leader of
// a session and a process group of its own, which runc creates for every
// exec) as the first line of standard output, which exec strips and keeps
// to kill the command; drops locale variables a shell would read the
// command line through in another character set; applies the per-command
// resource limits; checks that each of readOnly (relative to the working
// directory, the root) is still a directory the command cannot write,
// exiting 125 otherwise; and replaces itself with the command.
//
// The check catches a read-only mount detached by the kernel because the
// directory was removed on the host while the container lived (the
// command could then create it, and a policy file in it): creating a
// directory in it fails with EROFS on a read-only mount, whoever asks (a
// test -w is no check: busybox answers yes to root without asking the
// kernel); one that could be made is removed at once.
func wrapper(prologue string, unset, readOnly []string) string {
	var b strings.Builder
	b.WriteString("echo $$ || exit 125\n")
	for _, p := range readOnly {
		q := "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
		probe := "'" + strings.ReplaceAll(p+"/.helikon-read-only-check-", "'", `'\''`) + "'$$"
		b.WriteString("if [ ! -d " + q + " ] || mkdir " + probe + " 2>/dev/null; then rmdir " + probe + " 2>/dev/null; echo \"helikon: \"" + q + "\" is no longer mounted read-only (removed on the host since the workspace was created?); create a new workspace\" >&2; exit 125; fi\n")
	}
	if len(unset) > 0 {
		b.WriteString("unset " + strings.Join(unset, " ") + "\n")
	}
	if prologue != "" {
		b.WriteString(prologue + "\n")
	}
	b.WriteString(`exec "$@"`)
	return b.String()
}

// unsafeLocale returns the locale variables that the command's environment
// (the container's base, overridden by env) holds with a value a shell
// would read text through in another character set than UTF-8 or C, and
// LOCPATH: the variables [backend.ScrubEnv] never lets through, which the
// image's own environment may set.
func unsafeLocale(base, env []string) []string {
	value := map[string]string{}
	for _, list := range [][]string{base, env} {
		for _, kv := range list {
			if name, v, ok := strings.Cut(kv, "="); ok {
				value[name] = v
			}
		}
	}
	var out []string
	if _, ok := value["LOCPATH"]; ok {
		out = append(out, "LOCPATH")
	}
	for _, name := range locale.CtypeVars {
		if v, ok := value[name]; ok && !locale.Safe(v) {
			out = append(out, name)
		}
	}
	return out
}

// execSpec is one command to run in the container.
type execSpec struct {
	script         string   // the wrapper (see wrapper): run as /bin/sh -c script helikon argv...
	argv           []string // what the wrapper executes
	env            []string // NAME=value on top of the container's environment
	stdin          io.Reader
	stdout, stderr io.Writer
	timeout        time.Duration // zero: none (ctx only)
	// tty, when set, runs the command on a terminal of this size: its
	// three streams are the terminal, whose output goes to stdout.
	tty *backend.TermSize
	// pw, when set, is the pid writer in front of stdout (Start reads
	// the pid from it); else exec makes its own.
	pw *pidline.Writer
	// started, when set, is called with the exec's id once it runs.
	started func(execID string)
}

// outcome is how an exec ended.
type outcome struct {
	exitCode int
	killed   bool // killed by Run at the timeout or on cancellation
	timedOut bool
}

// killWait bounds how long exec waits, after it killed a command, for the
// daemon to close its output, and how long the kill itself may take.
const killWait = 10 * time.Second

// exec runs s and waits for it. On the timeout or ctx's end it kills the
// command's session and process group through a second exec, then waits
// for the output to end; the outcome then says killed, and on ctx's end the
// error is ctx's.
func (w *Workspace) exec(ctx context.Context, s *execSpec) (*outcome, error) {
	cmd := append([]string{"/bin/sh", "-c", s.script, "helikon"}, s.argv...)
	pw := s.pw
	if pw == nil {
		pw = newPidWriter(s.stdout)
	}
	st, err := w.start(ctx, cmd, s.env, s.stdin != nil, s.tty)
	if err != nil {
		return nil, err
	}
	defer st.att.Close()
	if s.started != nil {
		s.started(st.execID)
	}
	done := st.stream(s.stdin, pw, s.stderr)
	var timer <-chan time.Time
	if s.timeout > 0 {
		t := time.NewTimer(s.timeout)
		defer t.Stop()
		timer = t.C
	}
	o := &outcome{}
	var ctxErr error
	var poll <-chan time.Time
wait:
	for {
		select {
		case <-done:
			done = nil
		case <-poll:
		case <-timer:
			o.timedOut = true
			break wait
		case <-ctx.Done():
			ctxErr = ctx.Err()
			break wait
		}
		// The output ended: the command exited, or closed its output and
		// runs on, which the inspection tells.
		code, running, err := w.inspect(ctx, st.execID)
		if err != nil {
			return nil, err
		}
		if !running {
			o.exitCode = code
			return o, nil
		}
		poll = time.After(pollInterval)
	}
	o.killed = true
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), killWait)
	defer cancel()
	select {
	case <-pw.Ready():
	case <-done:
	case <-kctx.Done():
	}
	pid, ok := wrapperPid(pw)
	if !ok {
		// No pid line: the wrapper never ran its command, or its output
		// could not be read; what ran is whatever the exec started.
		if done != nil {
			st.att.Close()
		}
		return o, errors.Join(ctxErr, fmt.Errorf("docker: the command's process id was not reported; it may still run in the container until the workspace closes"))
	}
	if err := w.kill(kctx, pid); err != nil {
		return o, errors.Join(ctxErr, fmt.Errorf("docker: kill the command: %w", err))
	}
	if done != nil {
		select {
		case <-done:
		case <-kctx.Done():
			st.att.Close() // an orphan outside the session holds the output
		}
	}
	return o, ctxErr
}

// pollInterval is how often exec asks whether a command that closed its
// output has exited.
const pollInterval = 20 * time.Millisecond

// started is an exec that runs, with its attached streams.
type started struct {
	execID string
	att    client.ExecAttachResult
	tty    bool // one raw stream, the terminal's, instead of two multiplexed
}

// start creates and starts an exec of cmd with its streams attached, on a
// terminal of size tty when that is not nil.
func (w *Workspace) start(ctx context.Context, cmd, env []string, stdin bool, tty *backend.TermSize) (*started, error) {
	opts := client.ExecCreateOptions{
		Cmd:          cmd,
		Env:          env,
		WorkingDir:   w.dir,
		AttachStdin:  stdin,
		AttachStdout: true,
		AttachStderr: true,
	}
	var aopts client.ExecAttachOptions
	if tty != nil {
		// The size given here is applied by daemons of API 1.42 and
		// later; the wrapper sets it with stty for older ones.
		opts.TTY = true
		opts.ConsoleSize = client.ConsoleSize{Height: uint(tty.Rows), Width: uint(tty.Cols)}
		aopts = client.ExecAttachOptions{TTY: true, ConsoleSize: opts.ConsoleSize}
	}
	cr, err := w.e.cli.ExecCreate(ctx, w.id, opts)
	if err != nil {
		if w.isClosed() {
			return nil, errClosed
		}
		return nil, fmt.Errorf("docker: exec in container %s: %w", shortID(w.id), gone(err))
	}
	att, err := w.e.cli.ExecAttach(ctx, cr.ID, aopts)
	if err != nil {
		return nil, fmt.Errorf("docker: start exec in container %s: %w", shortID(w.id), gone(err))
	}
	return &started{execID: cr.ID, att: att, tty: tty != nil}, nil
}

// stream copies stdin to the exec and its output to stdout and stderr; the
// channel is closed when the output has ended.
func (st *started) stream(stdin io.Reader, stdout, stderr io.Writer) chan struct{} {
	if stdin != nil {
		go func() {
			_, _ = io.Copy(st.att.Conn, stdin)
			_ = st.att.CloseWrite()
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if st.tty {
			_, _ = io.Copy(stdout, st.att.Reader)
			return
		}
		_, _ = stdcopy.StdCopy(stdout, stderr, st.att.Reader)
	}()
	return done
}

// inspect returns the exec's exit code and whether it still runs.
func (w *Workspace) inspect(ctx context.Context, execID string) (code int, running bool, err error) {
	r, err := w.e.cli.ExecInspect(context.WithoutCancel(ctx), execID, client.ExecInspectOptions{})
	if err != nil {
		return 0, false, fmt.Errorf("docker: inspect exec: %w", gone(err))
	}
	return r.ExitCode, r.Running, nil
}

// execRaw runs cmd as it is (no wrapper, no kill on ctx's end beyond
// closing the connection) and returns its exit code: for the engine's own
// short commands.
func (w *Workspace) execRaw(ctx context.Context, cmd, env []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	st, err := w.start(ctx, cmd, env, stdin != nil, nil)
	if err != nil {
		return 0, err
	}
	defer st.att.Close()
	done := st.stream(stdin, stdout, stderr)
	select {
	case <-done:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	for {
		code, running, err := w.inspect(ctx, st.execID)
		if err != nil || !running {
			return code, err
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(pollInterval):
		}
	}
}

// killScript kills, with SIGKILL, the process group and the session whose
// leader had pid $1, and every process of either that forks while it
// works, until a pass finds none alive. A process that left both (setsid
// and a new process group) is not found. The pid cannot name another
// command's group: the kernel does not reuse a pid while a process still
// has it as its group or session id, and the container's pid namespace
// counts up to pid_max before it wraps.
const killScript = `p=$1
n=0
while [ "$n" -lt 200 ]; do
	n=$((n + 1))
	kill -KILL -"$p" 2>/dev/null
	hit=
	for f in /proc/[0-9]*/stat; do
		read -r l <"$f" 2>/dev/null || continue
		l=${l##*) }
		set -- $l
		[ "$1" != Z ] || continue
		[ "$3" = "$p" ] || [ "$4" = "$p" ] || continue
		q=${f#/proc/}
		kill -KILL "${q%/stat}" 2>/dev/null && hit=1
	done
	[ -n "$hit" ] || exit 0
	[ "$n" -lt 3 ] || sleep 0.05 2>/dev/null || sleep 1
	p=$p
done
exit 1`

// kill runs killScript for the session of pid in the container.
func (w *Workspace) kill(ctx context.Context, pid int) error {
	var errb bytes.Buffer
	code, err := w.execRaw(ctx, []string{"/bin/sh", "-c", killScript, "helikon-kill", strconv.Itoa(pid)}, nil, nil, io.Discard, &errb)
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("processes of session %d survived (exit %d: %s)", pid, code, bytes.TrimSpace(errb.Bytes()))
	}
	return nil
}

// maxPidLine bounds the wrapper's first line: a pid has at most 7 digits
// (pid_max is at most 2^22).
const maxPidLine = 16

// newPidWriter strips the wrapper's first line (its pid) from the
// command's standard output and passes the rest on.
func newPidWriter(dst io.Writer) *pidline.Writer { return pidline.New(dst, "", maxPidLine) }

// wrapperPid is the pid the wrapper reported: never 1, the container's
// init, whose group a kill must not reach.
func wrapperPid(w *pidline.Writer) (int, bool) {
	n, ok := w.PID()
	return n, ok && n > 1
}
