package launcher

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNetNSHasLoopbackOnly: a session's network namespace has loopback up
// and the proxy's socket in it; a thread that enters it reaches the
// proxy's socket and does not reach a listener of this program's
// namespace.
func TestNetNSHasLoopbackOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a network namespace outside the launcher needs root")
	}
	host, err := ListenProxy() // the same address, in this program's namespace
	if err != nil {
		t.Skipf("127.0.0.1:%d is taken here: %v", ProxyPort, err)
	}
	defer unix.Close(host)
	n, err := NewNetNS(true)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	var inside [2]error
	err = OnDiscardedThread(func() error {
		if err := EnterNetNS(n.NS); err != nil {
			return err
		}
		for i, port := range []int{ProxyPort, ProxyPort + 1} {
			fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				return err
			}
			inside[i] = unix.Connect(fd, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
			unix.Close(fd)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if inside[0] != nil {
		t.Errorf("the proxy's socket from inside: %v", inside[0])
	}
	if inside[1] == nil {
		t.Errorf("a port nothing listens on inside was reached")
	}
	// The proxy's socket is the namespace's: accept finds the connection
	// made from inside, and the host's socket on the same address none.
	if _, _, err := unix.Accept(n.Proxy); err != nil {
		t.Errorf("accept on the proxy's socket: %v", err)
	}
	unix.SetNonblock(host, true)
	if _, _, err := unix.Accept(host); err != unix.EAGAIN {
		t.Errorf("accept on the host's socket: %v; want EAGAIN (no connection)", err)
	}
}

// BenchmarkEnterNetNS is what a session's namespace adds to each command:
// a confining thread's setns, beside the same discarded thread without it
// (root):
//
//	go test -run '^$' -bench EnterNetNS -count 5 ./backend/ossandbox/internal/launcher/
func BenchmarkEnterNetNS(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("root")
	}
	n, err := NewNetNS(false)
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	b.Run("thread", func(b *testing.B) {
		for b.Loop() {
			_ = OnDiscardedThread(func() error { return nil })
		}
	})
	b.Run("thread-setns", func(b *testing.B) {
		for b.Loop() {
			if err := OnDiscardedThread(func() error { return EnterNetNS(n.NS) }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("create", func(b *testing.B) {
		for b.Loop() {
			m, err := NewNetNS(true)
			if err != nil {
				b.Fatal(err)
			}
			m.Close()
		}
	})
}
