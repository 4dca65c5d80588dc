package fakecluster

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	remotecommandconsts "k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
	"k8s.io/streaming/pkg/httpstream/wsstream"
)

// ExecServer serves POST/GET /api/v1/namespaces/NS/pods/NAME/exec as the
// API server and the kubelet do: SPDY (protocols v4 and v5, the kubelet's
// pkg/kubelet/cri/streaming/remotecommand at Kubernetes v1.37) and
// WebSocket (v5.channel.k8s.io, what the API server's stream translator
// serves to client-go since Kubernetes 1.30), with the exit status on the
// error stream as a metav1.Status. Like the kubelet, it does not kill a
// command whose client went away: the command runs to its end.
type ExecServer struct {
	srv *httptest.Server
	c   *Cluster

	// RefuseWebSocket answers a WebSocket upgrade with 400, as an API
	// server older than 1.30 does, so clients fall back to SPDY.
	RefuseWebSocket atomic.Bool
	// WebSocketExecs and SPDYExecs count the execs served each way.
	WebSocketExecs, SPDYExecs atomic.Int64

	mu    sync.Mutex
	procs map[int]bool // process groups still running
	wg    sync.WaitGroup
}

func newExecServer(t *testing.T, c *Cluster) *ExecServer {
	s := &ExecServer{c: c, procs: map[int]bool{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL is the server's address, the host of the cluster's rest.Config.
func (s *ExecServer) URL() string { return s.srv.URL }

// close kills what still runs (commands the tests left behind) and stops
// the server.
func (s *ExecServer) close() {
	s.mu.Lock()
	for pgid := range s.procs {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.srv.Close()
}

// Running reports whether the process pid still runs (and is not a zombie
// waiting for its parent).
func Running(pid int) bool {
	return syscall.Kill(pid, 0) == nil && !zombie(pid)
}

func (s *ExecServer) serve(w http.ResponseWriter, req *http.Request) {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if len(parts) != 7 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "namespaces" || parts[4] != "pods" || parts[6] != "exec" {
		writeStatus(w, apierrors.NewNotFound(corev1.Resource("path"), req.URL.Path))
		return
	}
	ns, name := parts[3], parts[5]
	pod, err := s.c.Kube.CoreV1().Pods(ns).Get(req.Context(), name, metav1.GetOptions{})
	if err != nil {
		writeStatus(w, err)
		return
	}
	q := req.URL.Query()
	if ctr := q.Get("container"); ctr != "" && (len(pod.Spec.Containers) == 0 || !hasContainer(pod, ctr)) {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("container %s is not valid for pod %s", ctr, name)))
		return
	}
	dir, ok := s.c.Dir(pod.UID)
	if !ok || pod.Status.Phase != corev1.PodRunning {
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("pod %s is not running (phase %q)", name, pod.Status.Phase)))
		return
	}
	argv := q["command"]
	if len(argv) == 0 {
		writeStatus(w, apierrors.NewBadRequest("you must specify at least 1 command"))
		return
	}
	opts := streamOpts{stdin: q.Get("stdin") == "true", stdout: q.Get("stdout") == "true", stderr: q.Get("stderr") == "true"}
	run := func(stdin io.Reader, stdout, stderr io.Writer) error { return s.run(dir, argv, stdin, stdout, stderr) }
	if wsstream.IsWebSocketRequest(req) {
		if s.RefuseWebSocket.Load() {
			http.Error(w, "websocket upgrade not supported", http.StatusBadRequest)
			return
		}
		s.WebSocketExecs.Add(1)
		serveWebSocket(w, req, opts, run)
		return
	}
	s.SPDYExecs.Add(1)
	serveSPDY(w, req, opts, run)
}

func hasContainer(pod *corev1.Pod, name string) bool {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	return false
}

// containerEnv is the environment of the container's processes: the
// image's, never the test process's.
var containerEnv = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOSTNAME=sandbox"}

// run runs argv in dir and waits for it. An exit by signal N is exit code
// 128+N, as the container runtime reports it.
func (s *ExecServer) run(dir string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(containerEnv, "HOME="+dir)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if stdin != nil {
		// Through a pipe this process closes once the command exited: an
		// exec ends with its process whether or not its client closed its
		// input, as the kubelet's does (exec.Cmd would wait for an input
		// that may never end).
		r, w, err := os.Pipe()
		if err != nil {
			return err
		}
		defer w.Close()
		cmd.Stdin = r
		go func() {
			_, _ = io.Copy(w, stdin)
			w.Close()
		}()
		defer r.Close()
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // for close to clean up after the tests
	// The exec session ends soon after its process does, as with
	// containerd, even if a child it left behind holds the output open;
	// the delay is long enough for a loaded machine to copy what the
	// process wrote.
	cmd.WaitDelay = 2 * time.Second
	s.wg.Add(1)
	defer s.wg.Done()
	if err := cmd.Start(); err != nil {
		return err
	}
	pgid := cmd.Process.Pid
	s.mu.Lock()
	s.procs[pgid] = true
	s.mu.Unlock()
	err := cmd.Wait()
	s.mu.Lock()
	delete(s.procs, pgid)
	s.mu.Unlock()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code := exit.ExitCode()
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		return exitError(code)
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		return nil
	}
	return err
}

