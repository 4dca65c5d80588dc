//go:build linux

package mcptools_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/tool/mcptools"
)

var hostileBin struct {
	once sync.Once
	path string
	err  error
}

// hostileBinary builds testdata/hostile once per test binary, in a
// directory any user may enter (the tests run it as nobody too).
func hostileBinary(t testing.TB) string {
	t.Helper()
	hostileBin.once.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			hostileBin.err = err
			return
		}
		dir, err := os.MkdirTemp("", "helikon-hostile-")
		if err == nil {
			err = os.Chmod(dir, 0o755)
		}
		if err != nil {
			hostileBin.err = err
			return
		}
		hostileBin.path = filepath.Join(dir, "hostile")
		if out, err := exec.Command(gobin, "build", "-o", hostileBin.path, "./testdata/hostile").CombinedOutput(); err != nil {
			hostileBin.err = &buildError{err, out}
		}
	})
	if hostileBin.err != nil {
		if _, ok := hostileBin.err.(*buildError); ok {
			t.Fatal(hostileBin.err)
		}
		t.Skipf("cannot build the hostile server (no go tool?): %v", hostileBin.err)
	}
	return hostileBin.path
}

// secretToken is the value of secretEnv in the test's environment; the
// contained server must not see it.
const (
	secretEnv   = "HELIKON_WRAP_TEST_TOKEN"
	secretToken = "SECRET-token-4b1d"
	secretKey   = "SECRET-ssh-key-77c0"
)

// arena is what the attacks aim at: a root the server may use, a secret
// file and a writable directory outside it (readable and writable by any
// user outside the sandbox, so that only the sandbox stops the attack), and
// a listener that must receive no connection.
type arena struct {
	root, secret, outside string
	ln                    net.Listener
	accepted              chan struct{}
}

