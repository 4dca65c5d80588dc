package cli_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"

	"github.com/paigasus/helikon/cli"
)

// heavyPackages are the import path prefixes the helikon binary must not
// link: each costs start-up time (package initialisation and the size of the
// binary) on every sandboxed command and every launch of the OS sandbox's
// unprivileged launcher.
var heavyPackages = []string{
	"github.com/paigasus/helikon/cli/agentcli",
	"github.com/paigasus/helikon/agent",
	"github.com/paigasus/helikon/provider",
	"github.com/paigasus/helikon/tool/webfetch",
	"github.com/openai/",
	"github.com/anthropics/",
	"github.com/modelcontextprotocol/",
	"go.opentelemetry.io/",
	"google.golang.org/grpc",
	"google.golang.org/protobuf",
	"modernc.org/",
	"codeberg.org/readeck/go-readability",
	"github.com/JohannesKaufmann/html-to-markdown",
}

// TestFrontLinksNoHeavyPackage fails when the helikon binary's dependencies
// gain a model SDK, the MCP SDK, OpenTelemetry, gRPC, protobuf, SQLite,
// readability or the agent commands: they belong to helikon-agent.
func TestFrontLinksNoHeavyPackage(t *testing.T) {
	gobin, err := exec.LookPath("go") // go test puts GOROOT/bin first on PATH
	if err != nil {
		t.Fatalf("the go tool, to list the dependencies: %v", err)
	}
	for _, pkg := range []string{"github.com/paigasus/helikon/cmd/helikon", "github.com/paigasus/helikon/cli"} {
		out, err := exec.Command(gobin, "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		deps := strings.Fields(string(out))
		if !slices.Contains(deps, "github.com/paigasus/helikon/backend/ossandbox") {
			t.Fatalf("go list -deps %s does not list the OS sandbox; the check would see nothing: %v", pkg, deps)
		}
		var heavy []string
		for _, d := range deps {
			if slices.ContainsFunc(heavyPackages, func(h string) bool { return strings.HasPrefix(d, h) }) {
				heavy = append(heavy, d)
			}
		}
		if len(heavy) > 0 {
			t.Errorf("%s depends on %d heavy packages, which belong to %s (package agentcli): %s", pkg, len(heavy), cli.AgentBinary, strings.Join(heavy, " "))
		}
	}
}

func TestFindAgent(t *testing.T) {
	dir, pathDir := t.TempDir(), t.TempDir()
	exe := filepath.Join(dir, "helikon")
	write := func(path string, mode os.FileMode) {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	onPath := filepath.Join(pathDir, cli.AgentBinary)
	write(onPath, 0o755)
	lookIn := func(dirs ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			if strings.Contains(name, "/") {
				return exec.LookPath(name)
			}
			for _, d := range dirs {
				if p, err := exec.LookPath(filepath.Join(d, name)); err == nil {
					return p, nil
				}
			}
			return "", exec.ErrNotFound
		}
	}
	if _, err := cli.FindAgent(exe, lookIn()); !errors.Is(err, cli.ErrNoAgent) || !strings.Contains(err.Error(), cli.BuildCommand) {
		t.Errorf("no agent anywhere: %v; want ErrNoAgent naming %q", err, cli.BuildCommand)
	}
	if got, err := cli.FindAgent(exe, lookIn(pathDir)); got != onPath || err != nil {
		t.Errorf("on PATH only: %q %v; want %q", got, err, onPath)
	}
	beside := filepath.Join(dir, cli.AgentBinary)
	write(beside, 0o644)
	if got, err := cli.FindAgent(exe, lookIn(pathDir)); got != onPath || err != nil {
		t.Errorf("a file beside that is not executable: %q %v; want PATH's %q", got, err, onPath)
	}
	if err := os.Chmod(beside, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := cli.FindAgent(exe, lookIn(pathDir)); got != beside || err != nil {
		t.Errorf("beside and on PATH: %q %v; want the one beside, %q", got, err, beside)
	}
}

func TestUsageListsTheAgentCommands(t *testing.T) {
	code, stdout, _ := clitest.Run(t, "", "help")
	if code != cli.ExitOK {
		t.Fatalf("help: exit %d", code)
	}
	for _, name := range []string{"doctor", "exec", "fetch", "forkd", "guarantees", "mcp", "policy", "proxy", "run", "search", "tool"} {
		if !strings.Contains(stdout, "\n  "+name+" ") {
			t.Errorf("help does not list %s:\n%s", name, stdout)
		}
	}
	// This test binary does not link the agent commands.
	if code, _, stderr := clitest.Run(t, "", "run", "--help"); code != cli.ExitUsage || !strings.Contains(stderr, cli.AgentBinary) {
		t.Errorf("run without the agent commands: exit %d %q; want %d naming %s", code, stderr, cli.ExitUsage, cli.AgentBinary)
	}
}

func TestIsAgentCommand(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"run", "hi"}, true},
		{[]string{"mcp"}, true},
		{[]string{"help", "tool"}, true},
		{[]string{"help"}, false},
		{[]string{"exec", "--", "run"}, false},
		{[]string{"help", "exec"}, false},
		{[]string{"--help"}, false},
		{[]string{"nope"}, false},
	} {
		if got := cli.IsAgentCommand(tt.args); got != tt.want {
			t.Errorf("IsAgentCommand(%q) = %v, want %v", tt.args, got, tt.want)
		}
	}
}

