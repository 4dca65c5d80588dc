package seccomp

import "golang.org/x/sys/unix"

// nativeOnly lists the table entries that exist only on this architecture.
var nativeOnly = map[string]uintptr{
	"iopl": unix.SYS_IOPL, "ioperm": unix.SYS_IOPERM,
	"open": unix.SYS_OPEN, "creat": unix.SYS_CREAT, "chmod": unix.SYS_CHMOD, "mknod": unix.SYS_MKNOD,
}
