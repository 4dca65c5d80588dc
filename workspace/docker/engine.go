package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
	"github.com/moby/moby/api/types/system"
	"github.com/moby/moby/client"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/internal/dockerinfo"
	"github.com/paigasus/helikon/internal/readonlypaths"
	"github.com/paigasus/helikon/workspace"
	"github.com/paigasus/helikon/workspace/local"
)

// EngineName is the engine's name in [workspace.Info] and on the CLI.
const EngineName = "docker"

// DefaultPids is the container's process limit when [Options].Limits sets
// no Processes: enough for a parallel build, few enough that a fork bomb
// stops there instead of at the machine's limit.
const DefaultPids = 4096

// Options configures an [Engine]. Image is required to create workspaces (an
// engine without one lists, attaches to and removes them); every other zero
// field means the default.
type Options struct {
	// Image is the image every workspace's container is created from, as
	// the daemon names it ("golang:1.26", "localhost/helikon-test:1"). It
	// must be present in the daemon: the engine never pulls (build it, or
	// docker load / docker pull it yourself). [New] resolves it to its ID,
	// which every workspace is then created from: a tag moved later does
	// not change the engine's workspaces or what it reports of them.
	Image string
	// Root is the directory on this machine that holds the project. In the
	// bind mode (the default when Root is set) it is bind-mounted into the
	// container at the same absolute path and is the commands' working
	// directory; with Isolate its content is copied into the container at
	// creation and the directory itself is never written.
	Root string
	// Isolate copies Root into the container (at the same absolute path)
	// instead of bind-mounting it: the host stays untouched, and the file
	// operations go through commands in the container. Without Root, the
	// workspace starts as an empty directory at Dir.
	Isolate bool
	// Dir is the working directory in the container in the isolated mode
	// when Root is empty; "/workspace" when empty. Ignored otherwise (the
	// container sees Root at its own path).
	Dir string
	// AllowNetwork gives containers the daemon's default network (or
	// Network) instead of network mode "none" (no interface but
	// loopback). The guarantees then say the network is not contained.
	AllowNetwork bool
	// Network is the network mode or network name to use with
	// AllowNetwork; the daemon's default ("bridge") when empty.
	Network string
	// Runtime is the OCI runtime the daemon runs the containers with
	// ("runsc" for gVisor, "kata" for Kata Containers); the daemon's
	// default (runc) when empty. The guarantees say virtualized only for
	// the runtimes listed in [VirtualizedRuntimes].
	Runtime string
	// Checkpoints configures the store of the workspaces' checkpoints
	// ([Workspace.Checkpoint]): package local's, on the bind mount's
	// source in the bind mode, on a mirror of the container's tree in the
	// isolated mode (there Dir is the directory beneath which each
	// container's store is made, as docker-CONTAINER; default
	// $XDG_STATE_HOME/helikon/checkpoints).
	Checkpoints local.CheckpointOptions
	// User runs commands as this user ("1000", "1000:1000", "app") instead
	// of the default: in the bind mode this process's uid:gid, the user the
	// file operations run as on the same files (as the local backends run
	// commands); in the isolated mode the image's configured user (root
	// when it names none).
	User string
	// Memory caps the container's memory in bytes (a cgroup limit for the
	// whole container, swap included); zero means no cap.
	Memory int64
	// CPUs caps the container's CPU time in cores (1.5 = one and a half
	// cores, over all its processes); zero means no cap.
	CPUs float64
	// Timeout is the longest a command may run; a request may shorten it,
	// never lengthen it. Zero means [backend.DefaultTimeout] (30 s).
	Timeout time.Duration
	// OutputCap is the default cap per captured stream in bytes; zero means
	// [backend.DefaultOutputCap] (1 MiB). A request may lower it.
	OutputCap int64
	// EnvAllowlist names the variables of this process that commands get
	// (names, or prefixes ending in "*", see [backend.ScrubEnv]), on top of
	// the image's own environment (its PATH, HOME and the rest). nil passes
	// none: unlike the local backends, the container has its own PATH and
	// HOME, and this machine's would be wrong there.
	EnvAllowlist []string
	// ReadOnlyPaths are directories beneath Root that commands may read but
	// not change, in the bind mode: each is bind-mounted read-only into the
	// container over its place in the root, so that no program in the
	// container, however it names a file there, can write, create, remove
	// or rename anything beneath it, nor remove, rename or replace the
	// directory (a mount point). helikon's CLI passes the policy files'
	// directories (.helikon, .claude). Relative paths are relative to
	// Root; absolute ones outside Root are dropped. A missing directory is
	// created (empty, mode 0755) before the container is, and left in
	// place; one reached through a symbolic link is refused (the daemon
	// would mount where the link points). Ignored with Isolate, where
	// nothing written in the container reaches Root.
	ReadOnlyPaths []string
	// Limits are the per-command resource limits (set with ulimit in the
	// container: CPU seconds, file size, address space, open files; zero
	// fields get the defaults of [backend.ResourceLimits.WithDefaults]),
	// except Processes, which is the container's pids limit (a cgroup
	// limit for the whole container, [DefaultPids] when zero, none when
	// negative). A request may override the per-command fields; its
	// Processes is ignored (the container's limit cannot change per
	// command).
	Limits backend.ResourceLimits
	// Caches, "project" or "user", keeps the tools' named caches
	// (ossandbox.NamedCaches: go-build, go-mod, npm, pip, cargo…) across
	// sessions in a volume per project (named from Root's path, which
	// the project scope needs) or per user of this machine, mounted at
	// [CacheDir] in every container the engine creates, in the bind mode
	// and the isolated mode alike, with GOCACHE, GOMODCACHE,
	// npm_config_cache, PIP_CACHE_DIR, CARGO_HOME… set to its
	// directories. Empty keeps none: the caches die with the container.
	// It is an operator's choice (see ossandbox's package documentation
	// for what a poisoned cache can do). Removing the volume (docker
	// volume rm) starts cold.
	Caches string
	// Host is the daemon's address ("unix:///run/podman/podman.sock",
	// "tcp://host:2376"); empty means DOCKER_HOST, else the default
	// socket. DOCKER_API_VERSION, DOCKER_CERT_PATH and DOCKER_TLS_VERIFY
	// are read from the environment as the docker CLI reads them.
	Host string
	// Logger receives the engine's diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

// VirtualizedRuntimes are the names under which gVisor's user-space kernel
// and Kata Containers' virtual machines are registered by their
// installation guides.
//
// Deprecated: the guarantees no longer go by a runtime's name. A runtime is
// reported virtualized only when a container of it, run by [New], saw a
// kernel release other than the daemon host's; a name in this list that
// runs on the host's kernel is a kernel-namespace runtime like runc.
var VirtualizedRuntimes = []string{"runsc", "io.containerd.runsc.v1", "kata", "kata-runtime", "kata-qemu", "kata-fc", "kata-clh", "io.containerd.kata.v2"}

// Engine creates, finds and removes Docker workspaces. It is safe for
// concurrent use.
type Engine struct {
	cli      *client.Client
	opts     Options
	dir      string   // the working directory in the container
	root     string   // the host directory (bind source, or copied in); "" when none
	readOnly []string // Options.ReadOnlyPaths relative to root (bind mode)
	// cacheVolume holds the named caches (Options.Caches), "" without;
	// cacheEnv points the tools to it.
	cacheVolume string
	cacheEnv    []string
	seccomp     bool   // the daemon applies its default seccomp profile
	imageUser   string // the image's configured user
	imageID     string // the image's ID, which workspaces are created from
	// setID is the seccomp profile of bind-mode containers (setIDProfile):
	// the daemon's default with set-ID modes refused; nil where the
	// daemon applies no seccomp or the profile is not built (not Linux).
	setID []byte
	// podman is whether the daemon is Podman's service, which takes a
	// seccomp profile as a path where Docker takes its content; learnt
	// at the first Create that passes a profile.
	podmanOnce sync.Once
	podman     bool
	// userns is how the daemon maps its containers' users to this
	// machine's; bindUser and usernsMode are the bind mode's default user
	// and the container's user namespace mode under it ([bindUser]).
	userns     userNS
	bindUser   string
	usernsMode string
	// noPids says why the default pids limit is left out (a rootless
	// daemon that cannot enforce it); "" when it is applied.
	noPids string
	// defaultRuntime is the daemon's runtime for containers that name none.
	defaultRuntime string
	// hostKernel is the daemon host's kernel release; kernels what the
	// containers of each runtime were measured to run on ([Engine.measureKernel]),
	// written by New only.
	hostKernel string
	kernels    map[string]runtimeKernel
	// owners caches resolveUser's answers: the image, pinned by its ID,
	// cannot change its /etc/passwd.
	ownersMu sync.Mutex
	owners   map[string][2]int
	// weaken switches protections off, for the attack tests to show that
	// each one is what stops its attack.
	weaken   struct{ keepCaps, newPrivs, setID bool }
	features []string
	log      *slog.Logger
}

var _ workspace.Engine = (*Engine)(nil)

// New connects to the Docker daemon (negotiating the API version, so a
// daemon older than the client works: Debian's docker.io 20.10 speaks API
// 1.41), checks that it answers and that the image is present, and returns
// the engine. A daemon that does not answer fails with an error wrapping
// [backend.ErrUnavailable] that says what to start; a missing image fails
// naming it and how to provide it (the engine never pulls).
func New(ctx context.Context, opts *Options) (*Engine, error) {
	if opts == nil {
		opts = &Options{}
	}
	o := *opts
	if o.Root == "" && !o.Isolate {
		return nil, errors.New("docker: the bind mode needs a root directory (Options.Root); set Isolate for a workspace without one")
	}
	e := &Engine{opts: o, log: o.Logger}
	if e.log == nil {
		e.log = slog.Default()
	}
	if o.Root != "" {
		abs, err := filepath.Abs(o.Root)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("docker: root: %w", err)
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return nil, fmt.Errorf("docker: root: %w", err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("docker: root %s is not a directory", abs)
		}
		e.root, e.dir = abs, abs
		if !o.Isolate {
			if e.readOnly, err = readonlypaths.Resolve(abs, o.ReadOnlyPaths); err != nil {
				return nil, fmt.Errorf("docker: %w", err)
			}
		}
	} else {
		e.dir = o.Dir
		if e.dir == "" {
			e.dir = "/workspace"
		}
		if !filepath.IsAbs(e.dir) || filepath.Clean(e.dir) != e.dir || e.dir == "/" {
			return nil, fmt.Errorf("docker: Dir %q must be an absolute, clean path below /", e.dir)
		}
	}
	if o.Caches != "" {
		var err error
		if e.cacheVolume, e.cacheEnv, err = cacheVolume(o.Caches, e.root); err != nil {
			return nil, err
		}
	}
	copts := []client.Opt{client.FromEnv}
	if o.Host != "" {
		copts = append(copts, client.WithHost(o.Host))
	}
	cli, err := client.New(copts...)
	if err != nil {
		return nil, fmt.Errorf("docker: client: %w", err)
	}
	e.cli = cli
	// One GET /info for what the client reads and what it drops.
	ours, err := dockerinfo.Get(ctx, cli.Dialer())
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("docker: the daemon at %s does not answer (start dockerd, or podman system service, or set DOCKER_HOST): %v: %w", cli.DaemonHost(), err, backend.ErrUnavailable)
	}
	var info struct{ Info system.Info }
	if err := json.Unmarshal(ours.Raw, &info.Info); err != nil {
		cli.Close()
		return nil, fmt.Errorf("docker: the daemon at %s: its info: %w", cli.DaemonHost(), err)
	}
	e.podman = ours.Podman
	e.podmanOnce.Do(func() {}) // known now
	e.userns = detectUserNS(ours)
	pidsOK, err := checkLimits(&o, info.Info, e.userns)
	if err != nil {
		cli.Close()
		return nil, err
	}
	if !pidsOK && o.Limits.Processes == 0 {
		_, _, _, e.noPids = cgroupLimits(info.Info, e.userns)
	}
	if !o.Isolate {
		if e.bindUser, e.usernsMode, err = bindUser(e.userns); err != nil {
			cli.Close()
			return nil, err
		}
	}
	e.defaultRuntime = info.Info.DefaultRuntime
	if e.defaultRuntime == "" {
		e.defaultRuntime = "runc"
	}
	for _, s := range info.Info.SecurityOptions {
		if strings.Contains(s, "name=seccomp") && !strings.Contains(s, "profile=unconfined") {
			e.seccomp = true
		}
	}
	if e.seccomp && !o.Isolate {
		if e.setID, err = setIDProfile(); err != nil {
			cli.Close()
			return nil, err
		}
	}
	if o.Runtime != "" {
		if _, ok := info.Info.Runtimes[o.Runtime]; !ok {
			cli.Close()
			return nil, fmt.Errorf("docker: the daemon has no runtime %q (it has %s): %w", o.Runtime, strings.Join(slices.Sorted(maps.Keys(info.Info.Runtimes)), ", "), backend.ErrUnavailable)
		}
	}
	if o.Image == "" {
		// An engine without an image lists, attaches and removes: what
		// helikon workspaces list|reap and an Attach need.
		e.features = []string{"daemon: " + info.Info.ServerVersion + " (API " + cli.ClientVersion() + ")"}
		return e, nil
	}
	img, err := cli.ImageInspect(ctx, o.Image)
	if err != nil {
		cli.Close()
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("docker: image %q is not in the daemon: build it (docker build -t %s .), load it (docker load) or pull it (docker pull %s) first; helikon never pulls", o.Image, o.Image, o.Image)
		}
		return nil, fmt.Errorf("docker: image %q: %w", o.Image, err)
	}
	if img.Config != nil {
		e.imageUser = img.Config.User
	}
	e.imageID = img.ID
	e.features = []string{"daemon: " + info.Info.ServerVersion + " (API " + cli.ClientVersion() + ")"}
	// What kernel the workspaces' runtime gives, measured once per engine: the guarantees call a runtime
	// virtualized only where its containers were seen to run on a kernel other than the host's.
	e.hostKernel = info.Info.KernelVersion
	rt := o.Runtime
	if rt == "" {
		rt = e.defaultRuntime
	}
	e.kernels = map[string]runtimeKernel{rt: e.measureKernel(ctx, rt)}
	if k := e.kernels[rt]; k.err != nil && !slices.Contains(hostKernelRuntimes, rt) {
		e.log.Warn("docker: the runtime's kernel could not be measured: its containers are reported as sharing the host's kernel", "runtime", rt, "err", k.err)
	}
	return e, nil
}