type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// status is what the kubelet writes on the error stream
// (remotecommand.ServeExec): Success, NonZeroExitCode with the code as the
// ExitCode cause, or an internal error.
func status(err error) metav1.Status {
	var code exitError
	switch {
	case err == nil:
		return metav1.Status{Status: metav1.StatusSuccess}
	case errors.As(err, &code):
		return metav1.Status{
			Status:  metav1.StatusFailure,
			Reason:  remotecommandconsts.NonZeroExitCodeReason,
			Message: fmt.Sprintf("command terminated with non-zero exit code: %v", err),
			Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: remotecommandconsts.ExitCodeCauseType, Message: fmt.Sprint(int(code))}}},
		}
	}
	return apierrors.NewInternalError(fmt.Errorf("error executing command in container: %w", err)).ErrStatus
}

func writeStatus(w http.ResponseWriter, err error) {
	var st apierrors.APIStatus
	s := apierrors.NewInternalError(err).ErrStatus
	if errors.As(err, &st) {
		s = st.Status()
	}
	s.Kind, s.APIVersion = "Status", "v1"
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(s.Code))
	_ = json.NewEncoder(w).Encode(s)
}

type streamOpts struct{ stdin, stdout, stderr bool }

// serveSPDY is the kubelet's createHTTPStreamStreams and ServeExec: the
// protocol handshake, one SPDY stream per requested standard stream plus
// the error stream, the command, the status.
func serveSPDY(w http.ResponseWriter, req *http.Request, opts streamOpts, run func(io.Reader, io.Writer, io.Writer) error) {
	if _, err := httpstream.Handshake(req, w, []string{remotecommandconsts.StreamProtocolV5Name, remotecommandconsts.StreamProtocolV4Name}); err != nil {
		return // Handshake answered 403 with the protocols it supports
	}
	type streamAndReply struct {
		httpstream.Stream
		replySent <-chan struct{}
	}
	streams := make(chan streamAndReply, 4)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, req, func(st httpstream.Stream, replySent <-chan struct{}) error {
		streams <- streamAndReply{st, replySent}
		return nil
	})
	if conn == nil {
		return // UpgradeResponse answered the error
	}
	defer conn.Close()
	conn.SetIdleTimeout(4 * time.Hour)
	want := 1
	for _, b := range []bool{opts.stdin, opts.stdout, opts.stderr} {
		if b {
			want++
		}
	}
	var errStream, stdin, stdout, stderr httpstream.Stream
	timeout := time.After(30 * time.Second) // the kubelet's streamCreationTimeout
	for got := 0; got < want; got++ {
		select {
		case st := <-streams:
			switch st.Headers().Get(corev1.StreamType) {
			case corev1.StreamTypeError:
				errStream = st
			case corev1.StreamTypeStdin:
				stdin = st
			case corev1.StreamTypeStdout:
				stdout = st
			case corev1.StreamTypeStderr:
				stderr = st
			default:
				got-- // resize and others are not counted
			}
			<-st.replySent
		case <-timeout:
			return
		case <-conn.CloseChan():
			return
		}
	}
	var in io.Reader
	if stdin != nil {
		in = stdin
	}
	err := run(in, writerOr(stdout), writerOr(stderr))
	b, _ := json.Marshal(status(err))
	_, _ = errStream.Write(b)
	_ = errStream.Close()
}

// serveWebSocket is the v5 channel protocol as the API server's stream
// translator serves it (k8s.io/apiserver/pkg/util/proxy): channel 0
// stdin, 1 stdout, 2 stderr, 3 the status, 4 resize, on one WebSocket.
func serveWebSocket(w http.ResponseWriter, req *http.Request, opts streamOpts, run func(io.Reader, io.Writer, io.Writer) error) {
	ch := func(b bool, t wsstream.ChannelType) wsstream.ChannelType {
		if b {
			return t
		}
		return wsstream.IgnoreChannel
	}
	channels := []wsstream.ChannelType{
		ch(opts.stdin, wsstream.ReadChannel),
		ch(opts.stdout, wsstream.WriteChannel),
		ch(opts.stderr, wsstream.WriteChannel),
		wsstream.WriteChannel,
		wsstream.IgnoreChannel,
	}
	conn := wsstream.NewConn(map[string]wsstream.ChannelProtocolConfig{
		remotecommandconsts.StreamProtocolV5Name: {Binary: true, Channels: channels},
	})
	conn.SetIdleTimeout(4 * time.Hour)
	_, streams, err := conn.Open(w, req)
	if err != nil {
		return
	}
	defer conn.Close()
	var in io.Reader
	if opts.stdin {
		in = streams[0]
	}
	err = run(in, writerOr(streams[1]), writerOr(streams[2]))
	b, _ := json.Marshal(status(err))
	_, _ = streams[3].Write(b)
}

// writerOr is w, or io.Discard for a stream the client did not open.
func writerOr(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// zombie reports whether pid has exited and awaits its parent's wait.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'Z'
}