// buildFront builds the helikon binary into a new directory and returns its
// path.
func buildFront(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the helikon binary; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "helikon")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/paigasus/helikon/cmd/helikon").CombinedOutput(); err != nil {
		t.Fatalf("building helikon: %v\n%s", err, out)
	}
	return bin
}

// TestHelikonExecutesTheAgentBinary runs the helikon binary with a stand-in
// helikon-agent beside it that reports what it was given: the arguments,
// standard input, the environment, the same process (its pid), signals the
// caller ignored still ignored, and its exit status passed back.
func TestHelikonExecutesTheAgentBinary(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the signal dispositions from /proc")
	}
	bin := buildFront(t)
	agent := filepath.Join(filepath.Dir(bin), cli.AgentBinary)
	script := `#!/bin/sh
echo "pid $$"
echo "args $*"
echo "stdin $(cat)"
echo "var $HELIKON_TEST_VAR"
grep SigIgn /proc/self/status
exit 7
`
	if err := os.WriteFile(agent, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// sh ignores SIGINT (trap ''), then becomes helikon (exec), which
	// becomes the stand-in.
	cmd := exec.Command("sh", "-c", `trap '' INT; exec "$0" "$@"`, bin, "run", "--model", "x", "a prompt")
	cmd.Stdin = strings.NewReader("from stdin")
	cmd.Env = append(os.Environ(), "HELIKON_TEST_VAR=passed")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("exit: %v; want status 7\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{"pid " + strconv.Itoa(cmd.Process.Pid) + "\n", "args run --model x a prompt\n", "stdin from stdin\n", "var passed\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the agent binary's report lacks %q:\n%s", want, got)
		}
	}
	_, mask, _ := strings.Cut(got, "SigIgn:")
	ign, err := strconv.ParseUint(strings.TrimSpace(mask), 16, 64)
	if err != nil || ign&(1<<(2-1)) == 0 {
		t.Errorf("SIGINT, ignored by the caller, is not ignored in the agent binary: SigIgn %q (%v)", mask, err)
	}

	// Without an agent binary beside it or on PATH: 125, saying how to build it.
	if err := os.Remove(agent); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(bin, "help", "mcp")
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	out, err = cmd.CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != cli.ExitUsage || !strings.Contains(string(out), cli.BuildCommand) {
		t.Errorf("no agent binary: %v %q; want exit %d naming %q", err, out, cli.ExitUsage, cli.BuildCommand)
	}
}
