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

	"github.com/paigasus/helikon/cmd/helikon/internal/cli/clitest"

	"github.com/paigasus/helikon/cmd/helikon/internal/agentcli"

	"github.com/paigasus/helikon"
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
		{"npm script", bashReq("npm", "run", "test", "--", "--watch=false"), "Bash(npm run test)"},
		{"git subcommand", bashReq("git", "commit", "-m", "x"), "Bash(git commit)"},
		{"program and flag", bashReq("ls", "-la"), "Bash(ls)"},
		{"path argument stops", bashReq("go", "test", "./..."), "Bash(go test)"},
		{"at most three words", bashReq("a", "b", "c", "d"), "Bash(a b c)"},
		{"interpreter alone is not offered", bashReq("python3", "-c", "import os"), ""},
		{"a file in a directory", editReq("/w", "src/a/b.go"), "Edit(/src/a/**)"},
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
			if !ok || !strings.Contains(out.String(), "[a]lways (this session: "+tt.offer+")") {
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
	if !ask(bashReq("npm", "run", "test", "--", "-u")) || !strings.Contains(out.String(), "allowed by the session rule Bash(npm run test)") {
		t.Errorf("a call the rule covers was asked again:\n%s", out.String())
	}
	// Nothing is left to read: every question now ends in a denial.
	if ask(bashReq("npm", "run", "build")) {
		t.Error("the rule reached npm run build")
	}
	guarded := bashReq("npm", "run", "test")
	guarded.Guard = true
	if ask(guarded) {
		t.Error("the session rule answered a guard's question")
	}
	byRule := bashReq("npm", "run", "test")
	byRule.Rule = "Bash(npm)"
	if ask(byRule) {
		t.Error("the session rule answered an ask rule's question")
	}
	if n := strings.Count(out.String(), "allow?"); n != 4 {
		t.Errorf("asked %d times, want 4 (first, build, guard, ask rule)", n)
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
	if strings.Join(f.Permissions.Allow, " ") != "Read Edit(/src/**)" || strings.Join(f.Permissions.Deny, " ") != "Bash(rm)" || f.Backend != "os" {
		t.Errorf("file after save: %s", b)
	}
	if !strings.Contains(out.String(), "saved to "+filepath.Join(root, ".helikon/settings.json")) {
		t.Errorf("not told where: %s", out.String())
	}
	code, stdout, _ := clitest.Run(t, "", "policy", "check", "--json", "--root", root, "--user-settings", "none", "--trust-project", "Edit", "src/y.go")
	if code != 0 || !strings.Contains(stdout, `"decision":"allow"`) {
		t.Errorf("the saved rule does not apply: %s", stdout)
	}
}
