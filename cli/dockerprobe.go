package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/paigasus/helikon/internal/dockerinfo"
)

// dockerProbeTimeout bounds doctor's question to the Docker daemon.
const dockerProbeTimeout = 3 * time.Second

// dockerInfoTimeout bounds doctor's second question, the daemon's info:
// rootless Podman's service takes seconds to answer it.
const dockerInfoTimeout = 10 * time.Second

// probeDocker asks the Docker daemon (DOCKER_HOST, else the default socket)
// for its version, as GET /version of the Engine API, and says in words
// whether --backend docker of the agent commands can work here. It speaks
// plain HTTP on purpose: the official client (package workspace/docker)
// links OpenTelemetry, which this binary leaves out to start fast.
func probeDocker(ctx context.Context, env *Env) string {
	host := env.Var("DOCKER_HOST")
	if host == "" {
		host = "unix:///var/run/docker.sock"
	}
	if env.Var("DOCKER_TLS_VERIFY") != "" {
		return "not probed: " + host + " needs TLS (DOCKER_TLS_VERIFY); helikon run --backend docker will use it"
	}
	var dial func(ctx context.Context) (net.Conn, error)
	switch {
	case strings.HasPrefix(host, "unix://"):
		path := strings.TrimPrefix(host, "unix://")
		dial = func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "unix", path) }
	case strings.HasPrefix(host, "tcp://"):
		addr := strings.TrimPrefix(host, "tcp://")
		dial = func(ctx context.Context) (net.Conn, error) { return (&net.Dialer{}).DialContext(ctx, "tcp", addr) }
	default:
		return "not probed: DOCKER_HOST " + host + " is neither unix:// nor tcp://"
	}
	vctx, cancel := context.WithTimeout(ctx, dockerProbeTimeout)
	defer cancel()
	c := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) }}}
	req, _ := http.NewRequestWithContext(vctx, http.MethodGet, "http://docker/version", nil)
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Sprintf("no daemon answers at %s (%v): start dockerd or podman system service, or set DOCKER_HOST", host, err)
	}
	defer resp.Body.Close()
	var v struct{ Version, APIVersion string }
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&v); err != nil || resp.StatusCode != http.StatusOK || v.Version == "" {
		return fmt.Sprintf("%s answers, but not as a Docker daemon (HTTP %d)", host, resp.StatusCode)
	}
	return fmt.Sprintf("daemon %s (API %s) at %s%s: run, mcp and tool take --backend docker --image IMAGE (a container per session; os_kernel with runc, virtualized with --runtime runsc)", v.Version, v.APIVersion, host, userNamespace(ctx, dial))
}

// userNamespace says how the daemon maps its containers' users, from its
// info ("" when it runs as root without remapping, or does not say).
func userNamespace(ctx context.Context, dial func(context.Context) (net.Conn, error)) string {
	ctx, cancel := context.WithTimeout(ctx, dockerInfoTimeout)
	defer cancel()
	info, err := dockerinfo.Get(ctx, dial)
	switch {
	case err != nil:
		return " (its info did not answer: " + err.Error() + ")"
	case info.IsRootless() && info.Podman:
		return ", rootless Podman (containers run in its user's own user namespace, no host root anywhere; the bind mode runs commands as that user through keep-id)"
	case info.IsRootless():
		return ", rootless Docker (containers run in its user's own user namespace, no host root anywhere; the bind mode runs commands as the container's root, which is that user)"
	case dockerinfo.Remapped(info.SecurityOptions):
		return ", userns-remap (the bind mode is refused: a command would write files as a subordinate uid; use --isolate)"
	}
	return ""
}
