package ossandbox

import "golang.org/x/sys/unix"

// The legacy calls the set-ID attack makes where the architecture has them.
const (
	sysCreat = unix.SYS_CREAT
	sysOpen  = unix.SYS_OPEN
)
