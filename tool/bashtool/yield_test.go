package bashtool_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/tool/bashtool"
)

// TestYieldContinuesACommandThatRunsOn: a command that ends within yield_ms
// is a result; one that runs on (blocked on its input, so that it cannot
// end within any yield) comes back with its shell_id and output so far and
// is not killed: input given afterwards reaches it, and its end is read
// through BashOutput.
func TestYieldContinuesACommandThatRunsOn(t *testing.T) {
	b, err := host.New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := process.New(t.Context(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close()
	bash, err := bashtool.New[app](b, &bashtool.Options{Processes: tab})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(bash.Description(), "yield_ms") {
		t.Errorf("description does not tell the model about yield_ms: %s", bash.Description())
	}
	input, _ := bashtool.NewInputTool[app](bash)
	outTool, _ := bashtool.NewOutputTool[app](tab)

	t.Run("ends within the yield", func(t *testing.T) {
		m, err := call(t, bash, `{"command": "echo out; echo err >&2; exit 3", "yield_ms": 60000}`)
		if err != nil {
			t.Fatal(err)
		}
		if m["stdout"] != "out\nerr\n" || m["exit_code"] != 3.0 || m["running"] != nil || m["shell_id"] != nil {
			t.Errorf("result %v; want the output, exit 3, no shell", m)
		}
	})

	t.Run("runs on", func(t *testing.T) {
		m, err := call(t, bash, `{"command": "echo first; read x; echo \"got $x\"; exit 0", "yield_ms": 200}`)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := m["shell_id"].(string)
		if id == "" || m["running"] != true || m["exit_code"] != nil {
			t.Fatalf("result %v; want a running shell without exit code", m)
		}
		got := m["stdout"].(string)
		if _, err := call(t, input, `{"shell_id": "`+id+`", "input": "go\n"}`); err != nil {
			t.Fatalf("BashInput after the yield: %v (the command was not continued)", err)
		}
		for !strings.Contains(got, "got go") {
			m, err = call(t, outTool, `{"bash_id": "`+id+`", "wait_ms": 1000}`)
			if err != nil {
				t.Fatal(err)
			}
			got += m["output"].(string)
			if m["status"] == "killed" {
				t.Fatalf("the command was killed: %v", m)
			}
			if m["status"] == "exited" && !strings.Contains(got, "got go") {
				t.Fatalf("ended without its output: %q", got)
			}
		}
		if !strings.HasPrefix(got, "first\n") {
			t.Errorf("output %q: the output before the yield was lost or repeated", got)
		}
	})

	t.Run("refused without a process table", func(t *testing.T) {
		plain, err := bashtool.New[app](b, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := call(t, plain, `{"command": "true", "yield_ms": 100}`); !errors.Is(err, helikon.ErrInvalidArgs) {
			t.Errorf("yield_ms without processes = %v, want invalid arguments", err)
		}
	})
}
