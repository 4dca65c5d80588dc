package agentcli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"

	"github.com/paigasus/helikon/cli/agentcli"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/tool/bashtool"
)

func bashReq(args ...string) *helikon.ApprovalRequest {
	return &helikon.ApprovalRequest{Tool: "Bash", Args: json.RawMessage(`{}`), Reason: "policy",
		Targets: &helikon.Targets{Commands: []helikon.Command{{Args: args}}}}
}

func editReq(root, rel string) *helikon.ApprovalRequest {
	return &helikon.ApprovalRequest{Tool: "Edit", Args: json.RawMessage(`{}`), Reason: "policy",
		Targets: &helikon.Targets{Paths: []helikon.PathTarget{{Path: filepath.Join(root, rel), Root: root, Access: helikon.AccessWrite}}}}
}

func TestAlwaysOffersTheNarrowestRule(t *testing.T) {
	tests := []struct {
		name  string
		req   *helikon.ApprovalRequest
		offer string // "" when always is not offered
	}{
		{"npm script", bashReq("npm", "run", "test", "--", "--watch=false"), "Bash(=npm run test -- --watch=false)"},
		{"git subcommand", bashReq("git", "commit", "-m", "x"), "Bash(=git commit -m x)"},
		{"program and flag", bashReq("ls", "-la"), "Bash(=ls -la)"},
		{"path argument", bashReq("go", "test", "./..."), "Bash(=go test ./...)"},
		{"every word", bashReq("a", "b", "c", "d"), "Bash(=a b c d)"},
		{"program by its path", bashReq("./build.sh", "x"), "Bash(=./build.sh x)"},
		{"two commands and a redirection", &helikon.ApprovalRequest{Tool: "Bash", Targets: &helikon.Targets{Commands: []helikon.Command{{Args: []string{"touch", "a"}}, {Args: []string{">", "/w/out"}}}}}, "Bash(=touch a), Bash(=> /w/out)"},
		{"interpreter is not offered", bashReq("python3", "-c", "import os"), ""},
		{"interpreter with a script is not offered", bashReq("python3", "x.py"), ""},
		{"a word with a space", bashReq("echo", "a b"), ""},
		{"a word computed at run time", &helikon.ApprovalRequest{Tool: "Bash", Targets: &helikon.Targets{Commands: []helikon.Command{{Args: []string{"touch", "$f"}, Dynamic: []bool{false, true}}}}}, ""},
		{"a file in a directory", editReq("/w", "src/a/b.go"), "Edit(/src/a/b.go)"},
		{"a file in the root", editReq("/w", "main.go"), "Edit(/main.go)"},
		{"a name that reads as a glob", editReq("/w", "src/[x]/b.go"), ""},
		{"host", &helikon.ApprovalRequest{Tool: "WebFetch", Targets: &helikon.Targets{Hosts: []string{"api.example.com"}}}, "WebFetch(=api.example.com)"},
		{"unknown targets", &helikon.ApprovalRequest{Tool: "Bash"}, ""},
		{"a tool without targets", &helikon.ApprovalRequest{Tool: "lookup"}, "lookup"},
		{"guard", &helikon.ApprovalRequest{Tool: "Bash", Guard: true, Targets: bashReq("rm", "-rf", "/").Targets}, ""},
		{"ask rule", &helikon.ApprovalRequest{Tool: "Bash", Rule: "Bash(git push)", Targets: bashReq("git", "push").Targets}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			a := &agentcli.TerminalApprover{In: bufio.NewReader(strings.NewReader("a\n")), Out: &out, IsTerminal: func() bool { return true }}
			ok, _ := a.Approve(context.Background(), tt.req)
			if tt.offer == "" {
				if strings.Contains(out.String(), "[a]lways") || ok {
					t.Errorf("always offered or taken: ok=%v\n%s", ok, out.String())
				}
				return
			}
			if !ok || !strings.Contains(out.String(), "[a]lways, for exactly this call (this session: "+tt.offer+")") {
				t.Errorf("ok=%v, prompt does not offer %s:\n%s", ok, tt.offer, out.String())
			}
		})
	}
}

// TestAlwaysKeepsTheRuleForTheSession: the rule answers later questions it
// covers, and only those; questions a guard or an ask rule asks are asked.
func TestAlwaysKeepsTheRuleForTheSession(t *testing.T) {
	var out bytes.Buffer
	a := &agentcli.TerminalApprover{In: bufio.NewReader(strings.NewReader("a\n")), Out: &out, IsTerminal: func() bool { return true }}
	ask := func(r *helikon.ApprovalRequest) bool {
		ok, _ := a.Approve(context.Background(), r)
		return ok
	}
	if !ask(bashReq("npm", "run", "test", "--", "--watch=false")) {
		t.Fatal("always did not approve")
	}
	if !ask(bashReq("npm", "run", "test", "--", "--watch=false")) || !strings.Contains(out.String(), "allowed by the session rule Bash(=npm run test -- --watch=false)") {
		t.Errorf("the call approved was asked again:\n%s", out.String())
	}
	// Nothing is left to read: every question now ends in a denial.
	if ask(bashReq("npm", "run", "build")) {
		t.Error("the rule reached npm run build")
	}
	guarded := bashReq("npm", "run", "test", "--", "--watch=false")
	guarded.Guard = true
	if ask(guarded) {
		t.Error("the session rule answered a guard's question")
	}
	byRule := bashReq("npm", "run", "test", "--", "--watch=false")
	byRule.Rule = "Bash(npm)"
	if ask(byRule) {
		t.Error("the session rule answered an ask rule's question")
	}
	if n := strings.Count(out.String(), "allow?"); n != 4 {
		t.Errorf("asked %d times, want 4 (first, build, guard, ask rule)", n)
	}
}

