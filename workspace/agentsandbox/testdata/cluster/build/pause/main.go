// Command pause is the pod sandbox's process for the test cluster (containerd's sandbox_image): it waits for
// SIGTERM or SIGINT and reaps the zombies it inherits. The upstream pause image comes from a container registry,
// which the test cluster does not use; this is the same few lines of behaviour, built from source.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 8)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range c {
		if s != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var ws syscall.WaitStatus
			if pid, _ := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); pid <= 0 {
				break
			}
		}
	}
}
