package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/host"
	"github.com/paigasus/helikon/backend/ossandbox"
	"github.com/paigasus/helikon/workspace/fsroot"
)

// BackendFlags are the flags of every command that runs programs (exec, tool,
// mcp, run, guarantees). They are defined in one place so that every command
// accepts the same ones; each backend factory reads those that concern it.
type BackendFlags struct {
	Name         string        // --backend; "" means the OS sandbox where available
	Timeout      time.Duration // --timeout
	CPU          int64         // --cpu seconds
	FSize        int64         // --fsize bytes
	Mem          int64         // --mem bytes (address space)
	Env          *[]string     // --env NAME: extend the environment allowlist
	AllowNetwork bool          // --allow-network (OS sandbox)
	Loopback     bool          // --loopback (OS sandbox: a network namespace per session)
	ReadPaths    *[]string     // --read-path DIR (OS sandbox)
	NoPath       bool          // --no-path (OS sandbox)
	ReadCaches   bool          // --read-caches (OS sandbox)
	HidePaths    *[]string     // --hide-path PATH (OS sandbox)
	EgressAllow  *[]string     // --egress-allow DOMAIN (OS sandbox through the egress proxy)
	MapRootUser  bool          // --map-root-user (OS sandbox, unprivileged callers)
	HomeSize     int64         // --home-size bytes (OS sandbox session home; <0: none)
	Caches       string        // --caches session|project|user (named caches across sessions)
	CacheSize    int64         // --cache-size bytes
	UserCaches   bool          // --user-caches-beneath (OS sandbox)
	// oneCommand: the backend runs one command, then the program exits
	// (exec); the OS sandbox then starts an unprivileged caller's
	// launcher while it builds the backend (launcher, closed by exec).
	oneCommand bool
	launcher   *ossandbox.Launcher
}

// AddBackendFlags defines the backend flags on fs.
func AddBackendFlags(fs *flag.FlagSet) *BackendFlags {
	b := &BackendFlags{}
	fs.StringVar(&b.Name, "backend", "", "execution `BACKEND`: "+strings.Join(BackendNames(), ", ")+" (local is os); also docker, a container per session (see --image) (default: os where available)")
	DurationVar(fs, &b.Timeout, "timeout", 0, "command `TIMEOUT` such as 30s (default: the backend's)")
	fs.Int64Var(&b.CPU, "cpu", 0, "CPU time limit in `SECONDS` (default: timeout + 5s)")
	SizeVar(fs, &b.FSize, "fsize", 0, "largest file a command may write, as `SIZE` such as 512MiB (default 1 GiB)")
	SizeVar(fs, &b.Mem, "mem", 0, "address-space limit, as `SIZE` such as 4GiB (default: none)")
	b.Env = Multi(fs, "env", "pass environment variable `NAME` through (repeatable)")
	fs.BoolVar(&b.AllowNetwork, "allow-network", false, "let sandboxed commands use the network")
	fs.BoolVar(&b.Loopback, "loopback", false, "OS sandbox: give the session's commands a loopback network of their own (TCP servers and clients on 127.0.0.1 and ::1 of a private network namespace; nothing outside it is reachable)")
	b.ReadPaths = Multi(fs, "read-path", "make `DIR` readable inside the OS sandbox (repeatable)")
	fs.BoolVar(&b.NoPath, "no-path", false, "OS sandbox: do not make your PATH's directories and the tool trees behind them (~/.pyenv, ~/.nvm, ~/.cargo…) readable")
	fs.BoolVar(&b.ReadCaches, "read-caches", false, "OS sandbox: make the common tool caches readable, never writable (Go modules, pip, npm, Cargo registry…)")
	b.HidePaths = Multi(fs, "hide-path", "OS sandbox: never let commands read `PATH` (absolute or relative to your home), in addition to the built-in credential locations (repeatable)")
	b.EgressAllow = Multi(fs, "egress-allow", "allow network only through the egress proxy to `DOMAIN` (repeatable)")
	fs.BoolVar(&b.MapRootUser, "map-root-user", false, "OS sandbox, unprivileged callers: run commands as root (uid and gid 0) of their user namespace instead of as yourself (your uid, gid and a home you own); they stay you outside, without privileges, confined alike")
	SizeVar(fs, &b.HomeSize, "home-size", 0, "OS sandbox: cap the session home (HOME, shared by a session's commands, removed at its end) at `SIZE` such as 8GiB (default 4 GiB)")
	fs.StringVar(&b.Caches, "caches", "", "keep the tools' named caches (go-build, go-mod, npm, pip, cargo…) across sessions: `SCOPE` project (this project's sessions) or user (every project's); session (the default) keeps them for one session only")
	fs.BoolVar(&b.UserCaches, "user-caches-beneath", false, "OS sandbox, with --caches: read your own Go, npm, pip, Yarn and ccache caches beneath the named caches (overlayfs): commands find what you downloaded or built, and what they write never reaches your caches")
	SizeVar(fs, &b.CacheSize, "cache-size", 0, "cap the named caches kept across sessions (--caches) at `SIZE` together (default 16 GiB)")
	return b
}