// TestAlwaysAllowsOnlyWhatWasApproved is the attack test of "always": after
// a call is approved always, the same call is answered by the session's
// rule, and a call with one more operand, another path, another program of
// the same name, or a redirection added is asked again. The Bash calls'
// targets come from the Bash tool's own analysis of each line.
func TestAlwaysAllowsOnlyWhatWasApproved(t *testing.T) {
	root := t.TempDir()
	b, err := host.New(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	bash, err := bashtool.New[struct{}](b, nil)
	if err != nil {
		t.Fatal(err)
	}
	line := func(cmd string) *helikon.ApprovalRequest {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		tg, err := bash.Targets(args)
		if err != nil {
			t.Fatal(err)
		}
		return &helikon.ApprovalRequest{Tool: "Bash", Args: args, Reason: "policy", Targets: &tg}
	}
	fetch := func(h string) *helikon.ApprovalRequest {
		return &helikon.ApprovalRequest{Tool: "WebFetch", Args: json.RawMessage(`{}`), Targets: &helikon.Targets{Hosts: []string{h}}}
	}
	tests := []struct {
		approved *helikon.ApprovalRequest
		same     *helikon.ApprovalRequest
		others   []*helikon.ApprovalRequest
	}{
		{line("touch a"), line("touch a"), []*helikon.ApprovalRequest{
			line("touch a b"), line("touch b"), line("touch ../a"), line("./touch a"), line("/tmp/touch a"),
			line("touch a > out"), line("touch a; touch b"), line("cd sub && touch a"), line("touch -d yesterday a"),
		}},
		{line("rm -r dir1"), line("rm -r dir1"), []*helikon.ApprovalRequest{
			line("rm -r dir1 dir2"), line("rm -r dir2"), line("rm -rf dir1"), line("rm -r dir1 /"), line("rm -r dir1 2> log"),
		}},
		{line("echo hi > out"), line("echo hi > out"), []*helikon.ApprovalRequest{
			line("echo hi > other"), line("echo hi > out/../x"), line("echo hi >> out2"),
		}},
		{editReq(root, "src/a/b.go"), editReq(root, "src/a/b.go"), []*helikon.ApprovalRequest{
			editReq(root, "src/a/c.go"), editReq(root, "src/a/b.go.bak"), editReq(root, "src/b.go"),
		}},
		{fetch("api.example.com"), fetch("api.example.com"), []*helikon.ApprovalRequest{
			fetch("x.api.example.com"), fetch("example.com"),
		}},
	}
	for _, tt := range tests {
		var out bytes.Buffer
		a := &agentcli.TerminalApprover{In: bufio.NewReader(strings.NewReader("a\n")), Out: &out, IsTerminal: func() bool { return true }}
		if ok, err := a.Approve(context.Background(), tt.approved); !ok {
			t.Fatalf("%s: always did not approve: %v\n%s", tt.approved.Args, err, out.String())
		}
		if ok, _ := a.Approve(context.Background(), tt.same); !ok || strings.Count(out.String(), "allow?") != 1 {
			t.Errorf("%+v: the call approved always was asked again:\n%s", *tt.same.Targets, out.String())
		}
		for _, o := range tt.others {
			before := strings.Count(out.String(), "allow?")
			// Nothing is left to read: a question asked is denied.
			if ok, _ := a.Approve(context.Background(), o); ok || strings.Count(out.String(), "allow?") != before+1 {
				t.Errorf("after %s %+v was approved always, %s %+v was not asked:\n%s", tt.approved.Args, *tt.approved.Targets, o.Args, *o.Targets, out.String())
			}
		}
	}
}

func TestSaveWritesTheProjectFile(t *testing.T) {
	root := projectDir(t, map[string]string{".helikon/settings.json": `{"permissions": {"deny": ["Bash(rm)"], "allow": ["Read"]}, "backend": "os"}`})
	var out bytes.Buffer
	a := &agentcli.TerminalApprover{In: bufio.NewReader(strings.NewReader("s\n")), Out: &out, IsTerminal: func() bool { return true }, Save: agentcli.SaveAllowRules(root)}
	if ok, err := a.Approve(context.Background(), editReq(root, "src/x.go")); !ok || err != nil {
		t.Fatalf("ok=%v err=%v\n%s", ok, err, out.String())
	}
	b, err := os.ReadFile(filepath.Join(root, ".helikon/settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Permissions struct{ Allow, Deny []string }
		Backend     string
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if strings.Join(f.Permissions.Allow, " ") != "Read Edit(/src/x.go)" || strings.Join(f.Permissions.Deny, " ") != "Bash(rm)" || f.Backend != "os" {
		t.Errorf("file after save: %s", b)
	}
	if !strings.Contains(out.String(), "saved to "+filepath.Join(root, ".helikon/settings.json")) {
		t.Errorf("not told where: %s", out.String())
	}
	code, stdout, _ := clitest.Run(t, "", "policy", "check", "--json", "--root", root, "--user-settings", "none", "--trust-project", "Edit", "src/x.go")
	if code != 0 || !strings.Contains(stdout, `"decision":"allow"`) {
		t.Errorf("the saved rule does not apply: %s", stdout)
	}
}
