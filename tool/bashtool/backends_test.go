package bashtool_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/tool/bashtool"
)

// The same calls decide alike on every local backend: the tool learns the
// root from backend.WorkingDir, whichever backend it is (the OS sandbox once
// named it Root and a relative redirect was "relative to an unknown
// directory" there, so a deny rule refused echo hi > out.txt).
func TestSameDecisionsOnEveryLocalBackend(t *testing.T) {
	backends := map[string]func(dir string) (backend.Backend, error){
		"host": func(dir string) (backend.Backend, error) { return host.New(dir, nil) },
		"ossandbox": func(dir string) (backend.Backend, error) {
			return ossandbox.New(dir, nil)
		},
	}
	cases := []struct {
		command string
		denied  bool
		creates string
	}{
		{"echo hi > out.txt", false, "out.txt"},
		{"rm -f out.txt", true, ""},
		{"cd sub && echo x > ../.env", true, ""}, // the sensitive-path guard, with no one to ask
	}
	for name, mk := range backends {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			b, err := mk(dir)
			if errors.Is(err, backend.ErrUnavailable) {
				t.Skipf("%s is unavailable here: %v", name, err)
			}
			if err != nil {
				t.Fatal(err)
			}
			tool, err := bashtool.New[app](b, &bashtool.Options{DenyCommands: []string{"chmod"}})
			if err != nil {
				t.Fatal(err)
			}
			perms := &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("Bash(rm)")}}
			for _, c := range cases {
				args, _ := json.Marshal(bashtool.Args{Command: c.command})
				_, err := helikon.CallTool(helikon.NewToolContext(context.Background(), app{}, nil), perms, tool, args)
				if denied := helikon.KindOf(err) == helikon.KindDenied; denied != c.denied {
					t.Errorf("%q: denied %v (%v), want %v", c.command, denied, err, c.denied)
				}
				if c.creates != "" {
					if _, err := os.Stat(filepath.Join(dir, c.creates)); err != nil {
						t.Errorf("%q did not create %s: %v", c.command, c.creates, err)
					}
				}
			}
		})
	}
}

// The tool's own lists hold on a call that did not pass the pipeline (no
// targets in its context) and on one that did.
func TestListsHoldWithAndWithoutThePipeline(t *testing.T) {
	tool, _ := newTool(t, nil, &bashtool.Options{DenyCommands: []string{"chmod"}})
	args := json.RawMessage(`{"command":"echo a; chmod 600 x"}`)
	tc := helikon.NewToolContext(context.Background(), app{}, nil)
	if _, err := tool.Invoke(tc, args); helikon.KindOf(err) != helikon.KindDenied {
		t.Errorf("direct call: %v, want denied by the deny list", err)
	}
	if _, err := helikon.CallTool(tc, nil, tool, args); helikon.KindOf(err) != helikon.KindDenied {
		t.Errorf("checked call: %v, want denied by the deny list", err)
	}
}

// A redirect is a write: Write and Edit deny rules hold for it as for the
// file tools, failing closed on a target computed at run time.
func TestEditDenyRulesHoldForRedirects(t *testing.T) {
	tool, dir := newTool(t, nil, nil)
	if err := os.Mkdir(filepath.Join(dir, "secret"), 0o755); err != nil {
		t.Fatal(err)
	}
	perms := &helikon.Permissions{Deny: []helikon.Rule{helikon.MustParseRule("Edit(secret/**)")}}
	for _, c := range []struct {
		command string
		denied  bool
	}{
		{"echo x > secret/a", true},
		{"cd secret && echo x >> a", true},
		{`f=secret/a; echo x > "$f"`, true},
		{"echo x > ok.txt", false},
		{"cat secret/none 2>/dev/null; true", false},
	} {
		args, _ := json.Marshal(bashtool.Args{Command: c.command})
		_, err := helikon.CallTool(helikon.NewToolContext(context.Background(), app{}, nil), perms, tool, args)
		if denied := helikon.KindOf(err) == helikon.KindDenied; denied != c.denied {
			t.Errorf("%q under Edit(secret/**): denied %v (%v), want %v", c.command, denied, err, c.denied)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "secret", "a")); err == nil {
		t.Error("a denied redirect wrote secret/a")
	}
}

// A write redirection is a command of its own for the tool's allow list: it
// needs ">" (every redirection) or "> /abs/path" (that target) on the list.
func TestAllowListCoversRedirectsOnlyWhenListed(t *testing.T) {
	for _, tc := range []struct {
		allow  []string
		denied bool
	}{
		{[]string{"echo"}, true},
		{[]string{"echo", ">"}, false},
		{[]string{"echo", "> DIR/out.txt"}, false},
		{[]string{"echo", "> DIR/other.txt"}, true},
	} {
		dir := t.TempDir()
		allow := make([]string, len(tc.allow))
		for i, a := range tc.allow {
			allow[i] = strings.ReplaceAll(a, "DIR", dir)
		}
		b, err := host.New(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		tool, err := bashtool.New[app](b, &bashtool.Options{AllowCommands: allow})
		if err != nil {
			t.Fatal(err)
		}
		_, err = tool.Invoke(helikon.NewToolContext(context.Background(), app{}, nil), json.RawMessage(`{"command":"echo hi > out.txt"}`))
		if denied := helikon.KindOf(err) == helikon.KindDenied; denied != tc.denied {
			t.Errorf("allow %q: denied %v (%v), want %v", allow, denied, err, tc.denied)
		}
	}
}
