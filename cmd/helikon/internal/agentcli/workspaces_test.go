package agentcli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon/cmd/helikon/internal/cli/clitest"
	"github.com/paigasus/helikon/workspace/docker"
)

// dockerImage returns the image of the Docker tests, skipping (or, in CI,
// failing) when no daemon answers.
func dockerImage(t *testing.T) string {
	t.Helper()
	e, err := docker.New(t.Context(), &docker.Options{Isolate: true})
	if err != nil {
		if os.Getenv("HELIKON_REQUIRE_DOCKER") != "" {
			t.Fatalf("HELIKON_REQUIRE_DOCKER is set but: %v", err)
		}
		t.Skipf("no Docker daemon: %v (workspace/docker/testdata/ci-setup.sh start)", err)
	}
	e.Close()
	if img := os.Getenv("HELIKON_DOCKER_IMAGE"); img != "" {
		return img
	}
	return "helikon-test-busybox:1"
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
	} {
		code, _, errb := clitest.Run(t, "", tt.args...)
		if code != tt.code || !strings.Contains(errb, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tt.args, code, errb, tt.code, tt.want)
		}
	}
}
