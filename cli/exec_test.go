package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
)

func TestExecCommand(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"status", "", []string{"exec", "--backend", "host", "--root", dir, "--", "sh", "-c", "echo out; echo err >&2; exit 4"}, 4, "out\n", "err"},
		{"argv is not a shell line", "", []string{"exec", "--backend", "host", "--root", dir, "--", "echo", "$HOME;", "`id`"}, 0, "$HOME; `id`\n", ""},
		{"stdin passes through", "piped\n", []string{"exec", "--backend", "host", "--root", dir, "--", "cat"}, 0, "piped\n", ""},
		{"working directory", "", []string{"exec", "--backend", "host", "--root", dir, "--", "pwd"}, 0, dir, ""},
		{"signal", "", []string{"exec", "--backend", "host", "--root", dir, "--", "sh", "-c", "kill -TERM $$"}, 128 + 15, "", ""},
		{"timeout", "", []string{"exec", "--backend", "host", "--root", dir, "--timeout", "200ms", "--", "sleep", "60"}, 124, "", "timed out"},
		{"cpu limit", "", []string{"exec", "--backend", "host", "--root", dir, "--cpu", "1", "--", "sh", "-c", "while :; do :; done"}, 128 + 9, "", ""},
		{"file-size limit", "", []string{"exec", "--backend", "host", "--root", dir, "--fsize", "4096", "--", "sh", "-c", "head -c 100000 /dev/zero > big; echo $?"}, 0, "153\n", ""},
		{"memory limit", "", []string{"exec", "--backend", "host", "--root", dir, "--mem", "536870912", "--", "grep", "Max address space", "/proc/self/limits"}, 0, "536870912            536870912", ""},
		{"memory limit stops a program", "", []string{"exec", "--backend", "host", "--root", dir, "--mem", "1048576", "--", "true"}, 127, "", "shared"},
		{"missing program", "", []string{"exec", "--backend", "host", "--root", dir, "--", "no-such-program-xyz"}, 127, "", "not found"},
		{"no program", "", []string{"exec", "--backend", "host", "--"}, 125, "", "name the program"},
		{"unknown backend", "", []string{"exec", "--backend", "nope", "--", "true"}, 125, "", "unknown backend"},
		{"egress with host fails closed", "", []string{"exec", "--backend", "host", "--egress-allow", "example.com", "--", "true"}, 125, "", "cannot restrict"},
		{"loopback with forkd is refused, not ignored", "", []string{"exec", "--backend", "forkd", "--loopback", "--", "true"}, 125, "", "--loopback is not supported with --backend forkd"},
		{"help", "", []string{"exec", "--help"}, 0, "Usage: helikon exec", ""},
		{"terminal", "", []string{"exec", "-t", "--backend", "host", "--root", dir, "--", "sh", "-c", "test -t 0 && test -t 1 && test -t 2 && echo onatty; stty size; echo err >&2; exit 3"}, 3, "onatty\r\n24 80\r\nerr", ""},
		{"terminal input", "typed\n", []string{"exec", "-t", "--backend", "host", "--root", dir, "--", "sh", "-c", "read x; echo \"got $x\""}, 0, "got typed", ""},
		{"terminal end of input", "abc\n", []string{"exec", "-t", "--backend", "host", "--root", dir, "--", "sh", "-c", "cat; echo done"}, 0, "done", ""},
		{"terminal timeout", "", []string{"exec", "-t", "--backend", "host", "--root", dir, "--timeout", "200ms", "--", "sleep", "60"}, 124, "", "timed out"},
		{"terminal in the OS sandbox", "", []string{"exec", "-t", "--backend", "os", "--root", dir, "--", "sh", "-c", "test -t 0 && echo onatty; exit 5"}, 5, "onatty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := clitest.Run(t, tt.stdin, tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("exit %d stdout %q stderr %q; want %d, %q, %q", code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
			}
		})
	}
	if fi, err := os.Stat(filepath.Join(dir, "big")); err != nil || fi.Size() > 4096 {
		t.Errorf("the file-size limit did not hold: %v %v", fi, err)
	}
}

