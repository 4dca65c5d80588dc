//go:build linux

package ossandbox

import (
	"bufio"
	"context"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
)

// BenchmarkLoopbackSpawn compares /bin/true through the OS sandbox without
// a network, with the session's loopback namespace (Options.Loopback, the
// namespace made by the first command; each command then enters it) and
// with the egress proxy in it; compare ns/op between sub-benchmarks, in
// one run:
//
//	go test -run '^$' -bench LoopbackSpawn -count 5 -benchtime 300x ./backend/ossandbox/
func BenchmarkLoopbackSpawn(b *testing.B) {
	for _, c := range []struct {
		name string
		o    Options
	}{{"no-network", Options{}}, {"loopback", Options{Loopback: true}}, {"egress", Options{Egress: &Egress{}}}} {
		be, _ := newTestBackend(b, c.o)
		b.Cleanup(func() { be.Close() })
		b.Run(c.name, func(b *testing.B) {
			reportCPU(b)
			for b.Loop() {
				res, err := be.Run(context.Background(), &backend.Request{Argv: []string{"/bin/true"}})
				if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
}

// BenchmarkLoopbackSession is the session's set-up: a new backend's first
// command (New, the launcher's start for unprivileged callers, the
// namespace, /bin/true, Close) without and with Options.Loopback; and, for
// root callers, the namespace alone (unshare, loopback up, the descriptor):
//
//	go test -run '^$' -bench LoopbackSession -count 5 -benchtime 50x ./backend/ossandbox/
func BenchmarkLoopbackSession(b *testing.B) {
	if isRoot() {
		b.Run("netns-alone", func(b *testing.B) {
			for b.Loop() {
				n, err := launcher.NewNetNS(false)
				if err != nil {
					b.Fatal(err)
				}
				n.Close()
			}
		})
	}
	for _, c := range []struct {
		name string
		o    Options
	}{{"first-command", Options{}}, {"first-command-loopback", Options{Loopback: true}}} {
		b.Run(c.name, func(b *testing.B) {
			root := b.TempDir()
			c.o.ReadPaths = []string{attackBin(b)}
			for b.Loop() {
				be, err := New(root, &c.o)
				if err != nil {
					b.Fatal(err)
				}
				res, err := be.Run(context.Background(), &backend.Request{Argv: []string{"/bin/true"}})
				if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
					b.Fatal(err, res)
				}
				be.Close()
			}
		})
	}
}

// TestLoopbackLatency reports (it asserts no times) the mean latency of an
// HTTP request from a command to a server in its session's namespace, and
// of the same client and server programs on the host, over a kept-alive
// connection and over a new connection per request, and their ratio. It
// runs when HELIKON_BENCH_LOOPBACK is set:
//
//	HELIKON_BENCH_LOOPBACK=1 go test -run TestLoopbackLatency -v ./backend/ossandbox/
func TestLoopbackLatency(t *testing.T) {
	if os.Getenv("HELIKON_BENCH_LOOPBACK") == "" {
		t.Skip("a measurement: set HELIKON_BENCH_LOOPBACK=1")
	}
	const n = "2000"
	b, _ := newTestBackend(t, Options{Loopback: true})
	defer b.Close()
	addr := freeLoopback(t)
	startServer(t, b, addr, "hello")
	// The same server program on the host.
	hostAddr := freeLoopback(t)
	srv := exec.Command(attackBin(t), "net-serve", hostAddr, "hello")
	srv.Env = append(os.Environ(), attackEnv+"=1")
	out, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Process.Kill(); _ = srv.Wait() }()
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.Contains(line, "listening") {
		t.Fatalf("the host's server: %q", line)
	}
	// The same pair confined alike but in the host's namespace
	// (AllowNetwork): what the sandbox costs apart from the namespace.
	nb, _ := newTestBackend(t, Options{AllowNetwork: true})
	defer nb.Close()
	netAddr := freeLoopback(t)
	startServer(t, nb, netAddr, "hello")
	for _, mode := range []string{"keepalive", "new"} {
		var ns [3]float64
		for round := range 3 { // interleaved, the best of three each
			in := sandboxed(t, b, nil, "http-bench", "http://"+addr+"/", n, mode)
			host := unconfined(t, b.Dir(), nil, "http-bench", "http://"+hostAddr+"/", n, mode)
			confined := sandboxed(t, nb, nil, "http-bench", "http://"+netAddr+"/", n, mode)
			for i, r := range []attackResult{in, host, confined} {
				v, err := strconv.ParseFloat(strings.TrimSpace(r.out), 64)
				if err != nil || r.code != 0 {
					t.Fatalf("http-bench: %v", r)
				}
				if round == 0 || v < ns[i] {
					ns[i] = v
				}
			}
		}
		t.Logf("%s: session namespace %.0f ns/request, host %.0f ns/request (ratio %.2f); confined in the host's namespace (AllowNetwork) %.0f ns/request (session/confined %.2f)",
			mode, ns[0], ns[1], ns[0]/ns[1], ns[2], ns[0]/ns[2])
	}
}

// freeLoopback returns an address of the host's loopback that was free.
func freeLoopback(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
