package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
)

// The tests run against a real daemon and the image that
// testdata/ci-setup.sh builds. Without a daemon they skip, unless
// HELIKON_REQUIRE_DOCKER is set (CI sets it), when they fail.
const (
	imageEnv   = "HELIKON_DOCKER_IMAGE"
	requireEnv = "HELIKON_REQUIRE_DOCKER"
	// runtimeEnv names the runtime every test's containers run with where the test sets none (runsc: the suite
	// in gVisor, against a daemon that has it: ci-setup.sh runsc-start).
	runtimeEnv = "HELIKON_DOCKER_RUNTIME"
	testImage  = "helikon-test-busybox:1"
)

var (
	daemonOnce sync.Once
	daemonErr  error
)

// needDaemon skips (or, with HELIKON_REQUIRE_DOCKER, fails) the test when no
// daemon answers.
func needDaemon(t testing.TB) {
	t.Helper()
	daemonOnce.Do(func() {
		cli, err := client.New(client.FromEnv)
		if err != nil {
			daemonErr = err
			return
		}
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, daemonErr = cli.Ping(ctx, client.PingOptions{})
	})
	if daemonErr == nil {
		return
	}
	if os.Getenv(requireEnv) != "" {
		t.Fatalf("%s is set but no Docker daemon answers: %v (run workspace/docker/testdata/ci-setup.sh start)", requireEnv, daemonErr)
	}
	t.Skipf("no Docker daemon answers (%v); run workspace/docker/testdata/ci-setup.sh start, or set %s to make this a failure", daemonErr, requireEnv)
}

func image() string {
	if s := os.Getenv(imageEnv); s != "" {
		return s
	}
	return testImage
}

// newEngine returns an engine on the test image with opts (Image filled
// in), closed when the test ends.
func newEngine(t testing.TB, opts Options) *Engine {
	t.Helper()
	needDaemon(t)
	opts.Image = image()
	if opts.Runtime == "" {
		opts.Runtime = os.Getenv(runtimeEnv)
	}
	e, err := New(t.Context(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// session returns a fresh session id.
func session(t testing.TB) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	return "test-" + hex.EncodeToString(b)
}

// bindRoot returns a temporary root for the bind mode, owned by this
// process's user, whom the container's commands run as.
func bindRoot(t testing.TB) string {
	t.Helper()
	return t.TempDir()
}

// create creates a workspace of e, removed when the test ends.
func create(t testing.TB, e *Engine) *Workspace {
	t.Helper()
	ws, err := e.Create(t.Context(), session(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close(context.Background()) })
	return ws.(*Workspace)
}

// run runs command and fails the test on an error.
func run(t testing.TB, ws workspace.Workspace, req *backend.Request) *backend.Result {
	t.Helper()
	res, err := ws.Run(t.Context(), req)
	if err != nil {
		t.Fatalf("Run(%q %q): %v", req.Command, req.Argv, err)
	}
	return res
}

// sh runs command and returns its standard output, failing unless it
// exits 0.
func sh(t testing.TB, ws workspace.Workspace, command string) string {
	t.Helper()
	res := run(t, ws, &backend.Request{Command: command})
	if res.ExitCode == nil || *res.ExitCode != 0 {
		t.Fatalf("%q: exit %v, stdout %q, stderr %q", command, res.ExitCode, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

// marker is an io.Writer that closes seen once word was written to it.
type marker struct {
	word string
	mu   sync.Mutex
	buf  strings.Builder
	once sync.Once
	seen chan struct{}
}

func newMarker(word string) *marker { return &marker{word: word, seen: make(chan struct{})} }

func (m *marker) Write(p []byte) (int, error) {
	m.mu.Lock()
	m.buf.Write(p)
	found := strings.Contains(m.buf.String(), m.word)
	m.mu.Unlock()
	if found {
		m.once.Do(func() { close(m.seen) })
	}
	return len(p), nil
}
