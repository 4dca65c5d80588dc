package agentcli_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/cli/clitest"
	"github.com/paigasus/helikon/internal/dockertest"
	"github.com/paigasus/helikon/workspace/docker"
)

// dockerImage returns the image of the Docker tests, skipping (or, in CI,
// failing) when no daemon answers or the image is missing.
func dockerImage(t *testing.T) string {
	t.Helper()
	dockertest.Engine(t, docker.Options{Isolate: true})
	return dockertest.Image()
}

// TestDockerWorkspaceAcrossCommands: a session's container keeps its files
// from one helikon command to the next with --keep-workspace, is removed
// by the command that does not keep it, and a later --session says it is
// gone and starts afresh.
func TestDockerWorkspaceAcrossCommands(t *testing.T) {
	img := dockerImage(t)
	root := t.TempDir()
	sess := fmt.Sprintf("clitest-%d", time.Now().UnixNano())
	base := []string{"--root", root, "--backend", "docker", "--image", img, "--isolate", "--session", sess}
	tool := func(keep bool, name, args string) (int, string, string) {
		a := append([]string{"tool"}, base...)
		if keep {
			a = append(a, "--keep-workspace")
		}
		return clitest.Run(t, "", append(a, name, args)...)
	}
	t.Cleanup(func() { tool(false, "Bash", `{"command":"true"}`) })

	code, out, errb := tool(true, "Write", `{"path":"notes/a.txt","content":"kept\n"}`)
	if code != 0 || !strings.Contains(errb, "created a fresh one") || !strings.Contains(errb, "kept the docker workspace") {
		t.Fatalf("Write: exit %d\nstdout %s\nstderr %s", code, out, errb)
	}
	if _, err := os.Stat(root + "/notes/a.txt"); err == nil {
		t.Fatal("an isolated workspace's Write reached the host's root")
	}

	code, out, errb = clitest.Run(t, "", "workspaces", "list", "--backend", "docker")
	if code != 0 || !strings.Contains(out, `"session":"`+sess+`"`) {
		t.Fatalf("workspaces list: exit %d\nstdout %s\nstderr %s", code, out, errb)
	}
	code, out, _ = clitest.Run(t, "", "workspaces", "reap", "--backend", "docker", "--older-than", "1ns", "--dry-run")
	if code != 0 || !strings.Contains(out, `"session":"`+sess+`"`) || strings.Contains(out, `"removed":true`) {
		t.Fatalf("reap --dry-run: exit %d\n%s", code, out)
	}

	code, out, errb = tool(false, "Bash", `{"command":"cat notes/a.txt"}`)
	var res struct {
		Stdout   string `json:"stdout"`
		ExitCode *int   `json:"exit_code"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Stdout != "kept\n" || !strings.Contains(errb, "attached to the docker workspace") {
		t.Fatalf("Bash in the kept workspace: exit %d\nstdout %s\nstderr %s", code, out, errb)
	}

	code, out, errb = tool(false, "Bash", `{"command":"cat notes/a.txt"}`)
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.ExitCode == nil || *res.ExitCode == 0 || !strings.Contains(errb, "it is gone") {
		t.Fatalf("after the workspace was removed: exit %d\nstdout %s\nstderr %s", code, out, errb)
	}
	code, out, _ = clitest.Run(t, "", "workspaces", "list", "--backend", "docker")
	if code != 0 || strings.Contains(out, `"session":"`+sess+`"`) {
		t.Fatalf("the session's container outlived the command that did not keep it: %s", out)
	}
}

func TestWorkspaceFlagsFailClosed(t *testing.T) {
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"tool", "--backend", "docker", "Bash", `{"command":"true"}`}, 125, "needs --image"},
		{[]string{"tool", "--session", "../x", "Bash", `{"command":"true"}`}, 125, "invalid session id"},
		{[]string{"workspaces", "reap", "--backend", "docker"}, 125, "--older-than DURATION is required"},
		{[]string{"workspaces", "list", "--backend", "local"}, 125, "unknown engine"},
		{[]string{"workspaces", "frob"}, 125, ""},
		{[]string{"exec", "--backend", "docker", "--", "true"}, 125, "needs --image"},
		{[]string{"exec", "--backend", "docker", "--session", "../x", "--", "true"}, 125, "invalid session id"},
		{[]string{"exec", "--backend", "host", "--session", "s1", "--", "true"}, 125, "name a remote workspace (--backend docker, forkd)"},
		{[]string{"exec", "--backend", "local", "--keep-workspace", "--", "true"}, 125, "the local backend runs on this machine"},
	} {
		code, _, errb := clitest.Run(t, "", tt.args...)
		if code != tt.code || !strings.Contains(errb, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errb, tt.code, tt.want)
		}
	}
}

// helikon exec --backend docker runs the operator's program in the
// session's container with its standard streams and exit status; a kept
// workspace holds the files for the next exec, and one that is not kept
// is removed.
func TestExecInADockerWorkspace(t *testing.T) {
	img := dockerImage(t)
	root := t.TempDir()
	sess := fmt.Sprintf("exec-%d", time.Now().UnixNano())
	base := []string{"exec", "--root", root, "--backend", "docker", "--image", img, "--isolate"}
	t.Cleanup(func() { clitest.Run(t, "", append(base, "--session", sess, "--", "true")...) })

	code, out, errb := clitest.Run(t, "in\n", append(base, "--", "sh", "-c", "echo out; echo err >&2; cat; exit 7")...)
	if code != 7 || out != "out\nin\n" || !strings.Contains(errb, "err") || strings.Contains(errb, "created the docker workspace") {
		t.Fatalf("exec: exit %d\nstdout %q\nstderr %q; want 7, the program's streams and no notice", code, out, errb)
	}
	code, out, errb = clitest.Run(t, "", append(base, "--session", sess, "--keep-workspace", "--", "sh", "-c", "echo kept > k.txt; touch /tmp/made")...)
	if code != 0 || !strings.Contains(errb, "kept the docker workspace") {
		t.Fatalf("exec --keep-workspace: exit %d\nstdout %q\nstderr %q", code, out, errb)
	}
	if _, err := os.Stat(root + "/k.txt"); err == nil {
		t.Fatal("an isolated exec wrote the host's root")
	}
	code, out, errb = clitest.Run(t, "", append(base, "--session", sess, "--", "sh", "-c", "cat k.txt; ls /tmp/made")...)
	if code != 0 || out != "kept\n/tmp/made\n" || !strings.Contains(errb, "attached to the docker workspace") {
		t.Fatalf("exec in the kept workspace: exit %d\nstdout %q\nstderr %q", code, out, errb)
	}
	code, out, _ = clitest.Run(t, "", "workspaces", "list", "--backend", "docker", "--session", sess)
	if code != 0 || strings.TrimSpace(out) != "" {
		t.Fatalf("the workspace outlived the exec that did not keep it: exit %d, %s", code, out)
	}
}

// helikon exec -t --backend docker runs the program on the exec's
// terminal: its input is typed in (and echoed), its output comes through
// the terminal, its exit status is kept.
func TestExecOnATerminalInADockerWorkspace(t *testing.T) {
	img := dockerImage(t)
	code, out, errb := clitest.Run(t, "typed\n", "exec", "-t", "--root", t.TempDir(), "--backend", "docker", "--image", img, "--isolate", "--",
		"sh", "-c", `test -t 0 && test -t 1 && echo onatty; stty size; read x; echo "got $x" >&2; exit 6`)
	// The input is typed at once, so its echo ("typed") may come before or
	// after stty's line: each line is looked for on its own.
	if code != 6 || !strings.Contains(out, "onatty\r\n") || !strings.Contains(out, "24 80\r\n") || !strings.Contains(out, "got typed") {
		t.Fatalf("exec -t: exit %d\nstdout %q\nstderr %q; want 6 and the terminal's output", code, out, errb)
	}
}

// The helikon binary does not link the Docker client: exec --backend
// docker runs in helikon-agent, in the same process (execve), so the
// program's streams and status are the caller's.
func TestExecDockerThroughTheFrontBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helikon binaries; skipped with -short")
	}
	img := dockerImage(t)
	bin := buildHelikon(t)
	cmd := exec.Command(bin, "exec", "--root", t.TempDir(), "--backend", "docker", "--image", img, "--isolate", "--", "sh", "-c", "cat; echo err >&2; exit 3")
	cmd.Stdin = strings.NewReader("through\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 || stdout.String() != "through\n" || stderr.String() != "err\n" {
		t.Fatalf("helikon exec --backend docker: %v\nstdout %q\nstderr %q; want exit 3 and the program's streams", err, stdout.String(), stderr.String())
	}
}

// TestWorkspacesWithoutAVerbPrintsUsage: no verb, or an unknown one, is a
// usage error that shows the usage on stderr (it once went to a discarded
// buffer, leaving the user with exit 125 and nothing to read).
func TestWorkspacesWithoutAVerbPrintsUsage(t *testing.T) {
	for _, args := range [][]string{{"workspaces"}, {"workspaces", "bogus"}} {
		code, _, errb := clitest.Run(t, "", args...)
		if code != 125 || !strings.Contains(errb, "Usage: helikon workspaces") {
			t.Errorf("%q: exit %d, stderr %q; want 125 and the usage", args, code, errb)
		}
	}
}

// TestWorkspacesReapsSessionHomes: reap --backend os removes a session
// home that no live helikon holds (a crash's leftover) and prints it;
// --dry-run only prints it.
func TestWorkspacesReapsSessionHomes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("session homes are made on Linux only")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	left := filepath.Join(tmp, "helikon-home-"+strconv.Itoa(os.Geteuid()), "1-crashed")
	if err := os.MkdirAll(filepath.Join(left, ".cache"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(left), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{true, false} {
		args := []string{"workspaces", "reap", "--backend", "os"}
		if dry {
			args = append(args, "--dry-run")
		}
		code, out, errb := clitest.Run(t, "", args...)
		if code != 0 || !strings.Contains(out, `"home":"`+left+`"`) || strings.Contains(out, `"removed":true`) == dry {
			t.Fatalf("%q: exit %d, stdout %q, stderr %q; want the leftover printed, removed %v", args, code, out, errb, !dry)
		}
		if _, err := os.Stat(left); (err == nil) != dry {
			t.Errorf("%q: the leftover home: %v; want it there %v", args, err, dry)
		}
	}
}
