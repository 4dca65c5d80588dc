package bashtool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/tool/bashtool"
)

// call invokes any tool with args and decodes its JSON result.
func call(t *testing.T, tool helikon.Tool[app], args string) (map[string]any, error) {
	t.Helper()
	out, err := tool.Invoke(helikon.NewToolContext(context.Background(), app{}, nil), json.RawMessage(args))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	return m, nil
}

func TestBackgroundCommandThroughTheTools(t *testing.T) {
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
	if !strings.Contains(bash.Description(), "run_in_background") {
		t.Errorf("description does not tell the model about run_in_background: %s", bash.Description())
	}
	outTool, _ := bashtool.NewOutputTool[app](tab)
	killTool, _ := bashtool.NewKillTool[app](tab)
	listTool, _ := bashtool.NewListTool[app](tab)

	m, err := call(t, bash, `{"command": "echo Serving on 8000; echo noise; sleep 300", "run_in_background": true}`)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := m["shell_id"].(string)
	if id == "" {
		t.Fatalf("no shell_id in %v", m)
	}
	var got string
	for !strings.Contains(got, "Serving") {
		m, err = call(t, outTool, `{"bash_id": "`+id+`", "filter": "^Serving", "wait_ms": 1000}`)
		if err != nil {
			t.Fatal(err)
		}
		got += m["output"].(string)
		if m["status"] != "running" {
			t.Fatalf("status %v before the kill", m)
		}
	}
	if strings.Contains(got, "noise") {
		t.Errorf("the filter let through %q", got)
	}
	m, err = call(t, listTool, `{}`)
	if err != nil || len(m["shells"].([]any)) != 1 {
		t.Fatalf("BashList = %v, %v", m, err)
	}
	m, err = call(t, killTool, `{"shell_id": "`+id+`"}`)
	if err != nil || m["status"] != "killed" {
		t.Fatalf("KillShell = %v, %v; want killed", m, err)
	}
	if _, err := call(t, outTool, `{"bash_id": "p99"}`); !errors.Is(err, helikon.ErrInvalidArgs) {
		t.Errorf("BashOutput of an unknown id = %v, want invalid arguments", err)
	}
}

func TestBackgroundRefusedWithoutATable(t *testing.T) {
	tool, _ := newTool(t, nil, nil)
	if _, err := invoke(t, tool, `{"command": "sleep 1", "run_in_background": true}`); !errors.Is(err, helikon.ErrInvalidArgs) {
		t.Fatalf("run_in_background without a table = %v, want invalid arguments", err)
	}
}
