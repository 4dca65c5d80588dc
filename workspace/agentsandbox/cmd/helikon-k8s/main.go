// Command helikon-k8s is helikon-agent with one more workspace engine:
// --backend k8s works in a Kubernetes agent-sandbox SandboxClaim per
// session (package workspace/agentsandbox). It is a module of its own so
// that client-go stays out of the helikon and helikon-agent binaries.
//
// Configuration, from the environment as kubectl and the forkd backend take
// theirs: KUBECONFIG (else ~/.kube/config, else the in-cluster service
// account), HELIKON_K8S_CONTEXT, HELIKON_K8S_NAMESPACE, and one of
// HELIKON_K8S_TEMPLATE (a SandboxTemplate) or HELIKON_K8S_WARM_POOL (a
// SandboxWarmPool), optionally HELIKON_K8S_CONTAINER and HELIKON_K8S_DIR.
//
//	helikon-k8s run --backend k8s "run the tests"
//	helikon-k8s workspaces list --backend k8s
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/cli/agentcli"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/agentsandbox"
)

func init() { agentcli.RegisterEngine(agentsandbox.EngineName, engine) }

// engine builds the agent-sandbox engine from the environment and the
// backend flags.
func engine(_ context.Context, env *cli.Env, _ string, f *cli.BackendFlags) (workspace.Engine, error) {
	opts := options(env.Var)
	if opts.Template == "" && opts.WarmPool == "" {
		return nil, fmt.Errorf("%w: --backend k8s needs HELIKON_K8S_TEMPLATE (a SandboxTemplate) or HELIKON_K8S_WARM_POOL (a SandboxWarmPool) set", backend.ErrUnavailable)
	}
	if err := f.NoLoopback("k8s"); err != nil {
		return nil, err
	}
	if f.EgressAllow != nil && len(*f.EgressAllow) > 0 {
		return nil, fmt.Errorf("%w: --egress-allow is not supported with --backend k8s; the template's NetworkPolicy decides the network", backend.ErrUnavailable)
	}
	opts.Timeout = f.Timeout
	e, err := agentsandbox.New(&opts)
	if err != nil && !errors.Is(err, backend.ErrUnavailable) {
		err = fmt.Errorf("%w: %w", backend.ErrUnavailable, err)
	}
	return e, err
}

// options reads the engine's configuration from getenv.
func options(getenv func(string) string) agentsandbox.Options {
	return agentsandbox.Options{
		Kubeconfig: getenv("KUBECONFIG"),
		Context:    getenv("HELIKON_K8S_CONTEXT"),
		Namespace:  getenv("HELIKON_K8S_NAMESPACE"),
		Template:   getenv("HELIKON_K8S_TEMPLATE"),
		WarmPool:   getenv("HELIKON_K8S_WARM_POOL"),
		Container:  getenv("HELIKON_K8S_CONTAINER"),
		Dir:        getenv("HELIKON_K8S_DIR"),
	}
}

func main() {
	os.Exit(cli.RunProcess(os.Args[1:]))
}
