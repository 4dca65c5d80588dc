package egress_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paigasus/helikon/egress"
)

// TestMain doubles as the proxy process of BenchmarkIdleTunnelMemory, so
// that the proxy's memory is measured apart from the clients'.
func TestMain(m *testing.M) {
	if port := os.Getenv("EGRESS_BENCH_PROXY_PORT"); port != "" {
		n, _ := strconv.Atoi(port)
		p := &egress.Proxy{
			Filter:   egress.AllowAll().WithPorts(n).WithPrivate(true),
			MaxConns: 10000,
			Logger:   slog.New(slog.DiscardHandler),
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(ln.Addr().String())
		// Collect regularly, as a long-running proxy's allocations would,
		// so the measurement shows what idle tunnels hold, not garbage
		// (and not the standard library's pooled splice pipes).
		go func() {
			for {
				time.Sleep(100 * time.Millisecond)
				runtime.GC()
			}
		}()
		p.Serve(ln)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// sinkServer counts what each connection sends and, at EOF, answers the
// count as 8 bytes, so a writer knows everything arrived.
func sinkServer(b testing.TB) net.Listener {
	ln := listen(b)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 256<<10)
				var n uint64
				for {
					k, err := c.Read(buf)
					n += uint64(k)
					if err != nil {
						break
					}
				}
				binary.Write(c, binary.BigEndian, n)
			}()
		}
	}()
	return ln
}

func openTunnel(b testing.TB, proxyAddr, target string) net.Conn {
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		b.Fatal(err)
	}
	io.WriteString(c, connectHead(target))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("CONNECT %s: %v %v", target, resp, err)
	}
	if br.Buffered() > 0 {
		b.Fatal("unexpected bytes after 200")
	}
	return c
}

// BenchmarkTunnelThroughput sends data one way over loopback, directly to a
// sink and through a CONNECT tunnel of the proxy to the same sink, in one
// run; compare the MB/s of the two sub-benchmarks.
func BenchmarkTunnelThroughput(b *testing.B) {
	sink := sinkServer(b)
	port := portOf(b, sink)
	p := &egress.Proxy{
		Filter:   egress.DenyAll().AllowDomains("sink.test").WithPorts(port),
		Resolver: newResolver(map[string]string{"sink.test": "127.0.0.1"}),
		CheckAddr: func(a netip.Addr) error {
			if a.IsLoopback() {
				return nil
			}
			return fmt.Errorf("not loopback")
		},
	}
	proxyAddr := startProxy(b, p)
	const chunk = 256 << 10
	buf := bytes.Repeat([]byte("x"), chunk)
	run := func(b *testing.B, dial func() net.Conn) {
		c := dial()
		defer c.Close()
		b.SetBytes(chunk)
		b.ResetTimer()
		for range b.N {
			if _, err := c.Write(buf); err != nil {
				b.Fatal(err)
			}
		}
		c.(*net.TCPConn).CloseWrite()
		var n uint64
		if err := binary.Read(c, binary.BigEndian, &n); err != nil || n != uint64(b.N)*chunk {
			b.Fatalf("sink got %d bytes (%v), want %d", n, err, uint64(b.N)*chunk)
		}
	}
	b.Run("direct", func(b *testing.B) {
		run(b, func() net.Conn {
			c, err := net.Dial("tcp", sink.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			return c
		})
	})
	b.Run("proxy", func(b *testing.B) {
		run(b, func() net.Conn { return openTunnel(b, proxyAddr, "sink.test:"+strconv.Itoa(port)) })
	})
	// paired alternates 64 MiB direct and 64 MiB through the proxy in each
	// iteration, so that load from other processes hits both alike, and
	// reports proxy throughput as a fraction of direct.
	b.Run("paired", func(b *testing.B) {
		const rounds = 256 // 256 × 256 KiB = 64 MiB
		send := func(c net.Conn) time.Duration {
			start := time.Now()
			for range rounds {
				if _, err := c.Write(buf); err != nil {
					b.Fatal(err)
				}
			}
			c.(*net.TCPConn).CloseWrite()
			var n uint64
			if err := binary.Read(c, binary.BigEndian, &n); err != nil || n != rounds*chunk {
				b.Fatalf("sink got %d bytes (%v)", n, err)
			}
			c.Close()
			return time.Since(start)
		}
		var direct, proxied time.Duration
		b.SetBytes(2 * rounds * chunk)
		for range b.N {
			c, err := net.Dial("tcp", sink.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			direct += send(c)
			proxied += send(openTunnel(b, proxyAddr, "sink.test:"+strconv.Itoa(port)))
		}
		b.ReportMetric(float64(direct)/float64(proxied), "proxy/direct")
	})
}

var idleOnce struct {
	sync.Once
	perTunnel float64
	fds       float64
	err       error
}

// BenchmarkIdleTunnelMemory opens 1000 idle tunnels through a proxy running
// in its own process and reports the growth of that process's resident set
// per tunnel. The measurement runs once; use -benchtime=1x.
func BenchmarkIdleTunnelMemory(b *testing.B) {
	const n = 1000
	idleOnce.Do(func() {
		echo := echoServer(b)
		port := portOf(b, echo)
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "EGRESS_BENCH_PROXY_PORT="+strconv.Itoa(port))
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			idleOnce.err = err
			return
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		addr, err := bufio.NewReader(out).ReadString('\n')
		if err != nil {
			idleOnce.err = err
			return
		}
		addr = strings.TrimSpace(addr)
		target := "127.0.0.1:" + strconv.Itoa(port)
		// Warm up: the first tunnels allocate pools that later ones reuse.
		for range 20 {
			openTunnel(b, addr, target).Close()
		}
		time.Sleep(200 * time.Millisecond)
		before, fdsBefore := rss(cmd.Process.Pid), countFDs(cmd.Process.Pid)
		conns := make([]net.Conn, 0, n)
		for range n {
			c := openTunnel(b, addr, target)
			io.WriteString(c, "x") // one byte each way, then silence
			c.Read(make([]byte, 1))
			conns = append(conns, c)
		}
		time.Sleep(500 * time.Millisecond)
		after := rss(cmd.Process.Pid)
		idleOnce.perTunnel = float64(after-before) / n
		idleOnce.fds = float64(countFDs(cmd.Process.Pid)-fdsBefore) / n
		for _, c := range conns {
			c.Close()
		}
	})
	if idleOnce.err != nil {
		b.Fatal(idleOnce.err)
	}
	b.ReportMetric(idleOnce.perTunnel, "RSS-B/tunnel")
	b.ReportMetric(idleOnce.fds, "fds/tunnel")
}

func countFDs(pid int) int {
	ents, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/fd")
	return len(ents)
}

// rss reads VmRSS of pid in bytes.
func rss(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
