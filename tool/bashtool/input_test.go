package bashtool_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/tool/bashtool"
)

// inputRig is a host backend's process table with Bash and BashInput over
// it, and a file the attacks try to remove.
type inputRig struct {
	dir, victim string
	tab         *process.Table
	in          *bashtool.InputTool[app]
}

func newInputRig(t *testing.T) *inputRig {
	t.Helper()
	dir := t.TempDir()
	b, err := host.New(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := process.New(context.Background(), b, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tab.Close() })
	bash, err := bashtool.New[app](b, &bashtool.Options{Processes: tab})
	if err != nil {
		t.Fatal(err)
	}
	in, err := bashtool.NewInputTool(bash)
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	return &inputRig{dir: dir, victim: victim, tab: tab, in: in}
}

// start starts command in the table as the Bash tool would, without the
// pipeline (the attacks are on the input, not on the start).
func (r *inputRig) start(t *testing.T, command string) string {
	t.Helper()
	e, err := r.tab.Start(t.Context(), &backend.StartRequest{Request: backend.Request{Command: command}})
	if err != nil {
		t.Fatal(err)
	}
	return e.ID
}

// write calls BashInput through perms and returns the output it read.
func (r *inputRig) write(t *testing.T, perms *helikon.Permissions, id, input string, waitMS int) (string, error) {
	t.Helper()
	args, _ := json.Marshal(bashtool.InputArgs{ShellID: id, Input: input, WaitMS: int64(waitMS)})
	out, err := helikon.CallTool(helikon.NewToolContext(t.Context(), app{}, &helikon.RunConfig{}), perms, helikon.Tool[app](r.in), args)
	if err != nil {
		return "", err
	}
	var res bashtool.OutputResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res.Output, nil
}

// finish closes the process's input and waits for its end: a shell runs
// what it was given, then ends at end of file.
func (r *inputRig) finish(t *testing.T, id string) {
	t.Helper()
	e, err := r.tab.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	_ = e.Process().Input().Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := e.Process().Wait(ctx); err != nil {
		t.Fatalf("the shell did not end at end of input: %v", err)
	}
}

func (r *inputRig) victimStays(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(r.victim); err != nil {
		t.Fatalf("the denied command ran: %v", err)
	}
}

var denyRm = &helikon.Permissions{Deny: helikon.MustParseRules("Bash(rm)")}

func TestInputToAShellIsJudgedAsABashCommand(t *testing.T) {
	r := newInputRig(t)
	id := r.start(t, "bash")
	out, err := r.write(t, denyRm, id, "echo hello from the shell\n", 2000)
	if err != nil {
		t.Fatalf("an allowed line was refused: %v", err)
	}
	if !strings.Contains(out, "hello from the shell") {
		e, _ := r.tab.Get(id)
		c, _ := e.ReadNew(t.Context(), 2*time.Second, 0)
		out += string(c.Data)
	}
	if !strings.Contains(out, "hello from the shell") {
		t.Fatalf("output %q lacks the echo", out)
	}
}

// TestInputAttacks: a command the rules deny, typed into a running shell,
// stays denied however the input is cut or dressed.
func TestInputAttacks(t *testing.T) {
	for _, tt := range []struct {
		name   string
		inputs []string // the last must be refused; the others may be
	}{
		{name: "a denied line", inputs: []string{"rm -f victim\n"}},
		{name: "behind an allowed one", inputs: []string{"echo a; rm -f victim\n"}},
		{name: "cut in two writes", inputs: []string{"r", "m -f victim\n"}},
		{name: "cut after an allowed line", inputs: []string{"echo a\nr", "m -f victim\n"}},
		{name: "after a line continuation", inputs: []string{"echo a \\\n", "; rm -f victim\n"}},
		{name: "in a loop over three writes", inputs: []string{"for i in 1; do\n", "rm -f victim\n"}},
		{name: "in an open quote", inputs: []string{"echo 'a\n", "'; rm -f victim\n"}},
		{name: "through a nested shell", inputs: []string{"sh -c 'rm -f victim'\n"}},
		{name: "after a backspace", inputs: []string{"echo xx\x7f\x7frm -f victim\n"}},
		{name: "after a carriage return", inputs: []string{"echo \rrm -f victim\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := newInputRig(t)
			id := r.start(t, "bash")
			last := len(tt.inputs) - 1
			for _, in := range tt.inputs[:last] {
				_, _ = r.write(t, denyRm, id, in, 0)
			}
			_, err := r.write(t, denyRm, id, tt.inputs[last], 0)
			if k := helikon.KindOf(err); k != helikon.KindDenied && k != helikon.KindInvalidArgs {
				t.Errorf("%q = %v, want it refused", tt.inputs[last], err)
			}
			r.finish(t, id)
			r.victimStays(t)
		})
	}
}

