package agentsandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/paigasus/helikon/workspace/internal/pidline"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"
)

// exitCode is the exit status of a command that ran to its end.
type exitCode = int

// stream runs argv in the workspace's container through the pod's exec
// subresource, as kubectl exec does: client-go's WebSocket executor, and
// its SPDY executor where the API server does not upgrade to WebSocket
// (before Kubernetes 1.30, or behind a proxy that only passes SPDY). A
// command that exits non-zero is its exit code and a nil error; an error
// means the stream failed (the pod, the kubelet or the API server).
func (w *Workspace) stream(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) (exitCode, error) {
	if err := w.check(ctx); err != nil {
		return 0, err
	}
	req := w.e.core.Post().Resource("pods").Namespace(w.e.ns).Name(w.tg.pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: w.tg.container,
			Command:   argv,
			Stdin:     stdin != nil,
			Stdout:    true,
			Stderr:    true,
		}, scheme.ParameterCodec)
	ex, err := w.e.executor(req.URL())
	if err != nil {
		return 0, fmt.Errorf("k8s exec: %w", err)
	}
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	var exit utilexec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit) && exit.Exited():
		return exit.ExitStatus(), nil
	case ctx.Err() != nil:
		return 0, ctx.Err()
	}
	if gone := w.e.gone(ctx, w.tg); gone != nil {
		if errIsGone(gone) {
			w.setGone(gone)
		}
		return 0, fmt.Errorf("%w (exec failed: %v)", gone, err)
	}
	return 0, fmt.Errorf("k8s exec in pod %s/%s: %w", w.e.ns, w.tg.pod, err)
}

// executor builds the exec stream's client for url: WebSocket first,
// SPDY when the server refuses the WebSocket upgrade, as kubectl exec
// (k8s.io/kubectl/pkg/cmd/exec at v0.37: NewFallbackExecutor with
// httpstream.IsUpgradeFailure and IsHTTPSProxyError).
func (e *Engine) executor(u *url.URL) (remotecommand.Executor, error) {
	spdy, err := remotecommand.NewSPDYExecutor(e.c.Config, http.MethodPost, u)
	if err != nil {
		return nil, err
	}
	ws, err := remotecommand.NewWebSocketExecutor(e.c.Config, http.MethodGet, u.String())
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

// check fails with the workspace's ErrGone once it is gone or closed, and
// otherwise checks that the pod is still the one the workspace was opened
// on: the Sandbox controller recreates a deleted pod under the same name,
// empty, and a command must not silently run in it (one GET of the pod per
// command).
func (w *Workspace) check(ctx context.Context) error {
	if err := w.goneErr(); err != nil {
		return err
	}
	pod, err := w.e.c.Kube.CoreV1().Pods(w.e.ns).Get(ctx, w.tg.pod, metav1.GetOptions{})
	if err == nil && string(pod.UID) == w.tg.uid && podDead(pod) == "" {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	gone := w.e.gone(ctx, w.tg)
	if gone == nil {
		return nil
	}
	if errIsGone(gone) {
		w.setGone(gone)
	}
	return gone
}

// newPidWriter passes a command's stderr through after taking the first
// line, which the wrapper writes before it starts the command:
// "helikon-pid:N".
func newPidWriter(w io.Writer) *pidline.Writer { return pidline.New(w, pidPrefix, maxPidLine) }

// maxPidLine bounds the line the writer waits for.
const maxPidLine = 63

const pidPrefix = "helikon-pid:"

// wrapper is the POSIX sh program every command runs under. It reports its
// process id on stderr (which exec keeps as the command's: exec replaces
// the shell), enters the workspace directory, exports the SetEnv pairs and
// runs the command: "-c LINE" through bash where the image has it, sh
// otherwise; an argument vector as it is. Exit 125 means the wrapper
// itself failed.
//
//	sh -c WRAPPER helikon DIR N NAME=value... (-c LINE | PROGRAM ARG...)
const wrapper = `printf '` + pidPrefix + `%s\n' "$$" >&2
cd -- "$1" || exit 125
shift
n=$1
shift
while [ "$n" -gt 0 ]; do export "$1" || exit 125; shift; n=$((n-1)); done
if [ "$1" = -c ]; then
	command -v bash >/dev/null 2>&1 && exec bash -c "$2"
	exec sh -c "$2"
fi
exec "$@"`

// killTree is the POSIX sh program that ends a command whose stream was cut
// (timeout, cancellation): the kubelet does not kill an exec'd process
// when its stream closes. It stops the process and, repeatedly, every
// process whose parent is stopped (read from /proc/PID/stat), so nothing
// can fork away while the tree is collected, then kills them all.
//
//	sh -c KILLTREE helikon PID
const killTree = `root=$1
kill -STOP "$root" 2>/dev/null || exit 0
all=" $root "
while :; do
	new=
	for f in /proc/[0-9]*/stat; do
		{ read -r line < "$f"; } 2>/dev/null || continue
		pid=${f#/proc/}
		pid=${pid%/stat}
		case "$all$new " in *" $pid "*) continue ;; esac
		set -- ${line##*) }
		case "$all$new " in *" $2 "*) new="$new $pid "; kill -STOP "$pid" 2>/dev/null ;; esac
	done
	[ -z "$new" ] && break
	all="$all$new"
done
for p in $all; do kill -KILL "$p" 2>/dev/null; done
exit 0`

// kill ends the process tree of pid in the container, whatever the state
// of ctx.
func (w *Workspace) kill(ctx context.Context, pid int) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var out, errb bytes.Buffer // two: client-go copies the streams concurrently
	code, err := w.stream(ctx, []string{"sh", "-c", killTree, "helikon", strconv.Itoa(pid)}, nil, &out, &errb)
	if err == nil && code != 0 {
		err = fmt.Errorf("exit %d: %s", code, bytes.TrimSpace(errb.Bytes()))
	}
	return err
}
