package agentcli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/paigasus/helikon/cli/clitest"
	"github.com/paigasus/helikon/provider/openai/openaitest"
)

// TestRunAnAgentInADockerWorkspace is issue 14's flow through helikon run:
// the agent writes a script, runs it, creates something outside the root
// in one call and uses it in the next, edits the script and reads the
// result, all in one container; the host's root (isolated mode) and /tmp
// are untouched, and the container is gone when the run ends.
func TestRunAnAgentInADockerWorkspace(t *testing.T) {
	img := dockerImage(t)
	root := t.TempDir()
	mark := fmt.Sprintf("helikon-e2e-%d", time.Now().UnixNano())
	call := func(id, name, args string) openaitest.Reply {
		return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: id, Name: name, Args: args}}}
	}
	srv := openaitest.NewServer(
		call("w", "Write", `{"path":"tool.sh","content":"echo v1 > made.txt\necho installed > /tmp/`+mark+`\n"}`),
		call("b1", "Bash", `{"command":"sh tool.sh"}`),
		call("b2", "Bash", `{"command":"cat /tmp/`+mark+` made.txt"}`),
		call("e", "Edit", `{"path":"tool.sh","old_string":"v1","new_string":"v2"}`),
		call("b3", "Bash", `{"command":"sh tool.sh"}`),
		call("r", "Read", `{"path":"made.txt"}`),
		openaitest.Reply{Text: "done"},
	)
	defer srv.Close()
	sess := fmt.Sprintf("e2e-%d", time.Now().UnixNano())
	code, stdout, stderr := runAgentCLI(t, runEnv{vars: openaiEnv(t, srv)}, "--root", root, "--backend", "docker", "--image", img,
		"--isolate", "--session", sess, "--mode", "accept-edits", "--allow", "Bash", "--json", "build it")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	// What each tool returned, as the model saw it in the last request.
	reqs := srv.Requests()
	body, _ := json.Marshal(reqs[len(reqs)-1].Body["messages"])
	var msgs []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	}
	json.Unmarshal(body, &msgs)
	var results []string
	for _, m := range msgs {
		if m.Role == "tool" {
			results = append(results, fmt.Sprint(m.Content))
		}
	}
	if len(results) != 6 {
		t.Fatalf("tool results %q, want six", results)
	}
	for i, want := range []string{`"created":true`, `"exit_code":0`, `installed\nv1\n`, `"replacements":1`, `"exit_code":0`, `"content":"v2\n"`} {
		if !strings.Contains(results[i], strings.ReplaceAll(want, "\n", `\n`)) {
			t.Errorf("result %d = %s, want it to contain %s", i, results[i], want)
		}
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("the isolated run changed the host's root: %v", entries)
	}
	if _, err := os.Stat("/tmp/" + mark); err == nil {
		t.Error("what the agent installed in the container's /tmp is on the host")
	}
	code, out, _ := clitest.Run(t, "", "workspaces", "list", "--backend", "docker", "--session", sess)
	if code != 0 || strings.TrimSpace(out) != "" {
		t.Errorf("the run's container outlived it: exit %d, %s", code, out)
	}
}

// TestAKilledProcessLeavesAContainerThatReapRemoves: SIGKILL skips every
// clean-up; the container carries the labels that reap finds it by.
func TestAKilledProcessLeavesAContainerThatReapRemoves(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the helikon binary; skipped with -short")
	}
	img := dockerImage(t)
	bin := buildHelikon(t)
	sess := fmt.Sprintf("killed-%d", time.Now().UnixNano())
	cmd := exec.Command(bin, "tool", "--root", t.TempDir(), "--backend", "docker", "--image", img, "--isolate", "--session", sess,
		"--allow", "Bash", "Bash", `{"command":"sleep 60"}`)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	listed := func() string {
		_, out, _ := clitest.Run(t, "", "workspaces", "list", "--backend", "docker", "--session", sess)
		return out
	}
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(listed(), `"state":"running"`) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the workspace never came up")
		}
		time.Sleep(200 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if !strings.Contains(listed(), sess) {
		t.Fatal("the killed process's container is not listed")
	}
	time.Sleep(1100 * time.Millisecond) // the created label counts seconds
	code, out, errb := clitest.Run(t, "", "workspaces", "reap", "--backend", "docker", "--session", sess, "--older-than", "1s")
	if code != 0 || !strings.Contains(out, `"removed":true`) {
		t.Fatalf("reap: exit %d\nstdout %s\nstderr %s", code, out, errb)
	}
	if strings.Contains(listed(), sess) {
		t.Fatal("reap left the container")
	}
}
