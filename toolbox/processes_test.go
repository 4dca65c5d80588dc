package toolbox_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/process"
	"github.com/paigasus/helikon/toolbox"
)

// backgroundFlow starts a shell in the background through the toolbox,
// drives it through BashInput, refuses a denied line, reads its output and
// kills it; then checks that Close leaves no process of it.
func backgroundFlow(t *testing.T, o *toolbox.Options) {
	t.Helper()
	o.Processes = &process.Options{MaxProcesses: 2}
	o.Allow = helikon.MustParseRules("Bash", "BashOutput", "KillShell", "BashList")
	o.Deny = helikon.MustParseRules("BashInput(rm)")
	tb := newToolbox(t, o)
	if names := strings.Join(tb.Toolset().Names(), " "); !strings.Contains(names, "BashInput") {
		t.Fatalf("tools %s lack the process tools", names)
	}
	root := tb.Workspace().Dir()
	if err := os.WriteFile(filepath.Join(root, "victim"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := call(tb, "Bash", `{"command": "bash", "run_in_background": true}`)
	if err != nil {
		t.Fatalf("starting a shell: %v", err)
	}
	var started struct {
		ShellID string `json:"shell_id"`
	}
	_ = json.Unmarshal(out, &started)
	id := started.ShellID
	if _, err := call(tb, "BashInput", `{"shell_id": "`+id+`", "input": "rm -f victim\n"}`); helikon.KindOf(err) != helikon.KindDenied {
		t.Errorf("rm typed into the shell = %v, want denied", err)
	}
	if _, err := call(tb, "BashInput", `{"shell_id": "`+id+`", "input": "echo $$ > pid; echo hello\n"}`); err != nil {
		t.Fatalf("echo typed into the shell: %v", err)
	}
	var got string
	for i := 0; !strings.Contains(got, "hello") && i < 30; i++ {
		out, err := call(tb, "BashOutput", `{"bash_id": "`+id+`", "wait_ms": 1000}`)
		if err != nil {
			t.Fatal(err)
		}
		var r struct{ Output string }
		_ = json.Unmarshal(out, &r)
		got += r.Output
	}
	if !strings.Contains(got, "hello") {
		t.Fatalf("output %q lacks hello", got)
	}
	if _, err := os.Stat(filepath.Join(root, "victim")); err != nil {
		t.Fatal("the denied rm ran")
	}
	// The limit: two run, a third is refused with what to do.
	for range 2 {
		_, err = call(tb, "Bash", `{"command": "sleep 300", "run_in_background": true}`)
	}
	if err == nil || !strings.Contains(err.Error(), "KillShell") {
		t.Errorf("a third process = %v, want refused, naming KillShell", err)
	}
	pidText, _ := os.ReadFile(filepath.Join(root, "pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(pidText)))
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
	// The shell's pid is the one it has in its own pid namespace under the
	// OS sandbox: only look for it on the host backend.
	if o.Uncontained && pid > 0 {
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			time.Sleep(100 * time.Millisecond)
			if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
				t.Errorf("the shell (pid %d) outlived Close", pid)
			}
		}
	}
}

func TestBackgroundCommandsOnTheHost(t *testing.T) {
	backgroundFlow(t, &toolbox.Options{Uncontained: true})
}

func TestBackgroundCommandsInTheOSSandbox(t *testing.T) {
	backgroundFlow(t, &toolbox.Options{})
}

// TestBackgroundCommandsInTheOSSandboxUnprivileged runs the flow as nobody
// when the test runs as root (go test -run ... -args helper): the launcher's
// path.
func TestBackgroundCommandsInTheOSSandboxUnprivileged(t *testing.T) {
	if os.Getenv("HELIKON_TOOLBOX_AS_NOBODY") != "" {
		backgroundFlow(t, &toolbox.Options{})
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("runs as nobody from a root test; this run is unprivileged already, see TestBackgroundCommandsInTheOSSandbox")
	}
	if _, err := exec.LookPath("runuser"); err != nil {
		t.Skip("no runuser")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/tmp", "toolbox-nobody")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "toolbox.test")
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("runuser", "-u", "nobody", "--", "env", "HELIKON_TOOLBOX_AS_NOBODY=1", "TMPDIR=/tmp", bin, "-test.run", "^TestBackgroundCommandsInTheOSSandboxUnprivileged$", "-test.v")
	cmd.Dir = "/tmp"
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}

func TestProcessToolsNeedATable(t *testing.T) {
	tb := newToolbox(t, &toolbox.Options{Uncontained: true})
	if _, err := call(tb, "Bash", `{"command": "sleep 1", "run_in_background": true}`); !errors.Is(err, helikon.ErrInvalidArgs) && helikon.KindOf(err) != helikon.KindDenied {
		t.Errorf("run_in_background without Processes = %v", err)
	}
	_, err := toolbox.NewTool[struct{}](tb.Workspace(), "BashOutput", nil)
	if !errors.Is(err, toolbox.ErrNoProcessTable) {
		t.Errorf("BashOutput without a table = %v, want ErrNoProcessTable", err)
	}
}