// hostConfig is the container configuration every workspace gets from the
// options: no network unless allowed, every capability dropped,
// no-new-privileges, an init, the runtime and the limits, the root
// bind-mounted unless isolated, and then the set-ID profile (Docker's form:
// the profile itself; see [Engine.Create] for Podman's).
func (e *Engine) hostConfig() *container.HostConfig {
	limits := e.opts.Limits
	pids := int64(DefaultPids)
	if limits.Processes != 0 {
		pids = limits.Processes
	}
	if pids < 0 {
		pids = 0 // the API's "no limit"
	}
	pidsLimit := &pids
	if e.noPids != "" {
		pidsLimit = nil // the daemon would refuse or ignore it
	}
	init := true
	hc := &container.HostConfig{
		NetworkMode: "none",
		CapDrop:     []string{"ALL"},
		SecurityOpt: []string{"no-new-privileges"},
		Init:        &init, // reaps the orphans of killed commands
		Runtime:     e.opts.Runtime,
		Resources: container.Resources{
			Memory:    e.opts.Memory,
			NanoCPUs:  int64(e.opts.CPUs * 1e9),
			PidsLimit: pidsLimit,
		},
	}
	if e.weaken.keepCaps {
		hc.CapDrop = nil
	}
	if e.weaken.newPrivs {
		hc.SecurityOpt = nil
	}
	if e.opts.Memory > 0 {
		hc.Resources.MemorySwap = e.opts.Memory // no swap beyond the cap
	}
	if e.opts.AllowNetwork {
		hc.NetworkMode = container.NetworkMode(e.opts.Network)
	}
	if e.cacheVolume != "" {
		hc.Mounts = append(hc.Mounts, e.cacheMount())
	}
	if !e.opts.Isolate {
		hc.UsernsMode = container.UsernsMode(e.usernsMode)
		hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: e.root, Target: e.dir})
		for _, p := range e.readOnly {
			// Mounted after the root (the runtime orders mounts by
			// their depth): a read-only mount point in the container.
			hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: filepath.Join(e.root, p), Target: path.Join(e.dir, p), ReadOnly: true})
		}
		if e.setID != nil && !e.weaken.setID {
			hc.SecurityOpt = append(hc.SecurityOpt, "seccomp="+string(e.setID))
		}
	}
	return hc
}

