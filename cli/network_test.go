package cli_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
)

// hostLoopback serves body on the host's 127.0.0.1 and returns its port.
func hostLoopback(t *testing.T, body string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback here: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// TestExecLoopback: helikon exec --loopback runs a server on the session's
// own loopback, on the port a server of the host's loopback holds, and
// reaches it; the host's server is not reached, with or without the flag.
// As root and, in .ci/run, as an unprivileged user.
func TestExecLoopback(t *testing.T) {
	if _, err := exec.LookPath("busybox"); err != nil {
		t.Skip("no busybox here (its httpd and wget are the server and client)")
	}
	port := hostLoopback(t, "hello from the host")
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "www"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "www/index.html"), []byte("hello from the session\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	script := fmt.Sprintf("busybox wget -q -O - %[1]s; echo \"host: $?\"; busybox httpd -p 127.0.0.1:%[2]d -h www && busybox wget -q -O - %[1]s", url, port)
	code, out, errOut := clitest.Run(t, "", "exec", "--backend", "os", "--loopback", "--root", root, "--", "sh", "-c", script)
	if code == 125 && strings.Contains(errOut, "unavailable") {
		t.Skipf("the OS sandbox is unavailable here: %s", errOut)
	}
	if code != 0 || !strings.Contains(out, "hello from the session") || strings.Contains(out, "hello from the host") || strings.Contains(out, "host: 0") {
		t.Fatalf("exit %d, stdout %q, stderr %s; want the session's page only", code, out, errOut)
	}
	code, out, errOut = clitest.Run(t, "", "exec", "--backend", "os", "--root", root, "--", "busybox", "wget", "-q", "-O", "-", url)
	if code == 0 || strings.Contains(out, "hello from the host") {
		t.Fatalf("without --loopback: exit %d, stdout %q, stderr %s; want refused", code, out, errOut)
	}
	code, _, errOut = clitest.Run(t, "", "exec", "--backend", "os", "--loopback", "--allow-network", "--root", root, "--", "true")
	if code != 125 {
		t.Errorf("--loopback with --allow-network: exit %d, stderr %s; want 125", code, errOut)
	}
}

// TestExecEgressAllow: helikon exec --egress-allow, for every caller: the
// proxy refuses a host that is not listed (403), and a direct connection
// to the host's loopback fails.
func TestExecEgressAllow(t *testing.T) {
	if _, err := exec.LookPath("busybox"); err != nil {
		t.Skip("no busybox here (its wget is the client)")
	}
	port := hostLoopback(t, "hello from the host")
	root := t.TempDir()
	script := fmt.Sprintf("echo \"proxy $http_proxy\"; busybox wget -q -O - http://unlisted.example.org/; echo \"unlisted: $?\"; busybox wget -Y off -q -O - http://127.0.0.1:%d/; echo \"direct: $?\"", port)
	code, out, errOut := clitest.Run(t, "", "exec", "--backend", "os", "--egress-allow", "allowed.example.org", "--root", root, "--", "sh", "-c", script)
	if code == 125 && strings.Contains(errOut, "unavailable") {
		t.Skipf("the OS sandbox is unavailable here: %s", errOut)
	}
	if code != 0 || !strings.Contains(out, "proxy http://127.0.0.1:3128") || strings.Contains(out, "unlisted: 0") ||
		strings.Contains(out, "direct: 0") || strings.Contains(out, "hello from the host") || !strings.Contains(errOut, "403") {
		t.Fatalf("exit %d, stdout %q, stderr %s; want the unlisted host refused by the proxy (403) and no direct connection", code, out, errOut)
	}
}
