package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon/cli/clitest"

	"github.com/paigasus/helikon/cli"
)

// TestProxyCommand runs `helikon proxy` as a real process (this test binary
// re-executed), checks that it enforces its flags, and stops it with
// SIGTERM.
func TestProxyCommand(t *testing.T) {
	if os.Getenv("HELIKON_TEST_PROXY_CHILD") == "1" {
		env := &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
		os.Exit(cli.Main(context.Background(), env, strings.Fields(os.Getenv("HELIKON_TEST_PROXY_ARGS"))))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestProxyCommand$")
	cmd.Env = append(os.Environ(), "HELIKON_TEST_PROXY_CHILD=1",
		"HELIKON_TEST_PROXY_ARGS=proxy --listen 127.0.0.1:0 --allow example.test --deny bad.example.test --allow-port 8443 --auth-env PROXY_AUTH",
		"PROXY_AUTH=agent:pw")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var hello struct{ Listen, Policy string }
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || json.Unmarshal([]byte(line), &hello) != nil {
		t.Fatalf("first line %q: %v", line, err)
	}
	if hello.Policy != "deny-all; allow example.test; deny bad.example.test; ports 8443" {
		t.Errorf("policy = %q", hello.Policy)
	}
	auth := "Proxy-Authorization: Basic YWdlbnQ6cHc=\r\n" // agent:pw
	for _, tt := range []struct {
		head   string
		status int
	}{
		{"CONNECT bad.example.test:8443 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 403},
		{"CONNECT example.test:443 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 403},
		{"CONNECT other.test:8443 HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 403},
		{"CONNECT example.test:8443 HTTP/1.1\r\nHost: x\r\n\r\n", 407},
		{"GET / HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n", 400},
	} {
		c, err := net.Dial("tcp", hello.Listen)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, tt.head)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		c.Close()
		if err != nil || resp.StatusCode != tt.status {
			t.Errorf("%q: %v %v, want %d", tt.head, resp, err, tt.status)
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v, want exit 0", err)
	}
}

func TestProxyCommandUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"proxy", "--allow", "not a domain"},
		{"proxy", "--allow-port", "http"},
		{"proxy", "--allow-port", "70000"},
		{"proxy", "--auth-env", "UNSET_VAR"},
		{"proxy", "stray"},
		{"proxy", "--listen", "256.0.0.1:0"},
	} {
		if code, _, _ := clitest.Run(t, "", args...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, cli.ExitUsage)
		}
	}
}
