//go:build unix

package fsroot

import "syscall"

// openReadFlags keep open(2) from blocking on a FIFO and from making a
// terminal device the controlling terminal.
const openReadFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
