package agentcli_test

import (
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli/clitest"
)

// TestMaxProcessesBuildsTheProcessTools: the process tools are built only
// with --max-processes, and say so without it.
func TestMaxProcessesBuildsTheProcessTools(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := clitest.Run(t, "", "tool", "--root", dir, "--backend", "host", "BashList", `{}`)
	if code == 0 || !strings.Contains(stdout+stderr, "--max-processes") {
		t.Errorf("BashList without --max-processes: exit %d, %s %s; want a failure naming --max-processes", code, stdout, stderr)
	}
	code, stdout, stderr = clitest.Run(t, "", "tool", "--root", dir, "--backend", "host", "--max-processes", "2", "BashList", `{}`)
	if code != 0 || !strings.Contains(stdout, `"shells":[]`) {
		t.Errorf("BashList with --max-processes 2: exit %d, %s %s", code, stdout, stderr)
	}
}
