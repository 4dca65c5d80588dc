package docker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/client"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/execfs"
	"github.com/paigasus/helikon/workspace/fsroot"
)

// Workspace is one session's container: its files (bind-mounted from this
// machine or copied into the container) and the commands run in it through
// docker exec. It is safe for concurrent use.
type Workspace struct {
	workspace.FS
	e          *Engine
	id         string
	info       workspace.Info
	dir        string
	baseEnv    []string // the container's environment
	shell      string   // bash when the image has it, else /bin/sh
	timeout    time.Duration
	outputCap  int64
	allow      []string
	limits     backend.ResourceLimits
	guarantees backend.Guarantees
	sb         *fsroot.FS // the bind mode's root on this machine
	// readOnly are the container's read-only bind mounts beneath dir,
	// relative to it: each command checks that they are still in place.
	readOnly []string

	// The checkpoints (checkpoint.go), made on first use.
	ckOnce sync.Once
	ck     *ckpt
	ckErr  error

	ops    sync.RWMutex // held for reading by file operations; Close takes it
	mu     sync.Mutex
	closed bool
	keep   *keeper // the processes Start started, nil before the first
}

var (
	_ workspace.Workspace = (*Workspace)(nil)
	_ backend.TimeLimited = (*Workspace)(nil)
)

// open builds the Workspace of the running container id from what the
// daemon says about it.
func (e *Engine) open(ctx context.Context, id string, attached bool) (*Workspace, error) {
	c, err := e.inspectWorkspace(ctx, id)
	if err != nil {
		return nil, err
	}
	w := &Workspace{e: e, id: c.ID, dir: c.Config.WorkingDir}
	bindSource, err := w.describe(c, attached)
	if err != nil {
		return nil, err
	}
	if err := w.probe(ctx); err != nil {
		return nil, err
	}
	if bindSource != "" {
		if err := w.openBind(bindSource); err != nil {
			return nil, err
		}
		if e.userns.rootless() {
			if err := w.checkOwner(ctx, bindSource); err != nil {
				return nil, err
			}
		}
		return w, nil
	}
	f, err := newIsolatedFS(ctx, w, w.dir)
	if err != nil {
		return nil, err
	}
	w.FS = guardFS{fs: f, w: w}
	return w, nil
}

// openCreated is open for an isolated workspace that Create has just
// started, in the time of its longest step instead of the sum of five: it
// copies the root in (copy), inspects the container and probes its shell,
// and checks that no component of the working directory's path is a link,
// all at once. The daemon created the directory when it started the
// container, and the copy merges into it; with no link on the way, the
// file system needs no exec to find its physical root. Where there is one,
// the file system resolves it after the copy.
func (e *Engine) openCreated(ctx context.Context, id string, copy func(context.Context) error) (*Workspace, error) {
	w := &Workspace{e: e, id: id, dir: e.dir}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var copyErr, openErr error
	var resolved bool
	wg.Go(func() {
		if copyErr = copy(ctx); copyErr != nil {
			cancel()
		}
	})
	wg.Go(func() {
		if openErr = w.inspectCreated(ctx); openErr != nil {
			cancel()
		}
	})
	wg.Go(func() { resolved = w.physical(ctx) })
	wg.Wait()
	if err := errors.Join(copyErr, openErr); err != nil {
		return nil, err
	}
	f, err := execfs.New(ctx, runner{w}, w.dir, &execfs.Options{Resolved: resolved})
	if err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	w.FS = guardFS{fs: f, w: w}
	return w, nil
}

// physical reports whether the daemon says that every component of the
// working directory's path is a directory and none is a symbolic link
// (false when it cannot say), with one stat per component at once.
func (w *Workspace) physical(ctx context.Context) bool {
	var prefixes []string
	for p := w.dir; p != "/"; p = path.Dir(p) {
		prefixes = append(prefixes, p)
	}
	ok := make([]bool, len(prefixes))
	var wg sync.WaitGroup
	for i, p := range prefixes {
		wg.Go(func() {
			st, err := w.e.cli.ContainerStatPath(ctx, w.id, client.ContainerStatPathOptions{Path: p})
			ok[i] = err == nil && st.Stat.Mode.IsDir() && st.Stat.Mode&os.ModeSymlink == 0 && st.Stat.LinkTarget == ""
		})
	}
	wg.Wait()
	return !slices.Contains(ok, false)
}

