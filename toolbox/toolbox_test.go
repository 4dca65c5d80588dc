package toolbox_test

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
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/policyfile"
	"github.com/paigasus/helikon/toolbox"
	"github.com/paigasus/helikon/workspace"
)

func newToolbox(t *testing.T, o *toolbox.Options) *toolbox.Toolbox[struct{}] {
	t.Helper()
	if o.Root == "" && o.Workspace == nil {
		o.Root = t.TempDir()
	}
	if !o.Uncontained && o.Workspace == nil {
		if s := ossandbox.Probe(); !s.Available {
			t.Skipf("no OS sandbox: %s", s.Reason)
		}
	}
	tb, err := toolbox.New[struct{}](context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

func call(tb *toolbox.Toolbox[struct{}], tool, args string) (json.RawMessage, error) {
	return tb.Call(context.Background(), struct{}{}, tool, json.RawMessage(args))
}

func TestNewRefusesARuleNamingNoTool(t *testing.T) {
	_, err := toolbox.New[struct{}](context.Background(), &toolbox.Options{Root: t.TempDir(), Uncontained: true, Deny: helikon.MustParseRules("bash(rm)")})
	var ute *helikon.UnknownToolError
	if !errors.As(err, &ute) || ute.Suggestion != "Bash" {
		t.Fatalf("err = %v, want an UnknownToolError suggesting Bash", err)
	}
	// A tool the caller adds is one a rule may name.
	tb, err := toolbox.New[struct{}](context.Background(), &toolbox.Options{Root: t.TempDir(), Uncontained: true, Deny: helikon.MustParseRules("lookup"), OtherTools: []string{"lookup"}})
	if err != nil {
		t.Fatal(err)
	}
	tb.Close()
}

func TestDefaultAsksAboutWhatIsNotReadOnly(t *testing.T) {
	tb := newToolbox(t, &toolbox.Options{Uncontained: true})
	if _, err := call(tb, "Write", `{"path":"a","content":"x"}`); helikon.KindOf(err) != helikon.KindDenied {
		t.Fatalf("Write with no rule and no approver: %v, want denied", err)
	}
	var asked []string
	tb = newToolbox(t, &toolbox.Options{Uncontained: true, Approver: helikon.ApproverFunc(func(_ context.Context, req *helikon.ApprovalRequest) (bool, error) {
		asked = append(asked, req.Tool)
		return true, nil
	})})
	if _, err := call(tb, "Write", `{"path":"a","content":"x"}`); err != nil {
		t.Fatal(err)
	}
	if _, err := call(tb, "Read", `{"path":"a"}`); err != nil {
		t.Fatal(err)
	}
	if strings.Join(asked, " ") != "Write" {
		t.Errorf("asked about %v, want Write only", asked)
	}
}

// TestAttackPolicyFileGuardedWithoutPolicyFiles: with no policy file read
// and the guards off, a tool still cannot write the root's policy files.
func TestAttackPolicyFileGuardedWithoutPolicyFiles(t *testing.T) {
	tb := newToolbox(t, &toolbox.Options{Uncontained: true, NoGuards: true, Mode: helikon.ModeBypass})
	for _, f := range append([]string{policyfile.ProjectFile}, policyfile.ClaudeFiles...) {
		_, err := call(tb, "Write", `{"path":"`+f+`","content":"{\"permissions\":{\"allow\":[\"Bash\"]}}"}`)
		if helikon.KindOf(err) != helikon.KindDenied {
			t.Errorf("Write %s: %v, want denied", f, err)
		}
	}
}

// TestAttackSandboxKeepsPolicyDirsReadOnly: a command the analysis does
// not see through (run on the workspace directly) cannot create a policy
// file: the toolbox gives the OS sandbox the policy directories as
// read-only paths.
func TestAttackSandboxKeepsPolicyDirsReadOnly(t *testing.T) {
	tb := newToolbox(t, &toolbox.Options{})
	res, err := tb.Workspace().Run(context.Background(), &backend.Request{Command: `mkdir -p .helikon && echo '{}' > .helikon/settings.json`})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != nil && *res.ExitCode == 0 {
		t.Fatal("a sandboxed command wrote .helikon/settings.json")
	}
	if _, err := os.Stat(filepath.Join(tb.Workspace().Dir(), ".helikon", "settings.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the policy file exists: %v", err)
	}
}

func TestPolicyFilesApply(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, ".helikon"), 0o755)
	os.WriteFile(filepath.Join(root, ".helikon", "settings.json"), []byte(`{"permissions":{"deny":["Read(/secret)"],"mode":"plan"}}`), 0o644)
	os.WriteFile(filepath.Join(root, "secret"), []byte("s"), 0o644)
	os.WriteFile(filepath.Join(root, "open"), []byte("o"), 0o644)
	tb := newToolbox(t, &toolbox.Options{Root: root, Uncontained: true, PolicyFiles: &policyfile.Options{NoUserFile: true}})
	if tb.Mode() != helikon.ModePlan || tb.PolicyFiles() == nil {
		t.Fatalf("mode %s, policy %v: the project file's mode does not apply", tb.Mode(), tb.PolicyFiles())
	}
	if _, err := call(tb, "Read", `{"path":"secret"}`); helikon.KindOf(err) != helikon.KindDenied {
		t.Errorf("Read secret: %v, want denied by the file's rule", err)
	}
	if _, err := call(tb, "Read", `{"path":"open"}`); err != nil {
		t.Errorf("Read open: %v", err)
	}
}

