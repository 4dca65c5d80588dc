//go:build linux

package ossandbox

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestForwardSessionPort: a port of the session's loopback, where a
// command's background server listens, is forwarded to a listener of the
// host's 127.0.0.1 and serves the user's requests; a port the session does
// not serve is not the host's port of the same number (the forward reaches
// the session only); a backend without a network of its own has nothing to
// forward; the forward ends with its context. Root and unprivileged.
func TestForwardSessionPort(t *testing.T) {
	host := hostServer(t, "127.0.0.1:0", "hello from the host")
	hostPort := host.Addr().(*net.TCPAddr).Port
	b, _ := newTestBackend(t, Options{Loopback: true})
	t.Cleanup(func() { b.Close() })
	addr := freeLoopback(t)
	startServer(t, b, addr, "hello from the session")
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)

	get := func(sessionPort int) (string, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- b.Forward(ctx, ln, sessionPort) }()
		defer func() {
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("Forward ended with %v; want context.Canceled", err)
			}
		}()
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
		resp, err := c.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return string(body), err
	}
	if body, err := get(port); err != nil || body != "hello from the session" {
		t.Errorf("through the forward: %q, %v; want the session's page", body, err)
	}
	if body, err := get(hostPort); err == nil || strings.Contains(body, "host") {
		t.Errorf("forwarding a port the session does not serve: %q, %v; want no answer (never the host's server)", body, err)
	}

	none, _ := newTestBackend(t, Options{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := none.Forward(t.Context(), ln, port); !errors.Is(err, ErrNoSessionNetwork) {
		t.Errorf("Forward without a session network = %v; want ErrNoSessionNetwork", err)
	}
	if _, err := none.DialSession(t.Context(), port); !errors.Is(err, ErrNoSessionNetwork) {
		t.Errorf("DialSession without a session network = %v; want ErrNoSessionNetwork", err)
	}
}
