package egress_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/paigasus/helikon/egress"
)

// lockedBuffer is a log sink safe for the proxy's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRefusalLogsNoURLSecrets checks that a refused request's log record
// names the target without the credentials, query or fragment a URL may carry.
func TestRefusalLogsNoURLSecrets(t *testing.T) {
	var logs lockedBuffer
	addr := startProxy(t, &egress.Proxy{
		Filter: egress.DenyAll().AllowDomains("allowed.test"),
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
	})
	for _, head := range []string{
		"GET http://denied.test/path?token=SECRET1#frag HTTP/1.1\r\nHost: denied.test\r\n\r\n",
		"GET http://user:SECRET2@allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
		"CONNECT user:SECRET3@denied.test:443 HTTP/1.1\r\nHost: denied.test:443\r\n\r\n",
	} {
		rc := dialProxy(t, addr)
		resp := rc.do(t, head)
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Fatalf("%q: status %d, want a refusal", head, resp.StatusCode)
		}
	}
	out := logs.String()
	for _, secret := range []string{"SECRET1", "SECRET2", "SECRET3", "frag"} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains %s:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "target=http://denied.test/path") {
		t.Errorf("log does not name the refused target:\n%s", out)
	}
}