func TestPolicyFileBackendElsewhereIsRefused(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, ".helikon"), 0o755)
	os.WriteFile(filepath.Join(root, ".helikon", "settings.json"), []byte(`{"backend":"docker"}`), 0o644)
	_, err := toolbox.New[struct{}](context.Background(), &toolbox.Options{Root: root, PolicyFiles: &policyfile.Options{NoUserFile: true}})
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
}

func TestUncontainedIsTheHostBackend(t *testing.T) {
	tb := newToolbox(t, &toolbox.Options{Uncontained: true})
	if g := tb.Workspace().Guarantees(); g.Filesystem != backend.IsolationNone {
		t.Errorf("guarantees %s, want the host backend's", g)
	}
}

func TestDefaultIsTheOSSandbox(t *testing.T) {
	tb := newToolbox(t, &toolbox.Options{})
	if g := tb.Workspace().Guarantees(); g.Filesystem != backend.IsolationOSKernel {
		t.Errorf("guarantees %s, want the OS sandbox's", g)
	}
	if names := strings.Join(tb.Toolset().Names(), " "); names != "Read Write Edit Bash WebFetch" {
		t.Errorf("tools %s", names)
	}
}

func TestCloseReleasesTheWorkspace(t *testing.T) {
	tb := newToolbox(t, &toolbox.Options{Uncontained: true})
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := call(tb, "Read", `{"path":"x"}`); !errors.Is(err, workspace.ErrGone) {
		t.Errorf("Read after Close: %v, want ErrGone", err)
	}
	if err := tb.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCallUnknownTool(t *testing.T) {
	tb := newToolbox(t, &toolbox.Options{Uncontained: true, Tools: []string{"Read"}})
	if _, err := call(tb, "Bash", `{"command":"true"}`); !errors.Is(err, toolbox.ErrUnknownTool) {
		t.Errorf("err = %v, want ErrUnknownTool", err)
	}
	if _, err := toolbox.New[struct{}](context.Background(), &toolbox.Options{Root: t.TempDir(), Uncontained: true, Tools: []string{"WebSearch"}}); !errors.Is(err, toolbox.ErrNoSearcher) {
		t.Errorf("WebSearch without a searcher: %v", err)
	}
}

func TestGivenWorkspaceIsNotClosed(t *testing.T) {
	inner := newToolbox(t, &toolbox.Options{Uncontained: true})
	tb := newToolbox(t, &toolbox.Options{Workspace: inner.Workspace(), Allow: helikon.MustParseRules("Write")})
	if _, err := call(tb, "Write", `{"path":"a","content":"x"}`); err != nil {
		t.Fatal(err)
	}
	tb.Close()
	if _, err := call(inner, "Read", `{"path":"a"}`); err != nil {
		t.Errorf("the given workspace was closed: %v", err)
	}
}

func TestPolicyFilesWithAWorkspaceNeedTheProjectDir(t *testing.T) {
	inner := newToolbox(t, &toolbox.Options{Uncontained: true})
	_, err := toolbox.New[struct{}](context.Background(), &toolbox.Options{Workspace: inner.Workspace(), PolicyFiles: &policyfile.Options{NoUserFile: true}})
	if err == nil || !strings.Contains(err.Error(), "PolicyFiles.Root") {
		t.Fatalf("err = %v, want one naming PolicyFiles.Root", err)
	}
	root := inner.Workspace().Dir()
	os.Mkdir(filepath.Join(root, ".helikon"), 0o755)
	os.WriteFile(filepath.Join(root, ".helikon", "settings.json"), []byte(`{"permissions":{"deny":["Read(/secret)"]}}`), 0o644)
	tb := newToolbox(t, &toolbox.Options{Workspace: inner.Workspace(), PolicyFiles: &policyfile.Options{Root: root, NoUserFile: true}})
	if _, err := call(tb, "Read", `{"path":"secret"}`); helikon.KindOf(err) != helikon.KindDenied {
		t.Errorf("Read secret: %v, want denied by the file's rule", err)
	}
}