// Dir is the root every workspace of the engine has ([workspace.Describer]):
// Root at its own path, or Dir in the isolated mode without one.
func (e *Engine) Dir() string { return e.dir }

// Guarantees is what the commands of every workspace the engine creates
// get ([workspace.Describer]), computed from the configuration it creates
// containers with; a workspace attached to reports its own container's.
func (e *Engine) Guarantees() backend.Guarantees {
	user, err := e.user()
	if err != nil || user == "" {
		user = e.imageUser // what the container runs as when no user is set
	}
	bind := ""
	if !e.opts.Isolate {
		bind = e.root
	}
	return e.guarantees(e.hostConfig(), user, bind)
}

var _ workspace.Describer = (*Engine)(nil)

// Name returns "docker".
func (e *Engine) Name() string { return EngineName }

// Close closes the engine's connection to the daemon. Workspaces it created
// must be closed first.
func (e *Engine) Close() error { return e.cli.Close() }

// containerName is the name of a session's container: one per session, so
// that a second Create of a session fails in the daemon itself.
func containerName(session string) string { return "helikon-" + session }

// Create creates and starts the container of session's workspace. A
// session that already has one fails (use Attach).
func (e *Engine) Create(ctx context.Context, session string) (workspace.Workspace, error) {
	if err := workspace.ValidSession(session); err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	if e.opts.Image == "" {
		return nil, errors.New("docker: creating a workspace needs an image (Options.Image, --image)")
	}
	user, err := e.user()
	if err != nil {
		return nil, err
	}
	// Before the container: the daemon would make a missing source
	// directory itself (as root) or refuse it, and follows a link.
	if err := readonlypaths.Ensure(e.root, e.readOnly); err != nil {
		return nil, fmt.Errorf("docker: %w: %w", err, backend.ErrUnavailable)
	}
	hc := e.hostConfig()
	labels := workspace.LabelsFor(ctx, session, time.Now())
	labels[labelMode] = e.mode()
	image := e.imageID
	if image == "" {
		image = e.opts.Image
	}
	cfg := &container.Config{
		Image:      image,
		User:       user,
		WorkingDir: e.dir,
		Labels:     labels,
		// The container's main process only keeps it alive; commands run
		// beside it through exec.
		Entrypoint: []string{"/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 86400; done"},
		Cmd:        []string{},
		Env:        e.cacheEnv,
	}
	done, err := e.seccompForDaemon(ctx, hc)
	if err != nil {
		return nil, err
	}
	cr, err := e.cli.ContainerCreate(ctx, client.ContainerCreateOptions{Name: containerName(session), Config: cfg, HostConfig: hc})
	done()
	if err != nil {
		// Podman's service answers 500 where Docker answers 409.
		if cerrdefs.IsConflict(err) || strings.Contains(err.Error(), "is already in use") {
			return nil, fmt.Errorf("docker: session %s already has a workspace (container %s): attach to it or remove it: %w", session, containerName(session), err)
		}
		return nil, fmt.Errorf("docker: create the container: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			e.removeQuietly(cr.ID)
		}
	}()
	for _, w := range cr.Warnings {
		e.log.Warn("docker: create", "container", cr.ID, "warning", w)
	}
	if _, err := e.cli.ContainerStart(ctx, cr.ID, client.ContainerStartOptions{}); err != nil {
		return nil, fmt.Errorf("docker: start the container: %w", err)
	}
	if e.cacheVolume != "" {
		if err := e.prepareCaches(ctx, cr.ID); err != nil {
			return nil, err
		}
	}
	var ws *Workspace
	if e.opts.Isolate {
		// Copied into the running container, whose root file system the
		// daemon has mounted already: into a created one, each archive call
		// mounts and unmounts it (a third of a second here).
		owner := user
		if owner == "" {
			owner = e.imageUser
		}
		ws, err = e.openCreated(ctx, cr.ID, func(ctx context.Context) error { return e.copyIn(ctx, cr.ID, owner) })
	} else {
		ws, err = e.open(ctx, cr.ID, false)
	}
	if err != nil {
		return nil, err
	}
	ok = true
	return ws, nil
}

