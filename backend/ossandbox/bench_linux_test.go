//go:build linux

package ossandbox

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/tool/bashtool"
)

// reportCPU reports the CPU time (user and system, of this program and of
// the commands it waited for) per operation as cpu-ns/op: on a loaded
// machine it is steadier than wall time, which includes waiting for a CPU.
// Call it before the loop; it reports when the benchmark ends.
func reportCPU(b *testing.B) {
	cpu := func() time.Duration {
		var self, kids unix.Rusage
		_ = unix.Getrusage(unix.RUSAGE_SELF, &self)
		_ = unix.Getrusage(unix.RUSAGE_CHILDREN, &kids)
		d := time.Duration(0)
		for _, tv := range []unix.Timeval{self.Utime, self.Stime, kids.Utime, kids.Stime} {
			d += time.Duration(tv.Nano())
		}
		return d
	}
	start := cpu()
	b.Cleanup(func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpu()-start)/float64(b.N), "cpu-ns/op")
		}
	})
}

// BenchmarkSpawnTrue compares /bin/true started plainly with os/exec, through
// the host backend, and through the OS sandbox (Landlock, seccomp and, for
// root, namespaces and the pids cgroup), and through it with two
// read-only paths (the CLI's policy directories). Compare ns/op (and cpu-ns/op, which
// a loaded machine disturbs less) between sub-benchmarks:
//
//	go test -run '^$' -bench SpawnTrue -count 10 ./backend/ossandbox/
func BenchmarkSpawnTrue(b *testing.B) {
	b.Run("plain", func(b *testing.B) {
		reportCPU(b)
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	hb, err := host.New(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	ob, _ := newTestBackend(b, Options{})
	// The policy directories as the CLI passes them: a read-only mount
	// each in every command's namespace, and their lookup before it.
	rob, _ := newTestBackend(b, Options{ReadOnlyPaths: []string{".helikon", ".claude"}})
	b.Cleanup(func() { ob.Close(); rob.Close() })
	for _, c := range []struct {
		name string
		be   backend.Backend
	}{{"host", hb}, {"os-sandbox", ob}, {"os-sandbox-read-only-paths", rob}} {
		b.Run(c.name, func(b *testing.B) {
			reportCPU(b)
			for b.Loop() {
				res, err := c.be.Run(context.Background(), &backend.Request{Argv: []string{"/bin/true"}})
				if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkSpawnTrueToolchain is BenchmarkSpawnTrue's os-sandbox case
// with and without the toolchain rules (issue 37): no-path grants no PATH
// tree (NoPath, as before them); path grants this process's PATH, as
// helikon exec does (a developer's machine: ~/go/bin, ~/.cargo/bin with
// ~/.rustup, pyenv's shims and root); path-read-caches adds the caches;
// fake-home grants the fake home's pyenv, nvm, cargo and pipx trees, with
// the credential files cut out of them. rules/op is the number of
// read-only Landlock rules the grants make (beyond the system paths):
//
//	go test -run '^$' -bench SpawnTrueToolchain -count 10 ./backend/ossandbox/
func BenchmarkSpawnTrueToolchain(b *testing.B) {
	bench := func(name string, opts Options) {
		ob, _ := newTestBackend(b, opts)
		b.Cleanup(func() { ob.Close() })
		b.Run(name, func(b *testing.B) {
			reportCPU(b)
			for b.Loop() {
				res, err := ob.Run(context.Background(), &backend.Request{Argv: []string{"/bin/true"}})
				if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
			b.ReportMetric(float64(len(ob.readPaths)-1), "rules") // less the attack binary's
		})
		// What the rules add to each command's start, alone: building
		// the Landlock ruleset (a root caller's thread does it per
		// command; the launcher does the same).
		b.Run(name+"/ruleset", func(b *testing.B) {
			td := tempDir{path: b.TempDir()}
			for b.Loop() {
				rs, err := ob.buildRuleset(td, false)
				if err != nil {
					b.Fatal(err)
				}
				rs.Close()
			}
			b.ReportMetric(float64(len(ob.readPaths)-1), "rules")
		})
	}
	bench("no-path", Options{NoPath: true})
	bench("path", Options{})
	bench("path-read-caches", Options{ReadCaches: true})
	home, path := makeFakeHome(b, b.TempDir())
	b.Setenv("HOME", home)
	b.Setenv("PATH", path)
	bench("fake-home", Options{})
}

// BenchmarkExplainToolchain is what New spends, once per backend (once
// per helikon exec), working out the toolchain grants of this process's
// PATH and home: resolving each PATH directory and the links in it, and
// splitting the trees around the hidden locations.
//
//	go test -run '^$' -bench ExplainToolchain ./backend/ossandbox/
func BenchmarkExplainToolchain(b *testing.B) {
	home, _ := os.UserHomeDir()
	for _, c := range []struct {
		name string
		opts Options
	}{{"no-path", Options{NoPath: true}}, {"path", Options{}}, {"path-read-caches", Options{ReadCaches: true}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := explainToolchain(os.Getenv("PATH"), home, &c.opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBashRoundTrip runs the Bash tool's whole call (JSON arguments in,
// JSON result out) of `true` over the host backend and over the OS sandbox.
func BenchmarkBashRoundTrip(b *testing.B) {
	hb, err := host.New(b.TempDir(), nil)
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
			reportCPU(b)
			for b.Loop() {
				if _, err := tool.Invoke(tc, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSpawnLauncherPerCommand starts /bin/true through a launcher of
// its own per command (unprivileged callers where the long-lived launcher
// cannot run), the caller mapped to its own ids (the launcher then keeps
// its capabilities across its exec as ambient ones) and to root
// (MapRootUser, no ambient capabilities needed): what the identity costs
// per launcher start.
//
//	go test -run '^$' -bench SpawnLauncherPerCommand -count 10 ./backend/ossandbox/
func BenchmarkSpawnLauncherPerCommand(b *testing.B) {
	if isRoot() {
		b.Skip("root callers do not use the launcher; run the test binary as an unprivileged user")
	}
	for _, c := range []struct {
		name string
		opts Options
	}{{"own-ids", Options{}}, {"map-root-user", Options{MapRootUser: true}}} {
		b.Run(c.name, func(b *testing.B) {
			ob, _ := newTestBackend(b, c.opts)
			if !ob.userns {
				b.Skipf("user namespaces are unavailable here: %s", ob.usernsWhy)
			}
			ob.server = false
			reportCPU(b)
			for b.Loop() {
				res, err := ob.Run(context.Background(), &backend.Request{Argv: []string{"/bin/true"}})
				if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
}
