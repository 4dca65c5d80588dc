package docker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/paigasus/helikon/backend/ossandbox"
)

// CacheDir is where a workspace's named caches volume is mounted in its
// container ([Options].Caches).
const CacheDir = "/var/cache/helikon"

// labelCache labels the named caches volumes this package creates.
const labelCache = "io.helikon.cache"

// cacheVolume returns the name of the volume that holds the named caches of
// scope ("project" or "user"), and the variables that point the tools to
// it, or an error for a scope it does not know or a project without a root.
func cacheVolume(scope, root string) (name string, env []string, err error) {
	switch scope {
	case "project":
		if root == "" {
			return "", nil, fmt.Errorf("docker: Caches %q needs Options.Root: the project is its directory", scope)
		}
		sum := sha256.Sum256([]byte(root))
		name = "helikon-cache-project-" + hex.EncodeToString(sum[:8])
	case "user":
		name = "helikon-cache-user-" + strconv.Itoa(os.Getuid())
	default:
		return "", nil, fmt.Errorf("docker: Caches %q: want project, user or empty (none kept)", scope)
	}
	for _, n := range ossandbox.NamedCaches {
		for _, k := range n.Env {
			env = append(env, k+"="+path.Join(CacheDir, n.Name))
		}
	}
	return name, env, nil
}

// cacheMount is the mount of the engine's named caches volume, which the
// daemon creates on first use (a local volume).
func (e *Engine) cacheMount() mount.Mount {
	return mount.Mount{Type: mount.TypeVolume, Source: e.cacheVolume, Target: CacheDir,
		VolumeOptions: &mount.VolumeOptions{Labels: map[string]string{labelCache: e.opts.Caches}}}
}

// prepareCaches makes the named caches' directories in the volume and lets
// every user of the container write them (mode 1777, as /tmp): the daemon
// creates a volume owned by root, and commands may run as another user. It
// runs as the container's root, which owns the volume and needs no
// capability to change its mode.
func (e *Engine) prepareCaches(ctx context.Context, id string) error {
	dirs := []string{CacheDir}
	for _, n := range ossandbox.NamedCaches {
		dirs = append(dirs, path.Join(CacheDir, n.Name))
	}
	cmd := []string{"/bin/sh", "-c", `mkdir -p "$@" && chmod 1777 "$@"`, "sh"}
	cr, err := e.cli.ExecCreate(ctx, id, client.ExecCreateOptions{Cmd: append(cmd, dirs...), User: "0:0", AttachStdout: true, AttachStderr: true})
	if err != nil {
		return fmt.Errorf("docker: prepare the named caches: %w", err)
	}
	att, err := e.cli.ExecAttach(ctx, cr.ID, client.ExecAttachOptions{})
	if err != nil {
		return fmt.Errorf("docker: prepare the named caches: %w", err)
	}
	var out bytes.Buffer
	_, _ = out.ReadFrom(att.Reader)
	att.Close()
	var r client.ExecInspectResult
	for {
		if r, err = e.cli.ExecInspect(ctx, cr.ID, client.ExecInspectOptions{}); err != nil {
			return fmt.Errorf("docker: prepare the named caches: %w", err)
		}
		if !r.Running {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pollInterval):
		}
	}
	if r.ExitCode != 0 {
		return fmt.Errorf("docker: prepare the named caches in %s: exit %d: %s", CacheDir, r.ExitCode, strings.TrimSpace(out.String()))
	}
	return nil
}
