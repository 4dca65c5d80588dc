package cli_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/cli"
)

// refuser is a backend that runs nothing: every command exits 1.
type refuser struct{}

func (refuser) Run(context.Context, *backend.Request) (*backend.Result, error) {
	code := 1
	return &backend.Result{ExitCode: &code}, nil
}

func (refuser) Guarantees() backend.Guarantees {
	return backend.Guarantees{
		Filesystem: backend.IsolationVirtualized, Network: backend.IsolationVirtualized, Syscalls: backend.IsolationVirtualized,
		Label: "refuser (runs nothing)",
	}
}

// A binary that links package cli can add its own backend: --backend then
// selects it for exec, guarantees and the agent commands. (helikon-k8s adds
// a workspace engine the same way, with agentcli.RegisterEngine.)
func ExampleRegisterBackend() {
	cli.RegisterBackend("refuser", func(context.Context, *cli.Env, string, *cli.BackendFlags) (backend.Backend, error) {
		return refuser{}, nil
	})
	root, _ := os.MkdirTemp("", "project")
	defer os.RemoveAll(root)
	env := &cli.Env{Stdout: os.Stdout, Stderr: os.Stdout, Getenv: func(string) string { return "" }}
	cli.Main(context.Background(), env, []string{"guarantees", "--backend", "refuser", "--root", root})
	// Output:
	// {
	//   "filesystem": "virtualized",
	//   "network": "virtualized",
	//   "syscalls": "virtualized",
	//   "label": "refuser (runs nothing)"
	// }
}

// RunOnTerminal runs a program on a new pseudo-terminal of a backend that
// starts processes: the terminal's output arrives as it comes (with the
// terminal's "\r\n" line ends, made "\n" here for the example's output),
// and the result is the program's. With a terminal as env.Stdin, that terminal is put in raw
// mode meanwhile and its size is followed.
func ExampleRunOnTerminal() {
	root, _ := os.MkdirTemp("", "project")
	defer os.RemoveAll(root)
	b, err := host.New(root, nil)
	if err != nil {
		panic(err)
	}
	var out strings.Builder
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: os.Stderr}
	res, err := cli.RunOnTerminal(context.Background(), env, b, &backend.Request{
		Command: `test -t 1 && printf 'on a terminal of %s\n' "$(stty size)"; exit 3`}, time.Minute)
	if err != nil {
		panic(err)
	}
	fmt.Print(strings.ReplaceAll(out.String(), "\r\n", "\n"))
	fmt.Println("exit", *res.ExitCode)
	// Output:
	// on a terminal of 24 80
	// exit 3
}
