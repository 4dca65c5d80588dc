package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"

	"github.com/paigasus/helikon"
	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/bashtool"
	"github.com/paigasus/helikon/sandbox"
)

func init() {
	RegisterBackend("host", hostBackend)
	RegisterTools(&ToolProvider{
		Names: []string{bashtool.Name},
		Flags: func(fs *flag.FlagSet) ToolBuilder {
			deny := Multi(fs, "deny-command", "Bash: refuse commands that run `PROGRAM` (a name such as rm, or a name and leading arguments such as \"git push\"; repeatable)")
			allow := Multi(fs, "allow-command", "Bash: run only commands whose every program matches `PROGRAM` (same form; repeatable)")
			return func(te *ToolEnv, _ string) (helikon.Tool[App], error) {
				b, err := te.Backend()
				if err != nil {
					return nil, err
				}
				return bashtool.New[App](b, &bashtool.Options{AllowCommands: *allow, DenyCommands: *deny, Root: te.Root})
			}
		},
	})
}

// hostBackend builds the host backend: no containment, the working
// directory pinned to the root, the environment scrubbed to PATH, HOME and
// the --env names.
func hostBackend(_ context.Context, _ *Env, root string, f *BackendFlags) (backend.Backend, error) {
	if f.EgressAllow != nil && len(*f.EgressAllow) > 0 {
		return nil, fmt.Errorf("%w: --egress-allow needs a backend that can force traffic through the egress proxy; the host backend cannot restrict the network", backend.ErrUnavailable)
	}
	sb, err := sandbox.Open(root)
	if err != nil {
		return nil, err
	}
	allow := slices.Clone(backend.DefaultEnvAllowlist)
	if f.Env != nil {
		allow = append(allow, *f.Env...)
	}
	return host.New(sb.Dir(), &host.Options{Timeout: f.Timeout, EnvAllowlist: allow, Limits: f.Limits()})
}
