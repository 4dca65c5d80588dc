package forkd_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/tool/filetool"
)

// The flow of issue 14's "done when", through the real tools and the
// permission pipeline as a runner calls them: an agent writes a script with
// Write, runs it with Bash, installs something in one call and uses it in
// the next, edits with Edit and reads the result with Read, in one forkd
// workspace.
func TestToolsShareTheWorkspace(t *testing.T) {
	c, srv := start(t)
	w := create(t, newEngine(t, srv, nil), "tools")
	bash, err := bashtool.New[struct{}](w, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := helikon.MustToolset[struct{}](filetool.NewRead[struct{}](w, nil), filetool.NewWrite[struct{}](w, nil), filetool.NewEdit[struct{}](w, nil), bash)
	perms := &helikon.Permissions{Allow: []helikon.Rule{helikon.MustParseRule("Read"), helikon.MustParseRule("Write"), helikon.MustParseRule("Edit"), helikon.MustParseRule("Bash")}}
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	call := func(name, args string) map[string]any {
		t.Helper()
		tool, ok := tools.Lookup(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		out, err := helikon.CallTool(tc, perms, tool, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s %s: %v", name, args, err)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	call("Write", `{"path":"install.sh","content":"mkdir -p tools && printf '#!/bin/sh\\necho tool v1\\n' > tools/mytool && chmod +x tools/mytool\n"}`)
	if out := call("Bash", `{"command":"sh install.sh && echo installed"}`); out["stdout"] != "installed\n" {
		t.Fatalf("install: %v", out)
	}
	if out := call("Bash", `{"command":"./tools/mytool"}`); out["stdout"] != "tool v1\n" {
		t.Fatalf("the next call does not find what the first installed: %v", out)
	}
	call("Edit", `{"path":"tools/mytool","old_string":"v1","new_string":"v2"}`)
	if out := call("Bash", `{"command":"./tools/mytool > result.txt"}`); out["exit_code"] != 0.0 {
		t.Fatalf("edited tool: %v", out)
	}
	if out := call("Read", `{"path":"result.txt"}`); !strings.Contains(out["content"].(string), "tool v2") {
		t.Errorf("Read after Edit and Bash: %v", out)
	}
	if n := len(c.Live()); n != 1 {
		t.Errorf("%d microVMs for the session, want one", n)
	}
}
