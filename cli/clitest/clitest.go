// Package clitest runs the helikon CLI in-process for the tests of packages
// cli and agentcli.
package clitest

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/paigasus/helikon/cli"
)

// Run runs the CLI with args and stdin as its standard input and an empty
// environment, and returns the exit status, stdout and stderr. The commands
// are those registered in the test binary: package cli's, and the agent
// commands where package agentcli is linked.
func Run(t testing.TB, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code = cli.Main(context.Background(), env, args)
	return code, out.String(), errb.String()
}
