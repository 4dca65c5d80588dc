// Command newpgrp moves itself into a process group of its own (staying in
// its session) and runs its arguments: the process that leaves a command's
// group without leaving its session, for the kill tests of package
// workspace/docker. busybox sh has no job control without a terminal, so no
// shell command does this there.
package main

import (
	"fmt"
	"os"
	"syscall"
)

func main() {
	if err := syscall.Setpgid(0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "newpgrp:", err)
		os.Exit(125)
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: newpgrp PROGRAM [ARG...]")
		os.Exit(2)
	}
	err := syscall.Exec(os.Args[1], os.Args[1:], os.Environ())
	fmt.Fprintln(os.Stderr, "newpgrp:", err)
	os.Exit(127)
}