// inspectCreated describes and probes the container that Create started.
func (w *Workspace) inspectCreated(ctx context.Context) error {
	c, err := w.e.inspectWorkspace(ctx, w.id)
	if err != nil {
		return err
	}
	if c.ID != w.id || c.Config.WorkingDir != w.dir {
		return fmt.Errorf("docker: container %s is not the one created (id %s, working directory %q)", shortID(w.id), shortID(c.ID), c.Config.WorkingDir)
	}
	if _, err := w.describe(c, false); err != nil {
		return err
	}
	return w.probe(ctx)
}

// inspectWorkspace inspects the container id, which must report its
// configuration.
func (e *Engine) inspectWorkspace(ctx context.Context, id string) (container.InspectResponse, error) {
	insp, err := e.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		return container.InspectResponse{}, fmt.Errorf("docker: inspect container %s: %w", shortID(id), gone(err))
	}
	c := insp.Container
	if c.Config == nil || c.HostConfig == nil {
		return container.InspectResponse{}, fmt.Errorf("docker: container %s: the daemon reported no configuration", shortID(id))
	}
	return c, nil
}

// describe sets w's configuration, labels and guarantees from the
// container c, whose id and working directory w has, after checking that
// helikon may run commands in it; it returns the source of the bind mount
// at the working directory ("" in the isolated mode).
func (w *Workspace) describe(c container.InspectResponse, attached bool) (bindSource string, err error) {
	e := w.e
	hc := c.HostConfig
	if hc.Privileged || len(hc.CapAdd) > 0 || (!dropsAllCaps(hc.CapDrop) && !e.weaken.keepCaps) {
		return "", fmt.Errorf("docker: container %s is privileged or keeps capabilities; helikon does not run commands in it", shortID(w.id))
	}
	if w.dir == "" || !filepath.IsAbs(w.dir) {
		return "", fmt.Errorf("docker: container %s has no absolute working directory", shortID(w.id))
	}
	for _, m := range c.Mounts {
		if m.Type == mount.TypeBind && m.Destination == w.dir {
			bindSource = m.Source
		}
		if rel, err := filepath.Rel(w.dir, m.Destination); m.Type == mount.TypeBind && !m.RW && err == nil && filepath.IsLocal(rel) && rel != "." {
			w.readOnly = append(w.readOnly, filepath.ToSlash(rel))
		}
	}
	w.timeout = e.opts.Timeout
	w.outputCap = e.opts.OutputCap
	w.allow = slices.Clone(e.opts.EnvAllowlist)
	w.limits = e.opts.Limits
	w.baseEnv = c.Config.Env
	if w.timeout <= 0 {
		w.timeout = backend.DefaultTimeout
	}
	if w.outputCap <= 0 {
		w.outputCap = backend.DefaultOutputCap
	}
	w.limits.Processes = 0 // the container's pids limit, not a ulimit
	labels := c.Config.Labels
	w.info = workspace.Info{
		ID:       c.ID,
		Engine:   EngineName,
		Session:  labels[workspace.LabelSession],
		Labels:   labels,
		Created:  workspace.CreatedAt(labels),
		State:    "running",
		Attached: attached,
	}
	w.guarantees = e.guarantees(hc, c.Config.User, bindSource)
	return bindSource, nil
}

// defaultCaps are the capabilities that Docker and Podman give a container
// by default (Podman's defaults are a subset).
var defaultCaps = []string{"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "NET_RAW", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"}

// dropsAllCaps reports whether a container's CapDrop, with no CapAdd,
// leaves it no capability: Docker reports "ALL" as it was given, Podman's
// service every default capability by name.
func dropsAllCaps(drop []string) bool {
	names := make([]string, len(drop))
	for i, c := range drop {
		names[i] = strings.TrimPrefix(strings.ToUpper(c), "CAP_")
	}
	if slices.Contains(names, "ALL") {
		return true
	}
	for _, c := range defaultCaps {
		if !slices.Contains(names, c) {
			return false
		}
	}
	return true
}