// TestInputToAnInterpreterNeedsARule: input to a program other than a
// shell is that program's command line: asked about by default, permitted by
// a rule naming the program, refused by a deny rule of it.
func TestInputToAnInterpreterNeedsARule(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	ask := helikon.PolicyFunc(func(context.Context, *helikon.Call, *helikon.Targets) (helikon.PolicyDecision, error) {
		return helikon.PolicyAsk("asked"), nil
	})
	r := newInputRig(t)
	id := r.start(t, "python3 -i -q")
	line := "import os; os.remove('victim'); print('removed')\n"
	if _, err := r.write(t, &helikon.Permissions{Policy: ask}, id, line, 0); helikon.KindOf(err) != helikon.KindDenied {
		t.Fatalf("input to python3 without a rule or an approval = %v, want denied", err)
	}
	if _, err := r.write(t, &helikon.Permissions{Policy: ask, Deny: helikon.MustParseRules("Bash(python3)"), Allow: helikon.MustParseRules("BashInput(python3)")}, id, line, 0); helikon.KindOf(err) != helikon.KindDenied {
		t.Fatalf("input to python3 under a deny rule of python3 = %v, want denied", err)
	}
	r.victimStays(t)
	out, err := r.write(t, &helikon.Permissions{Policy: ask, Allow: helikon.MustParseRules("BashInput(python3)")}, id, "print(6*7)\n", 5000)
	if err != nil {
		t.Fatalf("input to python3 under BashInput(python3) = %v, want it written", err)
	}
	e, _ := r.tab.Get(id)
	for i := 0; !strings.Contains(out, "42") && i < 10; i++ {
		c, _ := e.ReadNew(t.Context(), time.Second, 0)
		out += string(c.Data)
	}
	if !strings.Contains(out, "42") {
		t.Errorf("python3's output %q lacks 42", out)
	}
}

func TestInputToAShellUnderAnAllowRule(t *testing.T) {
	r := newInputRig(t)
	id := r.start(t, "exec bash --norc")
	ask := helikon.PolicyFunc(func(context.Context, *helikon.Call, *helikon.Targets) (helikon.PolicyDecision, error) {
		return helikon.PolicyAsk("asked"), nil
	})
	perms := &helikon.Permissions{Policy: ask, Allow: helikon.MustParseRules("Bash(echo)")}
	if _, err := r.write(t, perms, id, "echo fine\n", 0); err != nil {
		t.Errorf("echo under Bash(echo) = %v, want it written", err)
	}
	if _, err := r.write(t, perms, id, "echo a; touch b\n", 0); helikon.KindOf(err) != helikon.KindDenied {
		t.Errorf("echo; touch under Bash(echo) = %v, want denied (asked, no one to ask)", err)
	}
}

func TestInputToAnUnknownProcess(t *testing.T) {
	r := newInputRig(t)
	if _, err := r.write(t, nil, "p42", "ls\n", 0); !errors.Is(err, helikon.ErrInvalidArgs) {
		t.Errorf("input to p42 = %v, want invalid arguments", err)
	}
}