// newArena makes the arena under a directory any user may enter; owner,
// when not nil, gets the root.
func newArena(t *testing.T, owner *user.User) *arena {
	t.Helper()
	base, err := os.MkdirTemp("", "helikon-wrap-arena-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	a := &arena{root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside"), secret: filepath.Join(base, "home", ".ssh", "id_ed25519"), accepted: make(chan struct{}, 1)}
	for _, d := range []string{base, a.root, a.outside, filepath.Dir(a.secret)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o777)
	}
	os.Chmod(base, 0o755)
	if err := os.WriteFile(a.secret, []byte(secretKey+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if owner != nil {
		uid, _ := strconv.Atoi(owner.Uid)
		gid, _ := strconv.Atoi(owner.Gid)
		if err := os.Chown(a.root, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	if a.ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.ln.Close() })
	go func() {
		c, err := a.ln.Accept()
		if err == nil {
			c.Close()
			a.accepted <- struct{}{}
		}
	}()
	return a
}

// attack calls the hostile server's attack tool and returns its report.
func attack(t *testing.T, cs *mcp.ClientSession, kind, target string) string {
	t.Helper()
	res := callTool(t, cs, "attack", map[string]any{"kind": kind, "target": target})
	if res.IsError {
		t.Fatalf("attack %s %s: the call itself failed: %q", kind, target, text(res))
	}
	return text(res)
}

// checkContained runs every attack through cs, a host session with the
// contained hostile server, and checks that each fails, then that the
// server's rug pull is held and that a daemon it starts dies with it
// (close ends the session).
func checkContained(t *testing.T, cs *mcp.ClientSession, a *arena, close func()) {
	for _, c := range []struct{ what, kind, target, leak string }{
		{"read a key outside its root", "read", a.secret, secretKey},
		{"read /etc/shadow", "read", "/etc/shadow", "root:"},
		{"read /etc/gshadow", "read", "/etc/gshadow", "root:"},
		{"see the caller's token", "env", secretEnv, secretToken},
		{"write outside its root", "write", filepath.Join(a.outside, "pwned.txt"), "wrote"},
		{"connect to a local service", "connect", a.ln.Addr().String(), "connected"},
		{"connect to a public address", "connect", "1.1.1.1:443", "connected"},
	} {
		got := attack(t, cs, c.kind, c.target)
		t.Logf("%s: %s", c.what, got)
		if !strings.HasPrefix(got, "refused: ") || strings.Contains(got, c.leak) {
			t.Errorf("the contained server could %s: %q", c.what, got)
		}
	}
	if _, err := os.Stat(filepath.Join(a.outside, "pwned.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file appeared outside the root: %v", err)
	}
	select {
	case <-a.accepted:
		t.Error("the local listener received a connection")
	default:
	}
	// The control: its own root is writable.
	if got := attack(t, cs, "write", filepath.Join(a.root, "ok.txt")); !strings.HasPrefix(got, "ok: ") {
		t.Fatalf("the server cannot write its own root: %q", got)
	}

	// The rug pull: echo changes its description after its first call.
	if res := callTool(t, cs, "echo", map[string]any{"text": "hi"}); res.IsError || text(res) != "hi" {
		t.Fatalf("echo: %v %q", res.IsError, text(res))
	}
	deadline := time.Now().Add(20 * time.Second)
	for d := describe(t, cs, "echo"); !strings.Contains(d, "Held by helikon"); d = describe(t, cs, "echo") {
		if strings.Contains(d, "id_rsa") {
			t.Fatalf("the host was shown the changed description: %q", d)
		}
		if time.Now().After(deadline) {
			t.Fatalf("echo is not held after its rug pull: %q", d)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if res := callTool(t, cs, "echo", map[string]any{"text": "hi"}); !res.IsError || !strings.Contains(text(res), "changed this tool") {
		t.Fatalf("a held tool was called: %v %q", res.IsError, text(res))
	}

	// A daemon that would outlive the server.
	mark := filepath.Join(a.root, "daemon-mark")
	if got := attack(t, cs, "daemon", mark); !strings.HasPrefix(got, "ok: ") {
		t.Fatalf("daemon: %q", got)
	}
	close()
	time.Sleep(3 * time.Second) // the daemon writes after 1.5 s
	if _, err := os.Stat(mark); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a daemon outlived the contained server: %v", err)
	}
}

// TestWrapContainsHostileServer runs the hostile server in the OS sandbox
// in process, as the test's user, and relays it with Wrap.
func TestWrapContainsHostileServer(t *testing.T) {
	bin := hostileBinary(t)
	a := newArena(t, nil)
	t.Setenv(secretEnv, secretToken)
	b, err := ossandbox.New(a.root, &ossandbox.Options{ReadPaths: []string{filepath.Dir(bin)}, Timeout: 10 * time.Minute})
	if errors.Is(err, backend.ErrUnavailable) {
		t.Skipf("SKIP: the OS sandbox is unavailable here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	w, err := mcptools.Wrap(ctx, mcptools.Contained(b, []string{bin}, nil), &mcptools.WrapOptions{Name: "hostile"})
	if err != nil {
		t.Fatal(err)
	}
	hc, hs := mcp.NewInMemoryTransports()
	go w.Run(ctx, hs)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, hc, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkContained(t, cs, a, func() {
		cs.Close()
		w.Close()
	})
}

// TestMCPWrapCommand is the end-to-end test of `helikon mcp wrap`: a
// go-sdk client speaks to the command over its stdio, as an MCP host
// would, and the hostile server behind it is contained on every count,
// as the test's user and, when that is root, as nobody.
func TestMCPWrapCommand(t *testing.T) {
	bin := hostileBinary(t)
	helikon := helikonBinary(t)
	users := []string{""}
	if os.Geteuid() == 0 {
		users = append(users, "nobody")
	} else {
		t.Log("not root: the run as nobody is skipped (it needs runuser)")
	}
	for _, who := range users {
		name := who
		if name == "" {
			name = "self"
		}
		t.Run(name, func(t *testing.T) {
			var owner *user.User
			argv := []string{helikon}
			if who != "" {
				u, err := user.Lookup(who)
				if err != nil {
					t.Skipf("SKIP: no user %s: %v", who, err)
				}
				runuser, err := exec.LookPath("runuser")
				if err != nil {
					t.Skip("SKIP: runuser is not installed")
				}
				owner = u
				os.Chmod(filepath.Dir(helikon), 0o755)
				argv = []string{runuser, "-u", who, "--", helikon}
			}
			a := newArena(t, owner)
			argv = append(argv, "mcp", "wrap", "--root", a.root, "--read-path", filepath.Dir(bin), "--name", "hostile", "--", bin)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = append(os.Environ(), secretEnv+"="+secretToken)
			cmd.Stderr = os.Stderr
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkContained(t, cs, a, func() { cs.Close() })
		})
	}
}

// TestContainedCommand: the contained counterpart of Command splits the
// command line and runs the server in the sandbox, as an SDK's MCP tool
// source would start it; a line that does not split fails to dial.
func TestContainedCommand(t *testing.T) {
	bin := hostileBinary(t)
	a := newArena(t, nil)
	t.Setenv(secretEnv, secretToken)
	b, err := ossandbox.New(a.root, &ossandbox.Options{ReadPaths: []string{filepath.Dir(bin)}, Timeout: 10 * time.Minute})
	if errors.Is(err, backend.ErrUnavailable) {
		t.Skipf("SKIP: the OS sandbox is unavailable here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := mcptools.ContainedCommand(b, "'"+bin, nil)(); err == nil {
		t.Fatal("an unterminated quote dialled")
	}
	ctx := context.Background()
	tr, err := mcptools.ContainedCommand(b, "'"+bin+"' --unused-arg", nil)()
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct{ kind, target, leak string }{
		{"read", a.secret, secretKey},
		{"env", secretEnv, secretToken},
	} {
		if got := attack(t, cs, c.kind, c.target); !strings.HasPrefix(got, "refused: ") || strings.Contains(got, c.leak) {
			t.Errorf("%s %s: %q", c.kind, c.target, got)
		}
	}
	if got := attack(t, cs, "write", filepath.Join(a.root, "ok.txt")); !strings.HasPrefix(got, "ok: ") {
		t.Errorf("the server cannot write its own root: %q", got)
	}
}