// setIDComment marks the set-ID profile's own rules, and so the profile in
// a container's SecurityOpt as Docker reports it.
const setIDComment = "helikon: no set-user-ID or set-group-ID bit"

// isSetIDProfile reports whether a security option is the set-ID profile
// ([setIDProfile]), as Docker reports it back (its content) or as it was
// given to Podman (a temporary file's path).
func isSetIDProfile(opt string) bool {
	return strings.HasPrefix(opt, "seccomp=") && (strings.Contains(opt, setIDComment) || strings.Contains(opt, "/helikon-seccomp-"))
}

// openBind opens the file system of a bind-mode workspace.
func (w *Workspace) openBind(source string) error {
	f, sb, err := newBindFS(source, w.dir)
	if err != nil {
		return err
	}
	w.sb = sb
	w.FS = guardResolverFS{guardFS{fs: f, w: w}, f}
	return nil
}

// guarantees reports what the container's configuration enforces.
func (e *Engine) guarantees(hc *container.HostConfig, user, bindSource string) backend.Guarantees {
	runtime := hc.Runtime
	if runtime == "" || runtime == "oci" { // Podman's service calls its default runtime oci
		runtime = e.defaultRuntime
	}
	// Measured, never read from the name: see Engine.measureKernel.
	virtual := e.kernels[runtime].own(e.hostKernel)
	kernel := backend.IsolationOSKernel
	if virtual {
		kernel = backend.IsolationVirtualized
	}
	g := backend.Guarantees{Filesystem: kernel, Network: kernel, Syscalls: backend.IsolationNone}
	seccomp := e.seccomp && !slices.ContainsFunc(hc.SecurityOpt, func(s string) bool {
		return strings.HasPrefix(s, "seccomp=unconfined") || strings.HasPrefix(s, "seccomp:unconfined")
	})
	switch {
	case virtual:
		g.Syscalls = backend.IsolationVirtualized
	case seccomp:
		g.Syscalls = backend.IsolationOSKernel
	}
	network := string(hc.NetworkMode)
	if !hc.NetworkMode.IsNone() {
		g.Network = backend.IsolationNone
		if network == "" {
			network = "default"
		}
	}
	files := "isolated copy in the container"
	if bindSource != "" {
		files = "bind mount of " + bindSource
	}
	if user == "" {
		user = "root (the image names no user)"
	}
	g.Label = fmt.Sprintf("docker (%s, network %s)", runtime, network)
	g.Features = append(slices.Clone(e.features),
		"image: "+e.opts.Image,
		"runtime: "+runtime,
		e.kernelFeature(runtime),
		"files: "+files,
		"network: "+network,
		"user: "+user,
		"capabilities: all dropped; no-new-privileges",
	)
	if f := e.userns.feature(hc.UsernsMode); f != "" {
		g.Features = append(g.Features, f)
	}
	for _, m := range hc.Mounts {
		if m.Type == mount.TypeVolume && m.Target == CacheDir {
			g.Features = append(g.Features, "named caches kept across sessions: volume "+m.Source+" at "+CacheDir+" (GOCACHE, GOMODCACHE, npm_config_cache, PIP_CACHE_DIR, CARGO_HOME…)")
		}
	}
	if bindSource != "" {
		var ro []string
		for _, m := range hc.Mounts {
			if rel, err := filepath.Rel(bindSource, m.Source); m.Type == mount.TypeBind && m.ReadOnly && err == nil && filepath.IsLocal(rel) && rel != "." {
				ro = append(ro, filepath.ToSlash(rel))
			}
		}
		if len(ro) > 0 {
			g.Features = append(g.Features, "read-only paths: bind-mounted read-only in the container: "+strings.Join(ro, ", ")+" (nothing beneath them can be written, created, removed or renamed, and they cannot be removed, renamed, replaced or given a second name, whatever program names them)")
		}
	}
	switch {
	case seccomp && slices.ContainsFunc(hc.SecurityOpt, isSetIDProfile):
		g.Features = append(g.Features, "seccomp: Docker's default profile, set-user-ID and set-group-ID modes refused")
	case seccomp:
		g.Features = append(g.Features, "seccomp: the daemon's default profile")
	default:
		g.Features = append(g.Features, "seccomp: none")
	}
	r := hc.Resources
	limits := []string{}
	if r.Memory > 0 {
		limits = append(limits, fmt.Sprintf("memory %d bytes", r.Memory))
	}
	if r.NanoCPUs > 0 {
		limits = append(limits, fmt.Sprintf("cpus %.2f", float64(r.NanoCPUs)/1e9))
	}
	if r.PidsLimit != nil && *r.PidsLimit > 0 {
		limits = append(limits, fmt.Sprintf("pids %d", *r.PidsLimit))
	}
	switch {
	case len(limits) > 0:
		g.Features = append(g.Features, "container limits: "+strings.Join(limits, ", "))
	case e.noPids != "":
		g.Features = append(g.Features, "container limits: none: "+e.noPids+" (the per-command ulimits still apply)")
	}
	return g
}

