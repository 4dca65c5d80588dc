package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/microvm"
	"github.com/paigasus/helikon/egress"
)

func init() {
	RegisterBackend("forkd", forkdBackend)
	Register(&Command{Name: "forkd", Summary: "manage the forkd microVM backend (reconcile: reap leaked microVMs)", Run: runForkd})
}

// ForkdOptions reads the forkd configuration from the environment:
// FORKD_URL, FORKD_TOKEN, FORKD_SNAPSHOT, and optionally FORKD_CA (a PEM
// file pinning the controller's CA) and FORKD_PROXY (the egress proxy
// endpoint the microVMs' network namespaces route through). The options
// are the per-command backend's (package backend/microvm), which the
// workspace engine's (package workspace/forkd) embed: both read the same
// variables.
func ForkdOptions(env *Env) (microvm.Options, error) {
	opts := microvm.Options{
		URL:           env.Var("FORKD_URL"),
		Token:         microvm.Token(env.Var("FORKD_TOKEN")),
		Snapshot:      env.Var("FORKD_SNAPSHOT"),
		EnforceEgress: env.Var("FORKD_PROXY"),
	}
	var missing []string
	for _, kv := range [][2]string{{"FORKD_URL", opts.URL}, {"FORKD_TOKEN", string(opts.Token)}, {"FORKD_SNAPSHOT", opts.Snapshot}} {
		if kv[1] == "" {
			missing = append(missing, kv[0])
		}
	}
	if len(missing) > 0 {
		return opts, fmt.Errorf("%w: the forkd backend needs %v set (and optionally FORKD_CA, FORKD_PROXY)", backend.ErrUnavailable, missing)
	}
	if path := env.Var("FORKD_CA"); path != "" {
		pem, err := os.ReadFile(path)
		if err != nil {
			return opts, fmt.Errorf("%w: FORKD_CA: %w", backend.ErrUnavailable, err)
		}
		opts.CACertPEM = pem
	}
	return opts, nil
}

func forkdBackend(ctx context.Context, env *Env, _ string, f *BackendFlags) (backend.Backend, error) {
	if err := f.NoLoopback("forkd"); err != nil {
		return nil, err
	}
	opts, err := ForkdOptions(env)
	if err != nil {
		return nil, err
	}
	opts.Timeout = f.Timeout
	if f.EgressAllow != nil && len(*f.EgressAllow) > 0 {
		// The policy is the operator's proxy's; naming it here records it
		// in the guarantees, it cannot push it to a remote proxy.
		if opts.EnforceEgress == "" {
			return nil, fmt.Errorf("%w: --egress-allow with --backend forkd needs FORKD_PROXY, the egress proxy the microVMs route through", backend.ErrUnavailable)
		}
		pol := egress.DenyAll().AllowDomains(*f.EgressAllow...)
		opts.Egress = &pol
	}
	b, err := microvm.New(ctx, &opts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", backend.ErrUnavailable, err)
	}
	return b, nil
}

func runForkd(ctx context.Context, env *Env, args []string) int {
	fs := NewFlagSet("forkd", "forkd reconcile [--reap-age DURATION]\n\n"+
		"reconcile lists the controller's microVMs and destroys those of FORKD_SNAPSHOT\n"+
		"older than the reap age, then prints {scanned, reaped, failed, skipped_unageable}.\n"+
		"Configuration: FORKD_URL, FORKD_TOKEN, FORKD_SNAPSHOT, optional FORKD_CA.", env.Stderr)
	reapAge := fs.Duration("reap-age", microvm.DefaultReapAge, "destroy microVMs older than `DURATION` (above your longest command plus clock skew)")
	pos, done, status := ParseArgs(fs, env, args)
	if done {
		return status
	}
	if len(pos) != 1 || pos[0] != "reconcile" {
		fs.Usage()
		return ExitUsage
	}
	opts, err := ForkdOptions(env)
	if err != nil {
		return Failf(env, ExitUsage, "forkd: %v", err)
	}
	opts.EnforceEgress = "" // reconcile runs nothing; do not probe the proxy
	opts.ReapAge = *reapAge
	b, err := microvm.New(ctx, &opts)
	if err != nil {
		return Failf(env, ExitUsage, "forkd: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	rep, err := b.Reconcile(ctx)
	if err != nil {
		return Failf(env, ExitOther, "forkd: %v", err)
	}
	out, _ := json.Marshal(rep)
	fmt.Fprintf(env.Stdout, "%s\n", out)
	if rep.Failed > 0 {
		fmt.Fprintf(env.Stderr, "helikon: forkd: %d deletes failed; run reconcile again later\n", rep.Failed)
	}
	return ExitOK
}
