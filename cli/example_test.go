package cli_test

import (
	"context"
	"os"

	"github.com/paigasus/helikon/backend"
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
