package mcptools_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/internal/proctest"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/tool/mcptools"
)

// startHTTP serves srv with ServeHTTP on a loopback port and returns its URL;
// the server is stopped (and must stop cleanly) when the test ends.
func startHTTP(t testing.TB, srv *mcp.Server, opts *mcptools.HTTPOptions) string {
	t.Helper()
	o := mcptools.HTTPOptions{}
	if opts != nil {
		o = *opts
	}
	o.Addr = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan net.Addr, 1)
	served := make(chan error, 1)
	go func() { served <- mcptools.ServeHTTP(ctx, srv, &o, func(a net.Addr) { addrc <- a }) }()
	var addr net.Addr
	select {
	case addr = <-addrc:
	case err := <-served:
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Error(err)
		}
	})
	return "http://" + addr.String() + "/"
}

// rawClient speaks streamable HTTP by hand, so that a test controls each
// request and its connection.
type rawClient struct {
	t     testing.TB
	url   string
	token string
	hc    *http.Client
}

func newRawClient(t testing.TB, url, token string) *rawClient {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &rawClient{t: t, url: url, token: token, hc: &http.Client{Transport: tr}}
}

// post sends body in session sid ("" for none) and returns the response.
func (c *rawClient) post(ctx context.Context, sid, body string) (*http.Response, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		r.Header.Set("Mcp-Session-Id", sid)
		r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	if c.token != "" {
		r.Header.Set("Authorization", "Bearer "+c.token)
	}
	return c.hc.Do(r)
}

// tryOpen sends an initialize and returns the answer and the new session's
// ID.
func (c *rawClient) tryOpen() (status int, body, sid string) {
	c.t.Helper()
	resp, err := c.post(context.Background(), "", initializeBody)
	if err != nil {
		c.t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b), resp.Header.Get("Mcp-Session-Id")
}

// open initializes a session and returns its ID.
func (c *rawClient) open() string {
	c.t.Helper()
	status, body, sid := c.tryOpen()
	if status != http.StatusOK || sid == "" {
		c.t.Fatalf("initialize: %d %q (session %q)", status, body, sid)
	}
	resp, err := c.post(context.Background(), sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		c.t.Fatalf("notifications/initialized: %d", resp.StatusCode)
	}
	return sid
}

