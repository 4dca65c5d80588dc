package cli

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon/mcptools"
)

func TestMCPUsageErrors(t *testing.T) {
	root := t.TempDir()
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown tool", []string{"--tools", "Nope"}, "unknown tool"},
		{"bad mode", []string{"--mode", "yolo", "--tools", "add"}, "unknown permission mode"},
		{"bad rule", []string{"--deny", "Bash(rm", "--tools", "add"}, "invalid rule"},
		{"positional", []string{"--tools", "add", "extra"}, "unexpected arguments"},
		{"public http without token", []string{"--tools", "add", "--http", "0.0.0.0:0"}, "without a bearer token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(string) string { return "" }}
			code := Main(context.Background(), env, append([]string{"mcp", "--root", root}, tt.args...))
			if code != ExitUsage || !strings.Contains(stderr.String(), tt.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr.String(), ExitUsage, tt.want)
			}
		})
	}
}

// TestMCPServesStdioInProcess runs the command on pipes and talks to it with
// the go-sdk client.
func TestMCPServesStdioInProcess(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	env := &Env{Stdin: inR, Stdout: outW, Stderr: io.Discard}
	done := make(chan int, 1)
	go func() {
		done <- Main(context.Background(), env, []string{"mcp", "--root", t.TempDir(), "--tools", "add,lookup_spending", "--mode", "dont-ask", "--allow", "add"})
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
	if code := <-done; code != ExitOK {
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
	env := &Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: func(k string) string {
		if k == mcpTokenEnv {
			return "t0ken"
		}
		return ""
	}}
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, env, []string{"mcp", "--root", t.TempDir(), "--tools", "add", "--http", "127.0.0.1:0"})
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
	if code := <-done; code != ExitOK {
		t.Fatalf("exit %d", code)
	}
}
