package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/provider/openai/openaitest"
	"github.com/paigasus/helikon/workspace/agentsandbox"
)

// TestRealRunWithAScriptedModel runs `helikon-k8s run --backend k8s` on the
// real cluster of HELIKON_K8S_KUBECONFIG (testdata/cluster/up.sh; skipped
// without one, failed with HELIKON_REQUIRE_K8S set), in-process and as a
// whole process: the scripted model calls Bash, Write, Edit and Read, which
// run in the claimed pod, and the claim is deleted when the run ends.
func TestRealRunWithAScriptedModel(t *testing.T) {
	kc := os.Getenv("HELIKON_K8S_KUBECONFIG")
	if kc == "" {
		if os.Getenv("HELIKON_REQUIRE_K8S") != "" {
			t.Fatal("HELIKON_REQUIRE_K8S is set and HELIKON_K8S_KUBECONFIG is not: bring a cluster up with ../../testdata/cluster/up.sh")
		}
		t.Skip("no real cluster: HELIKON_K8S_KUBECONFIG is unset")
	}
	template := os.Getenv("HELIKON_K8S_TEMPLATE")
	if template == "" {
		template = "helikon-test" // up.sh's
	}
	run := map[string]func(t *testing.T, vars map[string]string, args ...string) (int, string, string){
		"InProcess": func(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
			var out, errb bytes.Buffer
			env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return vars[k] }}
			return cli.Main(context.Background(), env, args), out.String(), errb.String()
		},
		"Process": func(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
			bin := filepath.Join(t.TempDir(), "helikon-k8s")
			if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
				t.Fatalf("go build: %v\n%s", err, out)
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			for k, v := range vars {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			code := cmd.ProcessState.ExitCode()
			if err != nil && code == 0 {
				t.Fatal(err)
			}
			return code, out.String(), errb.String()
		},
	}
	for _, name := range []string{"InProcess", "Process"} {
		t.Run(name, func(t *testing.T) {
			call := func(id, tool, args string) openaitest.Reply {
				return openaitest.Reply{ToolCalls: []openaitest.ToolCall{{ID: id, Name: tool, Args: args}}}
			}
			srv := openaitest.NewServer(
				call("c1", "Bash", `{"command":"echo from-pod > a.txt; cat /etc/hostname; pwd"}`),
				call("c2", "Write", `{"path":"b.txt","content":"hello\n"}`),
				call("c3", "Edit", `{"path":"b.txt","old_string":"hello","new_string":"bye"}`),
				call("c4", "Read", `{"path":"b.txt"}`),
				call("c5", "Bash", `{"command":"cat a.txt b.txt"}`),
				openaitest.Reply{Text: "All done."},
			)
			defer srv.Close()
			state := t.TempDir()
			vars := map[string]string{
				"HOME": state, "XDG_CONFIG_HOME": filepath.Join(state, "config"), "XDG_STATE_HOME": state,
				"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": srv.BaseURL(), "HELIKON_MODEL": "openai:gpt-test",
				"HELIKON_SESSION_DB": filepath.Join(state, "sessions.db"),
				"KUBECONFIG":         kc, "HELIKON_K8S_NAMESPACE": "default", "HELIKON_K8S_TEMPLATE": template,
			}
			code, stdout, stderr := run[name](t, vars, "run", "--backend", "k8s", "--mode", "bypass", "--json", "make the files")
			if code != 0 {
				t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 6 {
				t.Fatalf("%d model requests, want 6 (five tool calls and the answer)\nstderr %s", len(reqs), stderr)
			}
			// The tool results the model was sent back, in order.
			var results []string
			for _, m := range reqs[5].Body["messages"].([]any) {
				if msg := m.(map[string]any); msg["role"] == "tool" {
					b, _ := json.Marshal(msg["content"])
					results = append(results, string(b))
				}
			}
			if len(results) != 5 {
				t.Fatalf("tool results %q, want five", results)
			}
			// The pod's host name is its Sandbox's, which is the claim's: helikon-SESSION-RANDOM.
			host, _ := os.Hostname()
			if !strings.Contains(results[0], "helikon-") || strings.Contains(results[0], host) || !strings.Contains(results[0], "/workspace") {
				t.Errorf("Bash ran %q, want it in the claim's pod (host name helikon-…, directory /workspace)", results[0])
			}
			if !strings.Contains(results[3], "bye") || !strings.Contains(results[4], "from-pod") || !strings.Contains(results[4], "bye") {
				t.Errorf("Read gave %q and cat %q, want the file Write made and Edit changed", results[3], results[4])
			}
			e, err := agentsandbox.New(&agentsandbox.Options{Kubeconfig: kc, Namespace: "default", Template: template})
			if err != nil {
				t.Fatal(err)
			}
			list, err := e.List(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range list {
				if strings.Contains(results[0], w.ID) {
					t.Errorf("the run's claim %s outlived the run", w.ID)
				}
			}
		})
	}
}
