//go:build linux

package ossandbox

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/bashtool"
)

// BenchmarkSpawnTrue compares /bin/true started plainly with os/exec, through
// the host backend, and through the OS sandbox (Landlock, seccomp and, for
// root, namespaces and the pids cgroup). Compare ns/op between sub-benchmarks:
//
//	go test -run '^$' -bench SpawnTrue -count 10 ./backend/ossandbox/
func BenchmarkSpawnTrue(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	hb, err := host.NewDir(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	ob, _ := newTestBackend(b, Options{})
	for _, c := range []struct {
		name string
		be   backend.Backend
	}{{"host", hb}, {"os-sandbox", ob}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				res, err := c.be.Run(context.Background(), &backend.Request{Argv: []string{"/bin/true"}})
				if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkBashRoundTrip runs the Bash tool's whole call (JSON arguments in,
// JSON result out) of `true` over the host backend and over the OS sandbox.
func BenchmarkBashRoundTrip(b *testing.B) {
	hb, err := host.NewDir(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	ob, _ := newTestBackend(b, Options{})
	args := json.RawMessage(`{"command":"true"}`)
	for _, c := range []struct {
		name string
		be   backend.Backend
	}{{"host", hb}, {"os-sandbox", ob}} {
		b.Run(c.name, func(b *testing.B) {
			tool, err := bashtool.New[struct{}](c.be, nil)
			if err != nil {
				b.Fatal(err)
			}
			tc := helikon.NewToolContext(context.Background(), struct{}{}, nil)
			for b.Loop() {
				if _, err := tool.Invoke(tc, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
