package agentcli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon/cli"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon/internal/proctest"
	"github.com/paigasus/helikon/tool/mcptools"
)

func TestMCPUsageErrors(t *testing.T) {
	root := t.TempDir()
	swapped := filepath.Join(t.TempDir(), "tenants")
	// Columns swapped: the token stands where a name goes, and must not be shown.
	if err := os.WriteFile(swapped, []byte("s3cret+token/0123456789== payments\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"tenants file missing", []string{"--tools", "add", "--http", "127.0.0.1:0", "--http-tenants", filepath.Join(root, "none")}, "--http-tenants"},
		{"tenants file swapped", []string{"--tools", "add", "--http", "0.0.0.0:0", "--http-tenants", swapped}, "tenant 1: the name is not"},
		{"unknown tool", []string{"--tools", "Nope"}, "unknown tool"},
		{"bad mode", []string{"--mode", "yolo", "--tools", "add"}, "unknown permission mode"},
		{"bad rule", []string{"--deny", "Bash(rm", "--tools", "add"}, "invalid rule"},
		{"positional", []string{"--tools", "add", "extra"}, "unexpected arguments"},
		{"public http without token", []string{"--tools", "add", "--http", "0.0.0.0:0"}, "without a bearer token"},
		{"negative session cap", []string{"--tools", "add", "--http", "127.0.0.1:0", "--http-max-sessions", "-1"}, "cannot be negative"},
		{"negative session timeout", []string{"--tools", "add", "--http", "127.0.0.1:0", "--http-session-timeout", "-1s"}, "cannot be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			env := &cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}
			code := cli.Main(context.Background(), env, append([]string{"mcp", "--root", root}, tt.args...))
			if code != cli.ExitUsage || !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr.String(), cli.ExitUsage, tt.want)
			}
			if strings.Contains(stderr.String(), "s3cret") {
				t.Errorf("stderr shows a token: %q", stderr.String())
			}
		})
	}
}

// TestMCPServesStdioInProcess runs the command on pipes and talks to it with
// the go-sdk client.
func TestMCPServesStdioInProcess(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	env := &cli.Env{Stdin: inR, Stdout: outW, Stderr: io.Discard}
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(context.Background(), env, []string{"mcp", "--root", t.TempDir(), "--tools", "add,lookup_spending", "--mode", "dont-ask", "--allow", "add"})
		outW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
	if err != nil || res.IsError {
		t.Fatalf("add (allowed): %v %+v", err, res)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "lookup_spending", Arguments: map[string]any{"category": "Dining", "month": "2026-10"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "dont-ask mode") {
		t.Fatalf("lookup_spending (no allow rule, dont-ask): %v %+v", err, res)
	}
	cs.Close()
	if code := <-done; code != cli.ExitOK {
		t.Fatalf("exit %d after the client closed", code)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMCPServesHTTPWithToken serves over HTTP on loopback with the token
// from the environment.
func TestMCPServesHTTPWithToken(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(k string) string {
		if k == mcpTokenEnv {
			return "t0ken"
		}
		return ""
	}}
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, env, []string{"mcp", "--root", t.TempDir(), "--tools", "add", "--http", "127.0.0.1:0"})
	}()
	addrRE := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/)`)
	var url string
	for url == "" {
		select {
		case code := <-done:
			t.Fatalf("exited %d: %s", code, stderr.String())
		default:
		}
		if m := addrRE.FindStringSubmatch(stderr.String()); m != nil {
			url = m[1]
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := mcptools.Connect[App](ctx, mcptools.HTTP(url, &mcptools.HTTPClientOptions{Token: "wrong"}), nil); err == nil {
		t.Fatal("connected with a wrong token")
	}
	src, err := mcptools.Connect[App](ctx, mcptools.HTTP(url, &mcptools.HTTPClientOptions{Token: "t0ken"}), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := src.Tools(ctx)
	if err != nil || len(tools) != 1 || tools[0].Name() != "add" {
		t.Fatalf("tools %v %v", tools, err)
	}
	src.Close()
	cancel()
	if code := <-done; code != cli.ExitOK {
		t.Fatalf("exit %d", code)
	}
}

// TestMCPHTTPSIGTERMStopsRunningCommands runs `helikon mcp --http` as a real
// process (this test binary re-executed) with a cap of one session, checks
// that a second client is told about the cap, starts a Bash command that
// would run for an hour, and stops the server with SIGTERM: it exits 0 and
// the command's processes are gone.
func TestMCPHTTPSIGTERMStopsRunningCommands(t *testing.T) {
	if os.Getenv("HELIKON_TEST_MCP_CHILD") == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		env := &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
		os.Exit(cli.Main(ctx, env, strings.Fields(os.Getenv("HELIKON_TEST_MCP_ARGS"))))
	}
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc: cannot observe the command's processes")
	}
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMCPHTTPSIGTERMStopsRunningCommands$")
	cmd.Env = append(os.Environ(), "HELIKON_TEST_MCP_CHILD=1",
		"HELIKON_TEST_MCP_ARGS=mcp --root "+root+" --tools Bash --backend host --timeout 1h --mode accept-edits --http 127.0.0.1:0 --http-max-sessions 1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addrRE := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/)`)
	var url string
	sc := bufio.NewScanner(stderr)
	for url == "" && sc.Scan() {
		if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatal("the server printed no address")
	}
	go io.Copy(io.Discard, stderr)

	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := mcptools.Connect[App](ctx, mcptools.HTTP(url, nil), nil); err == nil || !strings.Contains(err.Error(), "too many MCP sessions") {
		t.Errorf("a second session beyond --http-max-sessions 1: %v", err)
	}

	pidFile := filepath.Join(root, "pid")
	sleepArg := fmt.Sprintf("%d.%d", 3000+os.Getpid()%1000, time.Now().UnixNano()%1_000_000)
	called := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": "echo $$ > " + pidFile + "; sleep " + sleepArg + "; echo done"}})
		called <- err
	}()
	proctest.WaitFor(t, "the command runs", func() bool {
		_, err := os.Stat(pidFile)
		return err == nil && len(proctest.PidsWith("sleep "+sleepArg)) > 0
	})
	t.Cleanup(func() {
		for _, p := range append(proctest.PidsWith("sleep "+sleepArg), proctest.PidsWith(pidFile)...) {
			var pid int
			fmt.Sscan(p, &pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v, want exit 0", err)
	}
	proctest.WaitFor(t, "the command's processes are gone", func() bool {
		return len(proctest.PidsWith("sleep "+sleepArg)) == 0 && len(proctest.PidsWith(pidFile)) == 0
	})
	<-called
}
