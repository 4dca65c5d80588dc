package docker

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/moby/moby/client"

	"github.com/paigasus/helikon/backend"
)

// daemonRuntimes returns the runtimes the test daemon has, by name.
func daemonRuntimes(t *testing.T) map[string]bool {
	t.Helper()
	needDaemon(t)
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	info, err := cli.Info(context.Background(), client.InfoOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rts := map[string]bool{}
	for name := range info.Info.Runtimes {
		rts[name] = true
	}
	return rts
}

// TestGuaranteesComeFromTheRuntimesKernel: a runtime is virtualized when
// its containers were seen to run on a kernel other than the host's, never
// because of its name. The daemon of ci-setup.sh runsc-start has runsc
// (gVisor) and "kata", which is runc under a virtualizing runtime's name:
// the attack that a name-based guarantee falls for.
func TestGuaranteesComeFromTheRuntimesKernel(t *testing.T) {
	rts := daemonRuntimes(t)
	for _, tc := range []struct {
		runtime string
		virtual bool
		feature string
	}{
		{"runc", false, "kernel: the host's (runtime runc shares the host's kernel)"},
		{"runsc", true, "kernel: its own ("},
		{"kata", false, "kernel: the host's ("},
	} {
		t.Run(tc.runtime, func(t *testing.T) {
			if !rts[tc.runtime] {
				t.Skipf("the daemon has no runtime %s (ci-setup.sh runsc-start starts one that has)", tc.runtime)
			}
			e := newEngine(t, Options{Isolate: true, Runtime: tc.runtime})
			ws := create(t, e)
			want := backend.IsolationOSKernel
			if tc.virtual {
				want = backend.IsolationVirtualized
			}
			for name, g := range map[string]backend.Guarantees{"Engine": e.Guarantees(), "Workspace": ws.Guarantees()} {
				if g.Filesystem != want || g.Syscalls != want {
					t.Errorf("%s: %v, want filesystem and syscalls %v", name, g, want)
				}
				if !strings.Contains(strings.Join(g.Features, "; "), tc.feature) {
					t.Errorf("%s: features %q, want %q", name, g.Features, tc.feature)
				}
			}
			// What the commands see agrees: a kernel release other than this machine's (the daemon's) exactly
			// where the guarantees say virtualized.
			host, err := os.ReadFile("/proc/sys/kernel/osrelease")
			if err != nil {
				t.Fatal(err)
			}
			if got := sh(t, ws, "uname -r"); tc.virtual == (got == string(host)) {
				t.Errorf("uname -r in the container: %q, on the host: %q", got, host)
			}
		})
	}
}
