package agentcli_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/paigasus/helikon/agent"
	"github.com/paigasus/helikon/model"
	"github.com/paigasus/helikon/provider/openai/openaitest"
)

// testBinDirEnv names a directory holding helikon and helikon-agent built
// beforehand: a test binary run as a user without the Go toolchain (CI's
// unprivileged steps) uses them instead of building.
const testBinDirEnv = "HELIKON_TEST_BINDIR"

// buildHelikon builds the helikon and helikon-agent binaries into one
// directory for tests that need a real process, and returns the path of
// helikon, which executes helikon-agent for the agent commands.
func buildHelikon(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv(testBinDirEnv); dir != "" {
		return filepath.Join(dir, "helikon")
	}
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "github.com/paigasus/helikon/cmd/helikon/...").CombinedOutput(); err != nil {
		t.Fatalf("building helikon: %v\n%s", err, out)
	}
	return filepath.Join(dir, "helikon")
}

func TestRunUsesToolsOfAnMCPServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helikon binary; skipped with -short")
	}
	bin := buildHelikon(t)
	dir := t.TempDir()
	srv := openaitest.NewServer(
		openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "srv_Read", Args: `{"path":"n.txt"}`}}},
		openaitest.Reply{Text: "24.49"},
	)
	defer srv.Close()
	if err := os.WriteFile(filepath.Join(dir, "n.txt"), []byte("24.49\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mcp := bin + " mcp --root " + dir + " --backend host --tools Read"
	code, stdout, stderr := runAgentCLI(t, runEnv{vars: openaiEnv(t, srv)}, "--root", dir, "--backend", "host", "--json",
		"--mcp", mcp, "--read-path", filepath.Dir(bin), "--mcp-prefix", "srv_", "read n.txt")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	var result *model.ToolResult
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var ev agent.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		if ev.Kind == agent.EventToolResult {
			result = ev.ToolResult
		}
	}
	if result == nil || result.IsError || !strings.Contains(result.Content, `24.49\n`) {
		t.Fatalf("tool result of the MCP tool: %+v", result)
	}
	// A clash between a server's tool and a built-in one is refused before the run.
	clash := bin + " mcp --root " + dir + " --backend host --tools Read"
	code, _, stderr = runAgentCLI(t, runEnv{vars: openaiEnv(t, srv)}, "--root", dir, "--backend", "host", "--mcp", clash, "--mcp-unsandboxed", "read")
	if code != 125 || !strings.Contains(stderr, "Read") {
		t.Errorf("clash: exit %d, stderr %s", code, stderr)
	}
}

func TestRunExportsTracesWhenConfigured(t *testing.T) {
	// The base URL may end in a slash, as people write it.
	for _, suffix := range []string{"", "/"} {
		t.Run("endpoint"+suffix, func(t *testing.T) { testRunExportsTraces(t, suffix) })
	}
}

func testRunExportsTraces(t *testing.T, suffix string) {
	var posts atomic.Int32
	var body atomic.Int64
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" {
			n, _ := io.Copy(io.Discard, r.Body)
			body.Add(n)
			posts.Add(1)
		}
	}))
	defer collector.Close()
	srv := openaitest.NewServer(openaitest.Reply{Text: "hello"})
	defer srv.Close()
	vars := openaiEnv(t, srv)
	vars["OTEL_EXPORTER_OTLP_ENDPOINT"] = collector.URL + suffix
	code, stdout, stderr := runAgentCLI(t, runEnv{vars: vars}, "--root", t.TempDir(), "--backend", "host", "say hello")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if posts.Load() == 0 || body.Load() == 0 {
		t.Errorf("no spans exported to the collector (%d posts, %d bytes)", posts.Load(), body.Load())
	}
}

// copyHelikon copies the binaries next to bin into dir, and returns the
// path of the copy of helikon.
func copyHelikon(t *testing.T, bin, dir string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"helikon", "helikon-agent"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(bin), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "helikon")
}

