package agentcli

import (
	"os"

	"golang.org/x/sys/unix"
)

// holdSignalKeys stops the terminal on stdin turning Ctrl-C into SIGINT
// until the returned func is called. liner shows a prompt before it does
// the same, so a Ctrl-C typed right after an approval's prompt appears
// would otherwise cancel the turn with the prompt still reading; held, it
// reaches liner as a key, which cancels the turn as well.
func holdSignalKeys() (restore func()) {
	fd := int(os.Stdin.Fd())
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil || t.Lflag&unix.ISIG == 0 {
		return func() {}
	}
	saved := *t
	t.Lflag &^= unix.ISIG
	if unix.IoctlSetTermios(fd, unix.TCSETS, t) != nil {
		return func() {}
	}
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, &saved) }
}