// probe finds the shell that Request.Command runs with: bash where the
// image has it at /bin/bash or /usr/bin/bash, else /bin/sh, which every
// command's wrapper needs. It stats the three paths at once through the
// archive API, which costs a fraction of an exec.
func (w *Workspace) probe(ctx context.Context) error {
	paths := []string{"/bin/sh", "/bin/bash", "/usr/bin/bash"}
	found := make([]bool, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() {
			st, err := w.e.cli.ContainerStatPath(ctx, w.id, client.ContainerStatPathOptions{Path: p})
			switch {
			case cerrdefs.IsNotFound(err):
			case err != nil:
				errs[i] = fmt.Errorf("docker: container %s: stat %s: %w", shortID(w.id), p, gone(err))
			default:
				found[i] = !st.Stat.Mode.IsDir()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if !found[0] {
		return fmt.Errorf("docker: image %s has no /bin/sh; helikon runs every command under a POSIX shell there", w.e.opts.Image)
	}
	w.shell = paths[0]
	if i := slices.Index(found[1:], true); i >= 0 {
		w.shell = paths[1+i]
	}
	return nil
}

// Dir returns the working directory of commands, the same path in the
// container and, in the bind mode, on this machine.
func (w *Workspace) Dir() string { return w.dir }

// Timeout returns the longest a command may run.
func (w *Workspace) Timeout() time.Duration { return w.timeout }

// Guarantees reports what the container enforces (see the package doc).
func (w *Workspace) Guarantees() backend.Guarantees {
	g := w.guarantees
	g.Features = slices.Clone(g.Features)
	return g
}

// Info describes the workspace.
func (w *Workspace) Info() workspace.Info {
	i := w.info
	i.Labels = maps.Clone(i.Labels)
	return i
}

// Close force-removes the container and everything in it (in the bind
// mode the root on this machine stays). It waits for file operations in
// flight, is idempotent, and removes the container even when ctx is
// already done (a Close at SIGINT).
func (w *Workspace) Close(ctx context.Context) error {
	w.ops.Lock()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		w.ops.Unlock()
		return nil
	}
	w.closed = true
	k := w.keep
	w.mu.Unlock()
	if k != nil {
		k.close()
	}
	if w.sb != nil {
		w.sb.Close()
	}
	w.closeCheckpoints()
	w.ops.Unlock()
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
	defer cancel()
	return w.e.remove(rctx, w.id)
}

// isClosed reports whether Close ran.
func (w *Workspace) isClosed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

// errClosed is what operations after Close fail with.
var errClosed = fmt.Errorf("docker: the workspace was closed: %w", workspace.ErrGone)

// gone wraps err with [workspace.ErrGone] when it says the container no
// longer exists or no longer runs.
func gone(err error) error {
	if err == nil {
		return nil
	}
	// Podman's service says "container state improper", with status 409
	// or 500 by version.
	if cerrdefs.IsNotFound(err) || ((cerrdefs.IsConflict(err) || cerrdefs.IsInternal(err)) &&
		(strings.Contains(err.Error(), "not running") || strings.Contains(err.Error(), "container state improper"))) {
		return fmt.Errorf("%w (%w)", workspace.ErrGone, err)
	}
	return err
}
