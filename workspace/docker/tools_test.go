package docker

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/tool/filetool"
	"github.com/paigasus/helikon/workspace"
)

// denyEnv is the policy of the link tests: .env and secret/ may not be
// written or edited.
var denyEnv = &helikon.Permissions{
	Deny: []helikon.Rule{
		helikon.MustParseRule("Edit(.env)"), helikon.MustParseRule("Write(.env)"), helikon.MustParseRule("Write(secret/**)"),
	},
	NoGuards: true, // the rules alone must hold
}

// A link that a command in the container makes to a file a deny rule
// protects does not let Write or Edit reach that file, in either mode:
// the file tools hold the path as written, and the workspace's write
// (one exec in the isolated mode) refuses to land elsewhere.
func TestAttackLinkMadeByACommandCannotSidestepADenyRule(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts func(t *testing.T) Options
	}{
		{"Isolated", func(*testing.T) Options { return Options{Isolate: true} }},
		{"Bind", func(t *testing.T) Options { return Options{Root: bindRoot(t)} }},
	} {
		t.Run(mode.name, func(t *testing.T) {
			ws := create(t, newEngine(t, mode.opts(t)))
			sh(t, ws, "printf 'API_KEY=hunter2\\n' >.env && mkdir secret && ln -s .env innocent.txt && ln -s secret box")
			tc := helikon.NewToolContext(context.Background(), struct{}{}, &helikon.RunConfig{Mode: helikon.ModeBypass})
			write := filetool.NewWrite[struct{}](ws, nil)
			edit := filetool.NewEdit[struct{}](ws, nil)
			for _, c := range []struct {
				tool helikon.Tool[struct{}]
				args string
			}{
				{write, `{"path":"innocent.txt","content":"API_KEY=stolen\n"}`},
				{write, `{"path":"box/planted","content":"planted"}`},
				{edit, `{"path":"innocent.txt","old_string":"hunter2","new_string":"stolen"}`},
			} {
				if _, err := helikon.CallTool(tc, denyEnv, c.tool, json.RawMessage(c.args)); !errors.Is(err, helikon.ErrDenied) {
					t.Errorf("%s %s: %v, want denied", c.tool.Name(), c.args, err)
				}
			}
			if got := sh(t, ws, "cat .env; ls secret"); got != "API_KEY=hunter2\n" {
				t.Errorf("after the calls the container has %q", got)
			}
			// Without the check the attack works: a plain write
			// through the link lands in .env.
			if res, err := ws.WriteFile(t.Context(), "innocent.txt", []byte("x")); err != nil || res.Path != ".env" {
				t.Errorf("plain WriteFile through the link: %+v, %v", res, err)
			}
		})
	}
}

// The Docker workspace passes the check down to its file system: it is an
// ExpectWriter whose refusal names where the link leads.
func TestWorkspaceIsAnExpectWriter(t *testing.T) {
	ws := create(t, newEngine(t, Options{Isolate: true}))
	sh(t, ws, "ln -s target link")
	var w workspace.ExpectWriter = ws
	_, err := w.WriteFileExpect(t.Context(), "link", []byte("x"), []string{"link"})
	if ue := (*workspace.UnexpectedPathError)(nil); !errors.As(err, &ue) || ue.Path != "target" {
		t.Errorf("WriteFileExpect through a link = %v, want refused naming target", err)
	}
	if got := sh(t, ws, "ls"); got != "link\n" {
		t.Errorf("ls = %q", got)
	}
}

// BenchmarkToolSmallFile is a Read, Write and Edit of a small file in the
// isolated mode through the file tools and the permission check (which
// makes Write and Edit check where a link leads): compare with
// BenchmarkRunTrue, one exec's cost.
func BenchmarkToolSmallFile(b *testing.B) {
	ws := create(b, newEngine(b, Options{Isolate: true}))
	if _, err := ws.WriteFile(b.Context(), "small.txt", []byte("hello\n")); err != nil {
		b.Fatal(err)
	}
	perms := &helikon.Permissions{Allow: []helikon.Rule{helikon.MustParseRule("Read"), helikon.MustParseRule("Write"), helikon.MustParseRule("Edit")}}
	tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
	for _, bc := range []struct {
		name string
		tool helikon.Tool[struct{}]
		args func(i int) string
	}{
		{"Read", filetool.NewRead[struct{}](ws, nil), func(int) string { return `{"path":"small.txt"}` }},
		{"Write", filetool.NewWrite[struct{}](ws, nil), func(int) string { return `{"path":"out.txt","content":"hello\n"}` }},
		{"Edit", filetool.NewEdit[struct{}](ws, nil), func(i int) string {
			if i%2 == 1 {
				return `{"path":"small.txt","old_string":"HELLO","new_string":"hello"}`
			}
			return `{"path":"small.txt","old_string":"hello","new_string":"HELLO"}`
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			i := 0
			for b.Loop() {
				if _, err := helikon.CallTool(tc, perms, bc.tool, json.RawMessage(bc.args(i))); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