// TestRunContainsMCPServers: helikon run starts an --mcp server in the OS
// sandbox over its root: the server's tools work there, and a server that
// reaches for a file outside the root does not get it, unless
// --mcp-unsandboxed says to trust it. In process as the test's user and,
// when that is root, as a whole helikon process run as nobody.
func TestRunContainsMCPServers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helikon binary; skipped with -short")
	}
	osSandboxAvailable(t, t.TempDir())
	built := buildHelikon(t)
	users := []string{""}
	if os.Geteuid() == 0 {
		users = append(users, "nobody")
	}
	for _, who := range users {
		uname := who
		if uname == "" {
			uname = "self"
		}
		t.Run(uname, func(t *testing.T) { testRunContainsMCPServers(t, built, who) })
	}
}

func testRunContainsMCPServers(t *testing.T, built, who string) {
	var runuser string
	uid, gid := -1, -1
	if who != "" {
		u, err := user.Lookup(who)
		if err != nil {
			t.Skipf("SKIP: no user %s: %v", who, err)
		}
		if runuser, err = exec.LookPath("runuser"); err != nil {
			t.Skip("SKIP: runuser is not installed")
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
	}
	// A base any user may enter: the outside directory and its secret are
	// readable by anyone, so that only the sandbox keeps the server out.
	base, err := os.MkdirTemp("", "helikon-run-mcp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o755)
	secret := "s3cr3t-outside-the-root"
	if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name        string
		serverRoot  string // "" is the run's root
		file        string
		unsandboxed bool
		want        string // in the tool result; "" means the run must not see the secret
	}{
		{name: "contained, its root", file: "n.txt", want: "24.49"},
		{name: "contained, outside its root", serverRoot: outside, file: "secret.txt"},
		{name: "unsandboxed, outside its root", serverRoot: outside, file: "secret.txt", unsandboxed: true, want: secret},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(base, "root"+strconv.Itoa(i))
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "n.txt"), []byte("24.49\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			bin := copyHelikon(t, built, filepath.Join(dir, "bin"))
			state := filepath.Join(base, "state"+strconv.Itoa(i))
			os.Mkdir(state, 0o755)
			if uid >= 0 {
				for _, d := range []string{dir, state} {
					if err := os.Chown(d, uid, gid); err != nil {
						t.Fatal(err)
					}
				}
			}
			srvRoot := dir
			if tc.serverRoot != "" {
				srvRoot = tc.serverRoot
			}
			llm := openaitest.NewServer(
				openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: "c1", Name: "srv_Read", Args: `{"path":"` + tc.file + `"}`}}},
				openaitest.Reply{Text: "done"},
			)
			defer llm.Close()
			args := []string{"--root", dir, "--backend", "host", "--json", "--mcp", bin + " mcp --root " + srvRoot + " --backend host --tools Read", "--mcp-prefix", "srv_"}
			if tc.unsandboxed {
				args = append(args, "--mcp-unsandboxed")
			}
			args = append(args, "read it")
			vars := openaiEnv(t, llm)
			vars["HELIKON_SESSION_DB"] = filepath.Join(state, "sessions.db")
			var code int
			var stdout, stderr string
			if runuser == "" {
				code, stdout, stderr = runAgentCLI(t, runEnv{vars: vars}, args...)
			} else {
				argv := []string{"-u", who, "--", "env", "-i", "PATH=/usr/bin:/bin", "HOME=" + state, "TMPDIR=" + state}
				for k, v := range vars {
					argv = append(argv, k+"="+v)
				}
				argv = append(append(argv, bin, "run"), args...)
				var so, se strings.Builder
				cmd := exec.Command(runuser, argv...)
				cmd.Stdout, cmd.Stderr = &so, &se
				err := cmd.Run()
				code = cmd.ProcessState.ExitCode()
				if code < 0 {
					t.Fatal(err)
				}
				stdout, stderr = so.String(), se.String()
			}
			if tc.want == "" {
				if strings.Contains(stdout, secret) || strings.Contains(stderr, secret) {
					t.Fatalf("the contained server read a file outside its root (exit %d)\nstdout %s\nstderr %s", code, stdout, stderr)
				}
				return
			}
			if code != 0 || !strings.Contains(stdout, tc.want) {
				t.Fatalf("exit %d, want %q in the output\nstdout %s\nstderr %s", code, tc.want, stdout, stderr)
			}
		})
	}
}
