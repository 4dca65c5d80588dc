package shellcmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// TestStartupFileAttacksAgainstBash runs each attack (start-up files,
// exported functions, the command hash table, named descriptors) with the real bash and
// checks that it does run touch without the command showing it, and that
// Analyze then either lists touch or reports the line unresolved. A deny
// list of touch would otherwise pass these lines.
func TestStartupFileAttacksAgainstBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: the attacks cannot be replayed")
	}
	attacks := []string{
		"BASH_ENV='$(touch pwned)' bash -c :",
		"BASH_ENV=<(echo touch pwned) bash -c :",
		"export BASH_ENV='`touch pwned`'; bash -c :",
		"env 'BASH_ENV=$(touch pwned)' bash -c :",
		"env 'BASH_FUNC_ls%%=() { touch pwned; }' bash -c ls",
		"bash --rcfile <(echo touch pwned) -i <<< ''",
		"bash --init-file <(echo touch pwned) -i <<< ''",
		"env A=1 \"${x:=touch}\" pwned",
		"BASH_CMDS['ls']=$(command -v touch); ls pwned",
		"x='a[$(touch pwned)]'; echo {a[x]}>/dev/null",
		"bash < <(echo touch pwned)",
		"bash /dev/fd/3 3< <(echo touch pwned)",
		"echo touch pwned | bash /dev/stdin",
	}
	if _, err := exec.LookPath("sh"); err == nil {
		attacks = append(attacks, "ENV='$(touch pwned)' sh -i <<< ''")
	}
	for _, cmd := range attacks {
		dir := t.TempDir()
		c := exec.Command(bash, "-c", cmd)
		c.Dir = dir
		c.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		c.Run() // the exit status does not matter, the file does
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err != nil {
			t.Errorf("%q did not run touch under this bash, so the case tests nothing: %v", cmd, err)
			continue
		}
		a := Analyze(cmd)
		if a.Unresolved == "" && !slices.Contains(a.Programs(), "touch") {
			t.Errorf("Analyze(%q) = %v, resolved, but bash ran touch", cmd, a.Programs())
		}
	}
}