// seccompForDaemon puts hc's seccomp profile in the form the daemon takes.
// Docker takes the profile's content in SecurityOpt (its CLI reads the file
// and sends that); Podman's service (4.x) opens the value as a path on its
// own machine, which in the bind mode is this one, and reads it at create.
// For Podman the profile goes to a temporary file, which done removes once
// the container is created.
func (e *Engine) seccompForDaemon(ctx context.Context, hc *container.HostConfig) (done func(), err error) {
	i := slices.IndexFunc(hc.SecurityOpt, func(s string) bool { return strings.HasPrefix(s, "seccomp={") })
	if i < 0 {
		return func() {}, nil
	}
	e.podmanOnce.Do(func() {
		v, err := e.cli.ServerVersion(ctx, client.ServerVersionOptions{})
		e.podman = err == nil && isPodman(v)
	})
	if !e.podman {
		return func() {}, nil
	}
	f, err := os.CreateTemp("", "helikon-seccomp-*.json")
	if err != nil {
		return nil, fmt.Errorf("docker: the seccomp profile for Podman: %w", err)
	}
	_, err = f.WriteString(strings.TrimPrefix(hc.SecurityOpt[i], "seccomp="))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, fmt.Errorf("docker: the seccomp profile for Podman: %w", err)
	}
	hc.SecurityOpt[i] = "seccomp=" + f.Name()
	return func() { os.Remove(f.Name()) }, nil
}

