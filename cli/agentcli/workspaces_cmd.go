package agentcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/cli"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/docker"
	wsforkd "github.com/paigasus/helikon/workspace/forkd"
)

func init() { cli.RegisterAgent("workspaces", runWorkspaces) }

// listTimeout bounds one engine's listing or reaping.
const listTimeout = 2 * time.Minute

func runWorkspaces(ctx context.Context, env *cli.Env, args []string) int {
	fs := cli.NewFlagSet("workspaces", "workspaces list|reap [--backend ENGINE] [--session ID] [--older-than DURATION] [--dry-run]\n\n"+
		"list prints the remote workspaces that carry helikon's labels, whoever created\n"+
		"them, as JSON lines (id, engine, session, labels, created, state). reap\n"+
		"removes those created more than --older-than ago (required), printing each\n"+
		"one it removes (or, with --dry-run, would remove). Without --backend, every\n"+
		"engine configured here is asked: docker when a daemon answers (DOCKER_HOST),\n"+
		"forkd when FORKD_URL, FORKD_TOKEN and FORKD_SNAPSHOT are set. Local\n"+
		"workspaces are the project directory itself and never leak; reap also\n"+
		"removes the OS sandbox's session homes ($TMPDIR/helikon-home-UID/*) that\n"+
		"no live helikon holds (left by a crash), whatever their age (--backend os:\n"+
		"those only).", env.Stderr)
	name := fs.String("backend", "", "only the `ENGINE` docker, forkd or os (reap: the OS sandbox's session homes)")
	olderThan := fs.Duration("older-than", 0, "reap: remove workspaces created more than `DURATION` ago (e.g. 2h)")
	dryRun := fs.Bool("dry-run", false, "reap: print what would be removed, remove nothing")
	only := fs.String("session", "", "only the workspace of session `ID`")
	pos, done, status := cli.ParseArgs(fs, env, args)
	if done {
		return status
	}
	if len(pos) != 1 || pos[0] != "list" && pos[0] != "reap" {
		fs.Usage()
		return cli.ExitUsage
	}
	verb := pos[0]
	if verb == "reap" && *olderThan <= 0 && *name != osHomes {
		return cli.Failf(env, cli.ExitUsage, "workspaces reap: --older-than DURATION is required (e.g. --older-than 2h: above your longest session)")
	}
	if verb == "list" && *name == osHomes {
		return cli.Failf(env, cli.ExitUsage, "workspaces list: --backend os has nothing to list (session homes are local); reap --backend os --dry-run shows the leftovers")
	}
	if verb == "reap" && (*name == "" || *name == osHomes) {
		if err := reapHomes(env, *dryRun); err != nil {
			fmt.Fprintf(env.Stderr, "helikon: workspaces: %s: %v\n", osHomes, err)
			return cli.ExitOther
		}
		if *name == osHomes {
			return cli.ExitOK
		}
	}
	names := slices.Sorted(maps.Keys(listers))
	if *name != "" {
		if !slices.Contains(names, *name) && *name != osHomes {
			return cli.Failf(env, cli.ExitUsage, "workspaces: unknown engine %q (%s; local workspaces are the project itself)", *name, strings.Join(names, ", "))
		}
		names = []string{*name}
	}
	enc := json.NewEncoder(env.Stdout)
	failed := false
	asked := 0
	for _, n := range names {
		eng, err := listers[n](ctx, env)
		if err != nil {
			if *name == "" && errors.Is(err, errNotConfigured) {
				continue
			}
			fmt.Fprintf(env.Stderr, "helikon: workspaces: %s: %v\n", n, err)
			failed = true
			continue
		}
		asked++
		if err := listOrReap(ctx, env, enc, eng, verb, *olderThan, *dryRun, *only); err != nil {
			fmt.Fprintf(env.Stderr, "helikon: workspaces: %s: %v\n", n, err)
			failed = true
		}
		if c, ok := eng.(io.Closer); ok {
			c.Close()
		}
	}
	if asked == 0 && !failed {
		fmt.Fprintln(env.Stderr, "helikon: workspaces: no remote engine is configured here (start a Docker daemon or set DOCKER_HOST; set FORKD_URL, FORKD_TOKEN, FORKD_SNAPSHOT)")
	}
	if failed {
		return cli.ExitOther
	}
	return cli.ExitOK
}

var errNotConfigured = errors.New("not configured")

// osHomes is the --backend name of the OS sandbox's session homes.
const osHomes = "os"

// reapedHome is what reap prints for each session home it removes.
type reapedHome struct {
	Engine  string `json:"engine"`
	Home    string `json:"home"`
	Removed bool   `json:"removed"`
}

// reapHomes removes (or with dryRun lists) the OS sandbox's session homes
// that no live backend holds.
func reapHomes(env *cli.Env, dryRun bool) error {
	homes, err := ossandbox.ReapHomes(dryRun)
	enc := json.NewEncoder(env.Stdout)
	for _, h := range homes {
		enc.Encode(reapedHome{Engine: osHomes, Home: h, Removed: !dryRun})
	}
	return err
}

// listers build each remote engine for listing and removing only.
var listers = map[string]func(ctx context.Context, env *cli.Env) (workspace.Engine, error){
	docker.EngineName: func(ctx context.Context, env *cli.Env) (workspace.Engine, error) {
		e, err := docker.New(ctx, &docker.Options{Isolate: true})
		if err != nil && env.Var("DOCKER_HOST") == "" && errors.Is(err, backend.ErrUnavailable) {
			// No daemon at the default socket: Docker is not used here.
			return nil, fmt.Errorf("%w: %w", errNotConfigured, err)
		}
		return e, err
	},
	wsforkd.EngineName: func(ctx context.Context, env *cli.Env) (workspace.Engine, error) {
		bo, err := cli.ForkdOptions(env)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errNotConfigured, err)
		}
		bo.EnforceEgress = "" // listing runs nothing; do not probe the proxy
		return wsforkd.New(ctx, &wsforkd.Options{Options: bo})
	},
}

// reaped is what reap prints for each workspace it removes.
type reaped struct {
	workspace.Info
	Removed bool   `json:"removed"`
	Error   string `json:"error,omitempty"`
}

func listOrReap(ctx context.Context, env *cli.Env, enc *json.Encoder, eng workspace.Engine, verb string, olderThan time.Duration, dryRun bool, only string) error {
	ctx, cancel := context.WithTimeout(ctx, listTimeout)
	defer cancel()
	list, err := eng.List(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, i := range list {
		if only != "" && i.Session != only {
			continue
		}
		if verb == "list" {
			enc.Encode(i)
			continue
		}
		if i.Created.IsZero() || time.Since(i.Created) <= olderThan {
			continue // of unknown age or young: a live session's
		}
		r := reaped{Info: i}
		if !dryRun {
			if err := eng.Remove(ctx, i.ID); err != nil {
				r.Error = err.Error()
				errs = append(errs, err)
			} else {
				r.Removed = true
			}
		}
		enc.Encode(r)
	}
	return errors.Join(errs...)
}