// delete ends session sid.
func (c *rawClient) delete(sid string) int {
	c.t.Helper()
	r, _ := http.NewRequest(http.MethodDelete, c.url, nil)
	r.Header.Set("Mcp-Session-Id", sid)
	if c.token != "" {
		r.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(r)
	if err != nil {
		c.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// callBody is a tools/call request.
func callBody(id int, tool string, args any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	return string(b)
}

// sseResult reads the first JSON-RPC message of an SSE or JSON response.
func sseResult(t testing.TB, resp *http.Response) map[string]any {
	t.Helper()
	defer resp.Body.Close()
	var data []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = []byte(d)
				break
			}
		}
	} else {
		data, _ = io.ReadAll(resp.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("response %q: %v", data, err)
	}
	return m
}

// sleeperCommand is a Bash command that writes its shell's pid to pidFile
// and then runs a sleep identified by arg.
func sleeperCommand(t testing.TB, pidFile string) (cmd, arg string) {
	sleep, arg := uniqueSleep(t)
	return fmt.Sprintf("echo $$ > %s; %s; echo done", pidFile, sleep), arg
}

// readPid waits for pidFile and returns the pid written in it.
func readPid(t testing.TB, pidFile string) int {
	t.Helper()
	var pid int
	proctest.WaitFor(t, "the command writes its pid", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil || !bytes.HasSuffix(b, []byte("\n")) {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

// alive reports whether pid is a live process (a zombie is dead).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// bashServer is a server with the real Bash tool in root, on the host
// backend with a timeout far longer than any wait of these tests: a command
// that is not killed outlives the test.
func bashServer(t testing.TB, root string) *mcp.Server {
	t.Helper()
	b, err := host.New(root, &host.Options{Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	bash, err := bashtool.New[app](b, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcptools.NewServer(helikon.MustToolset[app](bash), nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// startSleeper starts a Bash call in session sid of c with ctx and waits for
// its shell and sleep to run. It returns the shell's pid, the sleep's
// argument and a channel that receives the call's response (or error).
func startSleeper(t *testing.T, c *rawClient, ctx context.Context, sid, root string) (pid int, arg string, done <-chan error) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: cannot observe the command's processes")
	}
	pidFile := filepath.Join(root, "pid")
	cmd, arg := sleeperCommand(t, pidFile)
	errc := make(chan error, 1)
	go func() {
		resp, err := c.post(ctx, sid, callBody(7, "Bash", map[string]any{"command": cmd}))
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	pid = readPid(t, pidFile)
	t.Cleanup(func() {
		// Leave nothing behind when the test fails.
		for _, p := range append(sleepers(arg), pid) {
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
	proctest.WaitFor(t, "the sleep runs", func() bool { return len(sleepers(arg)) > 0 })
	return pid, arg, errc
}

// waitGone waits until the shell and its sleep are both gone.
func waitGone(t *testing.T, pid int, arg string) {
	t.Helper()
	proctest.WaitFor(t, "the command's processes are gone", func() bool { return !alive(pid) && len(sleepers(arg)) == 0 })
}

func TestHTTPDroppedConnectionKillsTheCommand(t *testing.T) {
	root := t.TempDir()
	url := startHTTP(t, bashServer(t, root), nil)
	c := newRawClient(t, url, "")
	sid := c.open()
	ctx, drop := context.WithCancel(context.Background())
	pid, arg, done := startSleeper(t, c, ctx, sid, root)
	drop()
	<-done
	waitGone(t, pid, arg)
}

func TestHTTPDeletedSessionKillsTheCommand(t *testing.T) {
	root := t.TempDir()
	url := startHTTP(t, bashServer(t, root), nil)
	c := newRawClient(t, url, "")
	sid := c.open()
	pid, arg, done := startSleeper(t, c, context.Background(), sid, root)
	deleted := make(chan int, 1)
	go func() { deleted <- c.delete(sid) }() // it returns once the call has ended
	waitGone(t, pid, arg)
	if code := <-deleted; code != http.StatusNoContent {
		t.Fatalf("DELETE: %d", code)
	}
	if err := <-done; err != nil {
		t.Fatalf("the call's POST: %v", err)
	}
}

func liveSessions(srv *mcp.Server) int {
	n := 0
	for range srv.Sessions() {
		n++
	}
	return n
}

// TestHTTPSessionCapHolds: of many clients opening sessions at once, exactly
// the cap get one; the others are told what to do; a closed session frees
// its slot.
func TestHTTPSessionCapHolds(t *testing.T) {
	const max = 8
	srv, err := mcptools.NewServer(helikon.MustToolset(newKit(t).tools...), nil)
	if err != nil {
		t.Fatal(err)
	}
	url := startHTTP(t, srv, &mcptools.HTTPOptions{MaxSessions: max, SessionTimeout: -1})
	c := newRawClient(t, url, "")
	type answer struct {
		status   int
		body, id string
	}
	answers := make(chan answer, 3*max)
	for range 3 * max {
		go func() {
			status, body, sid := c.tryOpen()
			answers <- answer{status, body, sid}
		}()
	}
	var opened []string
	for range 3 * max {
		a := <-answers
		switch a.status {
		case http.StatusOK:
			opened = append(opened, a.id)
		case http.StatusServiceUnavailable:
			var e struct {
				ID    int
				Error struct {
					Code    int
					Message string
				}
			}
			if json.Unmarshal([]byte(a.body), &e) != nil || e.ID != 1 || !strings.Contains(e.Error.Message, "too many MCP sessions") ||
				!strings.Contains(e.Error.Message, "DELETE") || !strings.Contains(e.Error.Message, "--http-max-sessions") {
				t.Errorf("refusal %q", a.body)
			}
		default:
			t.Errorf("initialize: %d %q", a.status, a.body)
		}
	}
	if len(opened) != max || liveSessions(srv) != max {
		t.Fatalf("%d sessions opened, %d live; want the cap, %d", len(opened), liveSessions(srv), max)
	}
	// The helikon client reports the refusal.
	_, err = mcptools.Connect[app](context.Background(), mcptools.HTTP(url, nil), nil)
	if err == nil || !strings.Contains(err.Error(), "too many MCP sessions") {
		t.Errorf("connecting beyond the cap: %v", err)
	}
	for _, sid := range opened[:2] {
		if code := c.delete(sid); code != http.StatusNoContent {
			t.Fatalf("DELETE: %d", code)
		}
	}
	proctest.WaitFor(t, "the deleted sessions free their slots", func() bool {
		status, _, sid := c.tryOpen()
		if status == http.StatusOK {
			opened = append(opened, sid)
		}
		return len(opened) == max+2
	})
	if status, body, _ := c.tryOpen(); status != http.StatusServiceUnavailable {
		t.Fatalf("beyond the cap again: %d %q", status, body)
	}
}

// TestHTTPAbandonedSessionsAreReclaimed opens sessions and abandons them,
// round after round, each round as many as the cap allows: without idle
// expiry (and the slot given back) the second round would be refused.
func TestHTTPAbandonedSessionsAreReclaimed(t *testing.T) {
	const max, rounds = 10, 5
	srv, err := mcptools.NewServer(helikon.MustToolset(newKit(t).tools...), nil)
	if err != nil {
		t.Fatal(err)
	}
	// Long enough that a loaded machine still sends initialized before the
	// session expires; short enough to keep the test quick.
	url := startHTTP(t, srv, &mcptools.HTTPOptions{MaxSessions: max, SessionTimeout: 500 * time.Millisecond})
	for round := range rounds {
		c := newRawClient(t, url, "")
		for range max {
			c.open() // and never closed
		}
		// The client vanishes with its connections.
		c.hc.Transport.(*http.Transport).CloseIdleConnections()
		proctest.WaitFor(t, fmt.Sprintf("round %d's sessions are reclaimed", round), func() bool { return liveSessions(srv) == 0 })
	}
	// Reclaimed in the handler's count too, not only in the server's.
	c := newRawClient(t, url, "")
	proctest.WaitFor(t, "every slot is free", func() bool {
		status, _, _ := c.tryOpen()
		return status == http.StatusOK
	})
}