// isPodman reports whether the daemon that answered is Podman's service.
func isPodman(v client.ServerVersionResult) bool {
	return slices.ContainsFunc(v.Components, func(c system.ComponentVersion) bool { return strings.Contains(c.Name, "Podman") })
}

// labelMode is the label that records a workspace's file mode.
const labelMode = "io.helikon.docker.mode"

func (e *Engine) mode() string {
	if e.opts.Isolate {
		return "isolated"
	}
	return "bind"
}

// user is the user commands run as (see [Options].User).
func (e *Engine) user() (string, error) {
	if e.opts.User != "" {
		return e.opts.User, nil
	}
	if e.opts.Isolate {
		return "", nil // the image's
	}
	// The container's user that is this process's user on this machine:
	// the file operations run as it on the same files.
	return e.bindUser, nil
}

// Attach opens the existing workspace of session, starting its container
// if it was stopped (a daemon restart stops it), or fails with an error
// wrapping [workspace.ErrNotFound]. The workspace's mode, directory, user,
// network and runtime are the container's, whatever this engine's options
// say, and its guarantees are computed from them.
func (e *Engine) Attach(ctx context.Context, session string) (workspace.Workspace, error) {
	if err := workspace.ValidSession(session); err != nil {
		return nil, fmt.Errorf("docker: %w", err)
	}
	list, err := e.cli.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", workspace.LabelManaged+"=true", workspace.LabelSession+"="+session),
	})
	if err != nil {
		return nil, fmt.Errorf("docker: list containers: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, fmt.Errorf("docker: session %s: %w", session, workspace.ErrNotFound)
	}
	c := list.Items[0]
	if c.State != container.StateRunning {
		if _, err := e.cli.ContainerStart(ctx, c.ID, client.ContainerStartOptions{}); err != nil {
			return nil, fmt.Errorf("docker: session %s: start its stopped container %s: %w", session, shortID(c.ID), err)
		}
	}
	return e.open(ctx, c.ID, true)
}

