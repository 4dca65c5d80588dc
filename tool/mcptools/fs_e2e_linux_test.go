package mcptools_test

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// filesystemServer is the entry point of @modelcontextprotocol/server-filesystem
// installed next to the TypeScript SDK (see npmDir), or "" when it is not.
func filesystemServer(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(npmDir())
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("SKIP: @modelcontextprotocol/server-filesystem is not installed in %s/node_modules; run `npm install --prefix tool/mcptools/testdata --no-save @modelcontextprotocol/sdk@1.32.2 @modelcontextprotocol/server-filesystem@2026.8.31`", dir)
	}
	return p
}

// TestTypeScriptSDKUsesWrappedFilesystemServer is the done-when test of
// contained MCP servers: the official TypeScript SDK client talks to the
// official filesystem server through `helikon mcp wrap` and can use exactly
// the directory it was given. The server is told it may also use a
// directory outside helikon's root; the sandbox refuses that directory
// (the server's own check would let it through). The client cannot ask its
// user: a call an ask rule catches is refused with the rule to add, a denied
// one refused, and neither reaches the server. As the test's user and,
// when that is root, as nobody.
func TestTypeScriptSDKUsesWrappedFilesystemServer(t *testing.T) {
	server := filesystemServer(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("SKIP: node is not installed")
	}
	helikon := helikonBinary(t)
	users := []string{""}
	if os.Geteuid() == 0 {
		users = append(users, "nobody")
	}
	for _, who := range users {
		name := who
		if name == "" {
			name = "self"
		}
		t.Run(name, func(t *testing.T) {
			base, err := os.MkdirTemp("", "helikon-fs-e2e-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			os.Chmod(base, 0o755)
			root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
			for _, d := range []string{root, outside} {
				if err := os.Mkdir(d, 0o777); err != nil {
					t.Fatal(err)
				}
				os.Chmod(d, 0o777) // only the sandbox keeps the server out of outside
			}
			if err := os.WriteFile(filepath.Join(root, "in.txt"), []byte("inside-42"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("outside-secret-99"), 0o644); err != nil {
				t.Fatal(err)
			}
			command, args := helikon, []string{}
			if who != "" {
				u, err := user.Lookup(who)
				if err != nil {
					t.Skipf("SKIP: no user %s: %v", who, err)
				}
				runuser, err := exec.LookPath("runuser")
				if err != nil {
					t.Skip("SKIP: runuser is not installed")
				}
				uid, _ := strconv.Atoi(u.Uid)
				gid, _ := strconv.Atoi(u.Gid)
				if err := os.Chown(root, uid, gid); err != nil {
					t.Fatal(err)
				}
				os.Chmod(filepath.Dir(helikon), 0o755)
				command, args = runuser, []string{"-u", who, "--", helikon}
			}
			modules := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(server)))) // …/node_modules
			args = append(args, "mcp", "wrap", "--root", root, "--read-path", modules, "--name", "fs", "--ask", "mcp__fs__move_file", "--deny", "mcp__fs__create_directory", "--", node, server, root, outside)
			out := runE2ECommand(t, "", []e2eCall{
				{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(root, "in.txt")}},
				{Name: "write_file", Arguments: map[string]any{"path": filepath.Join(root, "new.txt"), "content": "written-7"}},
				{Name: "list_directory", Arguments: map[string]any{"path": root}},
				{Name: "read_text_file", Arguments: map[string]any{"path": filepath.Join(outside, "secret.txt")}},
				{Name: "write_file", Arguments: map[string]any{"path": filepath.Join(outside, "planted.txt"), "content": "x"}},
				{Name: "read_text_file", Arguments: map[string]any{"path": "/etc/passwd"}},
				// The permission pipeline: the client cannot ask its user.
				{Name: "move_file", Arguments: map[string]any{"source": filepath.Join(root, "in.txt"), "destination": filepath.Join(root, "moved.txt")}},
				{Name: "create_directory", Arguments: map[string]any{"path": filepath.Join(root, "sub")}},
			}, command, args...)
			for i := range out.Calls {
				if c := out.Calls[i]; c.Result != nil {
					t.Logf("call %d: isError=%v %+v", i, c.Result.IsError, c.Result.Content)
				}
			}
			result := func(i int) (string, bool) {
				c := out.Calls[i]
				if c.Result == nil {
					return c.Error, true
				}
				var b strings.Builder
				for _, x := range c.Result.Content {
					b.WriteString(x.Text)
				}
				return b.String(), c.Result.IsError
			}
			for i, want := range []string{"inside-42", "", "in.txt"} {
				if got, isErr := result(i); isErr || !strings.Contains(got, want) {
					t.Errorf("call %d inside the directory: isError=%v %q, want %q", i, isErr, got, want)
				}
			}
			if b, err := os.ReadFile(filepath.Join(root, "new.txt")); err != nil || string(b) != "written-7" {
				t.Errorf("the write inside the directory: %q %v", b, err)
			}
			for i := 3; i < 6; i++ {
				if got, isErr := result(i); !isErr || strings.Contains(got, "outside-secret-99") || strings.Contains(got, "root:x:0") {
					t.Errorf("call %d outside the directory was not refused: isError=%v %q", i, isErr, got)
				}
			}
			if got, isErr := result(6); !isErr || !strings.Contains(got, "--allow mcp__fs__move_file") {
				t.Errorf("an asked call the client cannot ask about: isError=%v %q, want the rule to add", isErr, got)
			}
			if got, isErr := result(7); !isErr || !strings.Contains(got, "denied by rule mcp__fs__create_directory") {
				t.Errorf("a denied call: isError=%v %q", isErr, got)
			}
			for _, p := range []string{"moved.txt", "sub"} {
				if _, err := os.Stat(filepath.Join(root, p)); err == nil {
					t.Errorf("%s exists: a refused call reached the server", p)
				}
			}
			if _, err := os.Stat(filepath.Join(outside, "planted.txt")); err == nil {
				t.Error("the server wrote outside the directory it was given")
			}
		})
	}
}