func TestExecEnvFlag(t *testing.T) {
	t.Setenv("HELIKON_EXEC_TEST", "visible")
	t.Setenv("HELIKON_EXEC_API_KEY", "secret")
	dir := t.TempDir()
	_, stdout, _ := clitest.Run(t, "", "exec", "--backend", "host", "--root", dir, "--", "env")
	if strings.Contains(stdout, "visible") || strings.Contains(stdout, "secret") {
		t.Errorf("unlisted variables passed: %s", stdout)
	}
	_, stdout, _ = clitest.Run(t, "", "exec", "--backend", "host", "--root", dir, "--env", "HELIKON_EXEC_TEST", "--env", "HELIKON_EXEC_API_KEY", "--", "env")
	if !strings.Contains(stdout, "HELIKON_EXEC_TEST=visible") || !strings.Contains(stdout, "HELIKON_EXEC_API_KEY=secret") {
		t.Errorf("--env did not extend the allowlist: %s", stdout)
	}
}

// local is another name of the OS sandbox, the backend the workspace
// engine of this machine uses.
func TestLocalIsTheOSSandbox(t *testing.T) {
	dir := t.TempDir()
	codeOS, viaOS, _ := clitest.Run(t, "", "guarantees", "--backend", "os", "--root", dir)
	code, local, stderr := clitest.Run(t, "", "guarantees", "--backend", "local", "--root", dir)
	if code != codeOS || local != viaOS {
		t.Fatalf("guarantees --backend local: exit %d, %s %s; want what --backend os says (exit %d, %s)", code, local, stderr, codeOS, viaOS)
	}
	if code != 0 {
		t.Skipf("no OS sandbox here (exit %d): the exec below needs it", code)
	}
	if code, out, stderr := clitest.Run(t, "", "exec", "--backend", "local", "--root", dir, "--", "sh", "-c", "echo in; exit 5"); code != 5 || out != "in\n" {
		t.Fatalf("exec --backend local: exit %d, stdout %q, stderr %q; want 5 and in", code, out, stderr)
	}
}

// TestExecKeepsPolicyFilesReadOnly: under the OS sandbox, a program the
// command runs cannot change, replace or create the project's policy files,
// however it names them (the analyser never sees what a script does):
// the CLI has the backend mount their directories read-only.
func TestExecKeepsPolicyFilesReadOnly(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".helikon"), 0o755); err != nil {
		t.Fatal(err)
	}
	const orig = `{"permissions": {"deny": ["Bash"]}}`
	if err := os.WriteFile(filepath.Join(dir, ".helikon", "settings.json"), []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := clitest.Run(t, "", "guarantees", "--backend", "os", "--root", dir)
	if code != 0 {
		t.Skipf("no OS sandbox here (exit %d)", code)
	}
	if !strings.Contains(out, "read-only in the command's mount namespace: .helikon, .claude") {
		t.Errorf("the guarantees do not name the policy directories: %s", out)
	}
	const attack = `echo evil > .helikon/settings.json; mv .helikon x; rm -rf .helikon; mkdir -p .claude; echo evil > .claude/settings.json; echo evil > /proc/self/cwd/.claude/settings.local.json; echo done`
	code, out, stderr := clitest.Run(t, "", "exec", "--backend", "os", "--root", dir, "--", "sh", "-c", attack)
	if code != 0 || out != "done\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".helikon", "settings.json")); err != nil || string(b) != orig {
		t.Errorf(".helikon/settings.json is %q, %v; want it unchanged", b, err)
	}
	if ents, err := os.ReadDir(filepath.Join(dir, ".claude")); err != nil || len(ents) > 0 {
		t.Errorf(".claude holds %v, %v; want an empty directory", ents, err)
	}
}

// guarantees offers only the backends it builds: its help does not name
// docker, a session engine it refuses.
func TestGuaranteesHelpOffersWhatItBuilds(t *testing.T) {
	code, stdout, _ := clitest.Run(t, "", "guarantees", "--help")
	if code != 0 || strings.Contains(stdout, "docker") || !strings.Contains(stdout, "host") {
		t.Fatalf("guarantees --help: exit %d, stdout:\n%s\nwant 0, the backends it builds and no docker", code, stdout)
	}
}
