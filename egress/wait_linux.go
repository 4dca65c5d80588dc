package egress

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// waitReadable blocks until src has data to read (or EOF, or an error), or
// its read deadline passes, without consuming anything, and returns how many
// bytes are queued (0 at EOF, on error, or when it cannot tell).
//
// The pump waits here, and then splices exactly what is queued, because the
// standard library's splice(2) loop keeps its pipe (two file descriptors and
// a kernel buffer) while it waits for more data: an idle tunnel would pin
// two pipes.
func waitReadable(src net.Conn) (int64, error) {
	sc, ok := src.(syscall.Conn)
	if !ok {
		return 0, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, nil
	}
	var (
		queued int
		b      [1]byte
	)
	err = rc.Read(func(fd uintptr) bool {
		if n, err := unix.IoctlGetInt(int(fd), unix.SIOCINQ); err == nil && n > 0 {
			queued = n
			return true
		}
		_, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		return err != unix.EAGAIN
	})
	return int64(queued), err
}