// Limits returns the resource limits the flags ask for (zero fields mean the
// backend's defaults).
func (b *BackendFlags) Limits() backend.ResourceLimits {
	return backend.ResourceLimits{CPUSeconds: b.CPU, FileSize: b.FSize, AddressSpace: b.Mem}
}

// BackendFactory builds a backend for the sandbox root dir from the flags. A
// backend that cannot give its guarantees on this machine returns an error
// wrapping backend.ErrUnavailable.
type BackendFactory func(ctx context.Context, env *Env, root string, f *BackendFlags) (backend.Backend, error)

var backendFactories = map[string]BackendFactory{}

// RegisterBackend registers a backend factory under name (host, os, forkd).
func RegisterBackend(name string, f BackendFactory) {
	if _, dup := backendFactories[name]; dup {
		panic("cli: duplicate backend " + name)
	}
	backendFactories[name] = f
}

// BackendNames returns the registered backend names, sorted.
func BackendNames() []string {
	names := make([]string, 0, len(backendFactories))
	for n := range backendFactories {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// backendAliases are other names of registered backends: local is the
// OS sandbox on this machine, as the workspace engine of the os and host
// backends is called.
var backendAliases = map[string]string{"local": "os"}

// resolveAlias returns the backend name that name stands for.
func resolveAlias(name string) string {
	if to, ok := backendAliases[name]; ok {
		return to
	}
	return name
}

// DefaultBackend is the backend used when --backend is not given. Commands
// that run programs never fall back to a weaker one: where it is unavailable
// they fail with ExitUsage and say how to opt into --backend host.
const DefaultBackend = "os"

// NoLoopback returns the error for --loopback on a backend that cannot
// give a session a network namespace of its own (every engine but the OS
// sandbox, for now), or nil without the flag: refused, never ignored.
func (f *BackendFlags) NoLoopback(backendName string) error {
	if f == nil || !f.Loopback {
		return nil
	}
	return fmt.Errorf("%w: --loopback is not supported with --backend %s yet; only the OS sandbox (--backend os) gives a session a loopback of its own", backend.ErrUnavailable, backendName)
}

// BuildBackend builds the backend the flags select.
func BuildBackend(ctx context.Context, env *Env, root string, f *BackendFlags) (backend.Backend, error) {
	name := resolveAlias(backendName(f.Name))
	factory, ok := backendFactories[name]
	if !ok {
		if f.Name == "" {
			return nil, fmt.Errorf("%w: the OS sandbox backend is not available in this build; pass --backend host to run without containment", backend.ErrUnavailable)
		}
		return nil, fmt.Errorf("%w: unknown backend %q (available: %s)", backend.ErrUnavailable, name, strings.Join(BackendNames(), ", "))
	}
	b, err := factory(ctx, env, root, f)
	if err != nil {
		if f.Name == "" && errors.Is(err, backend.ErrUnavailable) {
			return nil, fmt.Errorf("%w; pass --backend host to run without containment", err)
		}
		return nil, err
	}
	return b, nil
}

func init() {
	RegisterBackend("host", hostBackend)
}

// hostBackend builds the host backend: no containment, the working
// directory pinned to the root, the environment scrubbed to PATH, HOME and
// the --env names.
func hostBackend(_ context.Context, _ *Env, root string, f *BackendFlags) (backend.Backend, error) {
	if f.EgressAllow != nil && len(*f.EgressAllow) > 0 {
		return nil, fmt.Errorf("%w: --egress-allow needs a backend that can force traffic through the egress proxy; the host backend cannot restrict the network", backend.ErrUnavailable)
	}
	if f.Loopback {
		return nil, fmt.Errorf("%w: --loopback needs a backend that gives commands a network namespace of their own (os); the host backend's commands share the host's network", backend.ErrUnavailable)
	}
	sb, err := fsroot.Open(root)
	if err != nil {
		return nil, err
	}
	allow := slices.Clone(backend.DefaultEnvAllowlist)
	if f.Env != nil {
		allow = append(allow, *f.Env...)
	}
	return host.New(sb.Dir(), &host.Options{Timeout: f.Timeout, EnvAllowlist: allow, Limits: f.Limits()})
}
