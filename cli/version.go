package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/version"
)

func init() {
	Register(&Command{Name: "version", Summary: "print this build's version, VCS revision and Go version (--json adds what doctor probes)", Run: runVersion})
}

// versionJSON is what helikon version --json prints.
type versionJSON struct {
	Build version.Info `json:"build"`
	// Machine is what the OS sandbox finds on this machine, as in doctor.
	Machine ossandbox.Support `json:"machine"`
	// Backends are the per-command backends this binary was built with.
	Backends []string `json:"backends"`
}

// runVersion is helikon version, also reached as helikon --version.
func runVersion(_ context.Context, env *Env, args []string) int {
	fs := NewFlagSet("version", "version [--json]\n\nPrints the module version, the VCS revision the binary was built from (and\nwhether the tree had uncommitted changes), the Go version and the platform,\nall read from the build information Go embeds in the binary. With --json,\nalso what helikon doctor probes on this machine (Landlock, seccomp,\nnamespaces) and the backends this binary includes.", env.Stderr)
	asJSON := fs.Bool("json", false, "print the build and the machine's capabilities as JSON")
	pos, done, status := ParseArgs(fs, env, args)
	if done {
		return status
	}
	if len(pos) > 0 {
		return UsageFailf(env, fs, "version: unexpected argument %q", pos[0])
	}
	info := version.Get()
	if !*asJSON {
		fmt.Fprintf(env.Stdout, "%s %s\n", info.Path, info)
		return ExitOK
	}
	out, err := json.MarshalIndent(versionJSON{Build: info, Machine: ossandbox.Probe(), Backends: BackendNames()}, "", "  ")
	if err != nil {
		return Failf(env, ExitOther, "version: %v", err)
	}
	fmt.Fprintln(env.Stdout, string(out))
	return ExitOK
}