// List reports the containers that carry helikon's labels, running or not.
func (e *Engine) List(ctx context.Context) ([]workspace.Info, error) {
	list, err := e.cli.ContainerList(ctx, client.ContainerListOptions{
		All:     true,
		Filters: make(client.Filters).Add("label", workspace.LabelManaged+"=true"),
	})
	if err != nil {
		return nil, fmt.Errorf("docker: list containers: %w", err)
	}
	out := make([]workspace.Info, 0, len(list.Items))
	for _, c := range list.Items {
		created := workspace.CreatedAt(c.Labels)
		if created.IsZero() && c.Created > 0 {
			created = time.Unix(c.Created, 0)
		}
		out = append(out, workspace.Info{
			ID:      c.ID,
			Engine:  EngineName,
			Session: c.Labels[workspace.LabelSession],
			Labels:  c.Labels,
			Created: created,
			State:   string(c.State),
		})
	}
	return out, nil
}

// Remove force-removes the container id (from List) with its anonymous
// volumes. A container already gone is not an error. It refuses a
// container that does not carry helikon's label, so that a mistyped id
// cannot remove someone else's container.
func (e *Engine) Remove(ctx context.Context, id string) error {
	insp, err := e.cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("docker: inspect %s: %w", id, err)
	}
	if insp.Container.Config == nil || insp.Container.Config.Labels[workspace.LabelManaged] != "true" {
		return fmt.Errorf("docker: container %s is not a helikon workspace (no %s label); not removed", id, workspace.LabelManaged)
	}
	return e.remove(ctx, insp.Container.ID)
}

func (e *Engine) remove(ctx context.Context, id string) error {
	_, err := e.cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("docker: remove container %s: %w", shortID(id), err)
	}
	return nil
}

// removeQuietly removes a container that a failed Create leaves behind,
// even when the caller's context is done.
func (e *Engine) removeQuietly(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), removeTimeout)
	defer cancel()
	if err := e.remove(ctx, id); err != nil {
		e.log.Warn("docker: could not remove a half-created container; helikon workspaces reap will", "container", id, "err", err)
	}
}

// removeTimeout bounds a removal that runs after the caller's context
// ended (Close during shutdown, a failed Create).
const removeTimeout = 30 * time.Second

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
