package cli_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/cli/clitest"
)

// asCLIEnv makes this test binary behave as the helikon binary (its
// commands are package cli's), so that a completion script can run it.
const asCLIEnv = "HELIKON_TEST_AS_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(asCLIEnv) == "1" {
		env := &cli.Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
		os.Exit(cli.Main(context.Background(), env, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func TestCompleteInProcess(t *testing.T) {
	for _, tt := range []struct {
		words []string
		want  []string // all of them, in this order
	}{
		{[]string{""}, nil}, // checked below: every visible command
		{[]string{"ex"}, []string{"exec"}},
		{[]string{"--v"}, []string{"--version"}},
		{[]string{"exec", "--back"}, []string{"--backend"}},
		{[]string{"exec", "--backend", "o"}, []string{"os"}},
		{[]string{"exec", "--backend=h"}, []string{"--backend=host"}},
		{[]string{"exec", "--time"}, []string{"--timeout"}},
		{[]string{"exec", "--allow-network", ""}, nil}, // a bool flag takes no value
		{[]string{"exec", "--", "--back"}, nil},        // the program's arguments
		{[]string{"completion", ""}, []string{"bash", "fish", "zsh"}},
		{[]string{"help", "doc"}, []string{"doctor"}},
		{[]string{"version", "--j"}, []string{"--json"}},
		{[]string{"__complete", ""}, nil}, // hidden
	} {
		code, out, errs := clitest.Run(t, "", append([]string{"__complete"}, tt.words...)...)
		got := strings.Fields(out)
		if code != 0 || errs != "" {
			t.Errorf("__complete %q: status %d, stderr %q", tt.words, code, errs)
		}
		if len(tt.words) == 1 && tt.words[0] == "" {
			for _, c := range []string{"exec", "run", "mcp", "tool", "version", "completion", "--version"} {
				if !slices.Contains(got, c) {
					t.Errorf("__complete '': %q lacks %s", got, c)
				}
			}
			if slices.Contains(got, "__complete") {
				t.Errorf("__complete '' offers the hidden __complete")
			}
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("__complete %q = %q, want %q", tt.words, got, tt.want)
		}
	}
}

func TestHiddenCommandIsNotInTheUsage(t *testing.T) {
	_, out, _ := clitest.Run(t, "", "--help")
	if strings.Contains(out, "__complete") || !strings.Contains(out, "completion") {
		t.Errorf("usage:\n%s", out)
	}
}

// TestBashCompletion loads helikon completion bash into bash and runs its
// completion function, as bash does on TAB, on a few command lines; the
// helikon it asks is this test binary.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, script, _ := clitest.Run(t, "", "completion", "bash")
	file := filepath.Join(t.TempDir(), "helikon.bash")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		words []string // COMP_WORDS after the program, as bash splits them; the last is the current word
		want  []string
	}{
		{[]string{"doc"}, []string{"doctor"}},
		{[]string{"exec", "--backend", "ho"}, []string{"host"}},
		{[]string{"exec", "--backend", "=", "ho"}, []string{"host"}}, // --backend=ho
		{[]string{"exec", "--backend", "="}, []string{"=host", "=local", "=os"}},
		{[]string{"exec", "--allow-n"}, []string{"--allow-network"}},
		{[]string{"completion", "z"}, []string{"zsh"}},
	} {
		words := append([]string{self}, tt.words...)
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		prog := "source " + file + "\ncomplete -p helikon >/dev/null || exit 9\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_helikon\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
		cmd.Env = append(os.Environ(), asCLIEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		got := strings.Fields(string(out))
		// Other packages' backends may add names: want must be among them.
		if !containsAll(got, tt.want) || len(got) == 0 {
			t.Errorf("bash completes %q to %q, want %q", tt.words, got, tt.want)
		}
	}
}

func containsAll(got, want []string) bool {
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}
