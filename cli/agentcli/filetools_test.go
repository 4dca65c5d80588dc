package agentcli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
)

func TestFileToolsCommand(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	dir := filepath.Join(base, "root")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "outside.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		args   []string
		code   int
		stdout string
	}{
		{[]string{"tool", "Write", `{"path":"src/a.txt","content":"one\ntwo\n"}`, "--root", dir}, 0, `{"path":"src/a.txt","bytes_written":8,"created":true}`},
		{[]string{"tool", "Edit", `{"path":"src/a.txt","old_string":"two","new_string":"2"}`, "--root", dir}, 0, `{"path":"src/a.txt","replacements":1}`},
		{[]string{"tool", "Read", `{"path":"src/a.txt","offset":2}`, "--root", dir}, 0, `"content":"2\n","start_line":2,"end_line":2,"total_lines":2`},
		{[]string{"tool", "Read", `{"path":"../outside.txt"}`, "--root", dir}, 3, `"kind":"denied"`},
		{[]string{"tool", "Write", `{"path":"` + base + `/outside.txt","content":"x"}`, "--root", dir}, 3, `outside the sandbox root`},
		{[]string{"tool", "Read", `{"path":"nope.txt"}`, "--root", dir}, 1, `no such file: nope.txt`},
		{[]string{"tool", "Edit", `{"path":"src/a.txt","old_string":""}`, "--root", dir}, 2, `"kind":"invalid_args"`},
		{[]string{"tool", "Read", `{"path":"src/a.txt"}`, "--root", dir, "--deny", "Read(src/**)"}, 3, `denied by rule Read(src/**)`},
		{[]string{"tool", "Write", `{"path":"src/b.txt","content":"x"}`, "--root", dir, "--mode", "plan"}, 3, `plan mode`},
		{[]string{"tool", "Write", `{"path":"big.txt","content":"0123456789"}`, "--root", dir, "--max-write-bytes", "4"}, 2, `over the 4 B limit`},
	}
	for _, s := range steps {
		code, stdout, stderr := clitest.Run(t, "", s.args...)
		if code != s.code || !strings.Contains(stdout, s.stdout) {
			t.Errorf("%s %s: exit %d, stdout %s (stderr %s); want exit %d and %q", s.args[1], s.args[2], code, stdout, stderr, s.code, s.stdout)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(base, "outside.txt")); string(b) != "secret" {
		t.Errorf("outside file changed: %q", b)
	}
}
