package mcptools_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/internal/proctest"
	"github.com/paigasus/helikon/tool/bashtool"
	"github.com/paigasus/helikon/tool/filetool"
	"github.com/paigasus/helikon/tool/mcptools"
	"github.com/paigasus/helikon/workspace/fsroot"
	"github.com/paigasus/helikon/workspace/local"
)

// builtinTools returns the real Read, Write and Bash tools confined to root
// (Bash on the host backend, which confines only its working directory).
func builtinTools(t testing.TB, root string) []helikon.Tool[app] {
	t.Helper()
	sb, err := fsroot.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := host.New(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	bash, err := bashtool.New[app](b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return []helikon.Tool[app]{filetool.NewRead[app](local.NewFS(sb), nil), filetool.NewWrite[app](local.NewFS(sb), nil), bash}
}

func TestServedReadRefusesEscapes(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("TOP-SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "ok.txt"), []byte("fine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(root, outside)
	if err != nil {
		t.Fatal(err)
	}
	cs := serve(t, builtinTools(t, root), nil, nil, "")
	if res := callTool(t, cs, "Read", map[string]any{"path": "ok.txt"}); res.IsError || !strings.Contains(text(res), "fine") {
		t.Fatalf("reading inside the root: %q", text(res))
	}
	for _, p := range []string{outside, rel, "link.txt", "../../../../../../" + outside} {
		res := callTool(t, cs, "Read", map[string]any{"path": p})
		if !res.IsError || strings.Contains(text(res), "TOP-SECRET") {
			t.Errorf("Read %s: isError=%v %q", p, res.IsError, text(res))
		}
	}
}

func TestServedPlanModeRefusesWriteAndBash(t *testing.T) {
	root := t.TempDir()
	cs := serve(t, builtinTools(t, root), &mcptools.ServerOptions[app]{Mode: helikon.ModePlan}, nil, "")
	res := callTool(t, cs, "Write", map[string]any{"path": "new.txt", "content": "x"})
	if !res.IsError || !strings.Contains(text(res), "plan mode") {
		t.Fatalf("Write in plan mode: %q", text(res))
	}
	res = callTool(t, cs, "Bash", map[string]any{"command": "touch made.txt"})
	if !res.IsError || !strings.Contains(text(res), "plan mode") {
		t.Fatalf("Bash in plan mode: %q", text(res))
	}
	for _, f := range []string{"new.txt", "made.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); !os.IsNotExist(err) {
			t.Errorf("%s exists after plan-mode calls", f)
		}
	}
}

// uniqueSleep returns a sleep command whose argument identifies its process.
func uniqueSleep(t testing.TB) (cmd, arg string) {
	arg = fmt.Sprintf("%d.%d", 3000+os.Getpid()%1000, time.Now().UnixNano()%1_000_000)
	return "sleep " + arg, arg
}

// sleepers returns the live processes running "sleep arg".
func sleepers(arg string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		if bytes.Equal(b, []byte("sleep\x00"+arg+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cancelKillsSleep starts a Bash sleep through cs with a progress token,
// waits for progress and for the sleep process, cancels the call and waits
// for the process to be gone.
func cancelKillsSleep(t *testing.T, cs *mcp.ClientSession, progress <-chan *mcp.ProgressNotificationParams) {
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skip("no /proc: cannot observe the sleep process")
	}
	cmd, arg := uniqueSleep(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	params := &mcp.CallToolParams{Name: "Bash", Arguments: map[string]any{"command": cmd}}
	params.SetProgressToken("bash-1")
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, params)
		done <- err
	}()
	proctest.WaitFor(t, "the sleep runs", func() bool { return len(sleepers(arg)) > 0 })
	if p := <-progress; p.ProgressToken != "bash-1" || !strings.Contains(p.Message, "Bash still running") {
		t.Errorf("progress %+v", p)
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled call returned no error")
	}
	proctest.WaitFor(t, "the sleep is killed", func() bool { return len(sleepers(arg)) == 0 })
}

func TestServedBashCancellationKillsSleep(t *testing.T) {
	for _, proto := range protocols {
		t.Run(protoName(proto), func(t *testing.T) {
			progress := make(chan *mcp.ProgressNotificationParams, 100)
			cs := serve(t, builtinTools(t, t.TempDir()), &mcptools.ServerOptions[app]{ProgressInterval: 10 * time.Millisecond},
				&mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
					select {
					case progress <- r.Params:
					default:
					}
				}}, proto)
			cancelKillsSleep(t, cs, progress)
		})
	}
}
