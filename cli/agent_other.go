//go:build !unix

package cli

import (
	"errors"
	"os"
	"os/exec"
)

// replaceProcess runs the program at path with args where there is no
// execve: as a child with this process's standard streams and environment,
// and then exits with its status. It returns only when the program could not
// be started.
func replaceProcess(path string, args []string) error {
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		os.Exit(0)
	case errors.As(err, &ee):
		os.Exit(ee.ExitCode())
	}
	return err
}
