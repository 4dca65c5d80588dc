// Package adaptertest holds what the framework adapters' tests
// (adapters/einoadapter, adapters/genkitadapter) share: the places a
// scripted model's calls run in, the OS sandbox and a Docker workspace,
// each with the check that an approved command really ran contained.
package adaptertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/internal/dockertest"
	"github.com/paigasus/helikon/toolbox"
)

// Command is the approved command of the adapters' scripted runs: it
// leaves made.txt, and the marks [Where.Check] reads (nnp.txt: the
// no_new_privs flag it ran with; host.txt: the host name it saw).
const Command = "touch made.txt; grep NoNewPrivs /proc/self/status > nnp.txt; hostname > host.txt"

// Where is a place the calls of a test run in.
type Where struct {
	// Name names the subtest.
	Name string
	// Open sets o up to run in this place over root (a directory of the
	// test), or skips the test where the place is missing.
	Open func(t *testing.T, root string, o *toolbox.Options)
	// Check fails the test unless [Command] ran in this place, reading
	// its marks under root.
	Check func(t *testing.T, root string)
}

// Wheres are the OS sandbox (the toolbox's default for Bash, skipped
// where the kernel has none) and a Docker workspace with root
// bind-mounted (package dockertest: skipped without a daemon, failing
// with $HELIKON_REQUIRE_DOCKER, which CI sets).
var Wheres = []Where{
	{
		Name: "ossandbox",
		Open: func(t *testing.T, _ string, _ *toolbox.Options) {
			if s := ossandbox.Probe(); !s.Available {
				t.Skipf("no OS sandbox: %s", s.Reason)
			}
		},
		Check: noNewPrivs,
	},
	{
		Name: "docker",
		Open: func(t *testing.T, root string, o *toolbox.Options) {
			o.Workspace = dockertest.Bind(t, root)
		},
		Check: func(t *testing.T, root string) {
			noNewPrivs(t, root)
			// A container has a host name of its own (its id).
			b, err := os.ReadFile(filepath.Join(root, "host.txt"))
			host, _ := os.Hostname()
			if got := strings.TrimSpace(string(b)); err != nil || got == "" || got == host {
				t.Errorf("the approved command did not run in a container (its host name %q, this host's %q, %v)", got, host, err)
			}
		},
	},
}

// noNewPrivs checks that the command ran with no_new_privs, which both
// places set and the test process does not have.
func noNewPrivs(t *testing.T, root string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(root, "nnp.txt")); err != nil || !strings.Contains(string(b), "1") {
		t.Errorf("the approved command ran without no_new_privs, so not contained (NoNewPrivs: %q, %v)", b, err)
	}
}
