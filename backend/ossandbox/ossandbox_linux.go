//go:build linux

package ossandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
	"github.com/paigasus/helikon/internal/capture"
	"github.com/paigasus/helikon/internal/landlock"
	"github.com/paigasus/helikon/internal/proc"
	"github.com/paigasus/helikon/internal/readonlypaths"
	"github.com/paigasus/helikon/internal/seccomp"
)

// landlockABI is a test seam: tests replace it to force Landlock to look
// unavailable or too old.
var landlockABI = landlock.ABI

// Backend runs commands confined by Landlock and seccomp (Linux) or
// Seatbelt (macOS). It is safe for concurrent use.
type Backend struct {
	root       string
	opts       Options
	readPaths  []string // read+execute: PATH trees, caches, ReadPaths, hidden locations cut out (toolchain.go)
	toolEnv    []string // KEY=VALUE naming the granted tool managers' roots
	hidden     []string // the hidden credential locations, absolute (toolchain.go)
	readOnly   []string // Options.ReadOnlyPaths beneath the root, relative to it
	secrets    []string // root callers: SystemSecrets as they exist, masked per command (secrets.go)
	abi        int
	filter     []bpf.RawInstruction
	privileged bool          // the caller is root: namespaces and capability drop
	rootRW     bool          // the root's own mount is writable (keep it so in the view)
	tmpRW      bool          // the temporary directory's mount is writable
	tmpBase    string        // mount point of the commands' tmpfs, or "" (tmp_linux.go)
	home       *sessionHome  // the session home (HOME), or nil (home_linux.go)
	homeWhy    string        // why there is none, where asked for
	caches     *sharedCaches // Options.Caches, or nil (caches_linux.go)
	pidNS      bool          // unprivileged: the launcher has a pid namespace and /proc of its own
	pids       string        // v1 pids cgroup directory to create per-run cgroups in, or ""
	exe        string        // this program, executable in the sandbox when the reaper runs there
	tracking   proc.Tracking
	userns     bool // unprivileged: commands start through the launcher (userns_linux.go)
	// server: unprivileged, with userns, pidNS and tmpBase: commands
	// start through the long-lived launcher (server_linux.go).
	server        bool
	serverTraceMe bool                 // its commands' limits are set at exec
	serverFilter  []bpf.RawInstruction // its commands' filter (TraceMe when serverTraceMe)
	srv           *servers
	usernsWhy     string // unprivileged without the launcher: why
	// settleMu guards userns, usernsWhy, server, pidNS, tmpBase, g and
	// unsettled.
	settleMu sync.RWMutex
	// unsettled: an unprivileged caller's launcher has not been probed
	// yet; userns, pidNS and tmpBase hold the strongest configuration,
	// which the first command tries (see settle).
	traceMe    bool        // limits set on the traced command at exec (limitAtExec)
	egress     *Egress     // network only through the session's egress proxy
	net        *netSession // root callers: the session's network namespace (egress_linux.go)
	shell      string
	shellKind  shellKind
	lastCap    int
	g          backend.Guarantees
	log        *slog.Logger
	unsettled  bool
	envs       proc.ExportCache                           // what bash exports, per environment (the direct path)
	standby    launcher.Standby[standbyKey, standbyState] // root callers: threads confined ahead (standby_linux.go)
	noDirect   bool                                       // tests: run every command line through bash
	directRuns atomic.Int64                               // command lines run without bash
}

var _ backend.Backend = (*Backend)(nil)

// New returns a backend whose commands may read and write beneath root
// only. It fails, with an error wrapping [backend.ErrUnavailable] that says
// why, when this machine cannot enforce the guarantees: no Landlock or an
// ABI below [landlock.MinABI], no seccomp, an unsupported architecture, or a
// root caller that cannot create namespaces or drop its capabilities.
// Nothing ever runs unconfined. A nil opts means the defaults.
func New(root string, opts *Options) (*Backend, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	arch, abi, err := kernelSupport()
	if err != nil {
		return nil, err
	}
	croot, err := cleanRoot(root)
	if err != nil {
		return nil, err
	}
	b := &Backend{root: croot, opts: o, abi: abi, log: o.Logger, srv: &servers{}, net: &netSession{ns: launcher.NoNetNS}}
	if b.egress, err = checkEgress(&o); err != nil {
		return nil, err
	}
	if b.log == nil {
		b.log = slog.Default()
	}
	home, _ := os.UserHomeDir()
	tc, err := explainToolchain(os.Getenv("PATH"), home, &o)
	if err != nil {
		return nil, err
	}
	b.readPaths, b.toolEnv, b.hidden = tc.grants, tc.env, tc.hidden
	if b.readOnly, err = readonlypaths.Resolve(croot, o.ReadOnlyPaths); err != nil {
		return nil, fmt.Errorf("ossandbox: %w", err)
	}
	// Before the probe: a root caller's probe confines its first
	// command's thread, read-only paths mounted.
	if err := b.ensureReadOnly(); err != nil {
		return nil, err
	}
	b.privileged = os.Geteuid() == 0
	if b.privileged {
		b.secrets = systemSecrets(SystemSecrets)
	}
	// Root callers' commands are the first process of their pid namespace,
	// with no reaper in between: their limits can be set at exec.
	b.traceMe = b.privileged && traceMeAllowed()
	b.filter, err = seccomp.Assemble(arch, seccomp.Options{
		AllowNetwork:     o.AllowNetwork || b.netMode() != launcher.NetNone,
		TCPOnly:          b.netMode() != launcher.NetNone, // the namespace confines addresses; nothing but TCP
		AllowUnixSockets: abi >= 9,
		TraceMe:          b.traceMe,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
	}
	if b.shell, b.shellKind, err = findShell(); err != nil {
		return nil, err
	}
	if b.privileged {
		err = b.setUpPrivileged()
	} else {
		err = b.setUpUnprivileged(arch)
	}
	if err != nil {
		return nil, err
	}
	b.setUpHome()
	if err := b.setUpCaches(); err != nil {
		return nil, err
	}
	// An unprivileged caller's commands are confined by its launcher,
	// whose first command's confinement is the check (see settle); this
	// program's own threads confine commands only where no launcher
	// starts, and each command's confinement then fails closed. Probing
	// them here would cost every such program about 0.3 ms (a thread, a
	// ruleset, a filter and os/exec's pidfd check) for the fallback alone.
	if b.privileged || !b.userns {
		if err := b.probeConfinement(); err != nil {
			return nil, fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
		}
	}
	b.g = b.guarantees()
	return b, nil
}

// kernelSupport returns the native seccomp architecture and the Landlock
// ABI, or an error wrapping [backend.ErrUnavailable] when either is
// missing or too old to confine a command.
func kernelSupport() (*seccomp.Arch, int, error) {
	arch, err := seccomp.Native()
	if err != nil {
		return arch, 0, fmt.Errorf("%w: %w", backend.ErrUnavailable, err)
	}
	abi, err := landlockABI()
	if err != nil {
		return arch, 0, fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
	}
	if abi < landlock.MinABI {
		return arch, 0, fmt.Errorf("%w: os sandbox: Landlock ABI %d is below the minimum %d (Linux 6.2): truncation could not be confined", backend.ErrUnavailable, abi, landlock.MinABI)
	}
	if err := seccomp.Available(); err != nil {
		return arch, 0, fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
	}
	return arch, abi, nil
}

// checkEgress returns a copy of o.Egress once it is known to be
// enforceable here, or nil without one.
func checkEgress(o *Options) (*Egress, error) {
	if o.Loopback && o.AllowNetwork {
		return nil, errLoopbackAndNetwork
	}
	if o.Egress == nil {
		return nil, nil
	}
	if o.AllowNetwork {
		return nil, errEgressAndNetwork
	}
	if err := o.Egress.Filter.Validate(); err != nil {
		return nil, fmt.Errorf("ossandbox: egress filter: %w", err)
	}
	// Root callers and unprivileged ones alike: the session's network
	// namespace (made by this program, or by the launcher in its user
	// namespace) confines addresses, which Landlock (ports only) and
	// seccomp (no view of connect's address) cannot. Where no such
	// namespace can be made, the command is refused (run), never run in
	// this program's namespace.
	e := *o.Egress
	return &e, nil
}

// setUpPrivileged configures a root caller's backend: its commands start
// from a confined thread of this program, each the first process of its
// own pid namespace, in a pids cgroup where one can be made.
func (b *Backend) setUpPrivileged() error {
	var err error
	if b.lastCap, err = capLastCap(); err != nil {
		return fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
	}
	b.rootRW = mountWritable(b.root)
	b.tmpRW = mountWritable(os.TempDir())
	b.tmpBase = b.tmpfsMountPoint()
	b.pids = pidsCgroupDir()
	if b.pids != "" {
		sweepCgroups(b.pids)
	}
	b.tracking = proc.TrackPidNamespace // the namespace ends with its first process
	// The session's network namespace goes with the backend.
	runtime.AddCleanup(b, func(n *netSession) { n.close() }, b.net)
	b.initStandby()
	return nil
}

// setUpUnprivileged configures an unprivileged caller's backend: its
// commands start through the launcher, in the strongest configuration
// until settle has probed which works, under a reaper.
func (b *Backend) setUpUnprivileged(arch *seccomp.Arch) error {
	b.tracking = proc.TrackReaper
	var err error
	if b.exe, err = os.Executable(); err == nil {
		b.exe, err = filepath.EvalSymlinks(b.exe)
	}
	if err != nil {
		return fmt.Errorf("%w: os sandbox: locate this program for the reaper: %w", backend.ErrUnavailable, err)
	}
	if b.lastCap, err = capLastCap(); err != nil {
		return fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
	}
	b.rootRW = mountWritable(b.root)
	b.tmpRW = mountWritable(os.TempDir())
	// The launcher's configuration is probed when first needed (see
	// settle): a program that runs one command, as the CLI does, then
	// starts the launcher once, not twice.
	b.userns, b.pidNS, b.tmpBase, b.unsettled = true, true, b.tmpfsMountPoint(), true
	b.server = b.tmpBase != ""
	b.serverTraceMe = traceMeAllowed()
	if b.serverFilter, err = seccomp.Assemble(arch, seccomp.Options{
		AllowNetwork:     b.opts.AllowNetwork || b.netMode() != launcher.NetNone,
		TCPOnly:          b.netMode() != launcher.NetNone, // the session's namespace confines addresses
		AllowUnixSockets: b.abi >= 9,
		TraceMe:          b.serverTraceMe,
	}); err != nil {
		return fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
	}
	// The launcher dies with the backend (its socket's end closes when
	// this program exits, too).
	runtime.AddCleanup(b, func(s *servers) { s.close() }, b.srv)
	if launcherUnavailable != nil {
		b.settle()
	}
	return nil
}

// probeConfinement confines a throwaway thread as a command's would be
// (see probe), falling back to per-command temporary directories where the
// tmpfs cannot be mounted.
func (b *Backend) probeConfinement() error {
	// os/exec checks once per process whether pidfds work by forking a
	// throwaway child. Done from a confining thread, that child would be
	// the first process of the new pid namespace, and its exit would end
	// the namespace before the command could start in it. FindProcess runs
	// the check on an ordinary thread, while the probe's thread confines
	// itself (nothing starts from it before New returns).
	checked := make(chan struct{})
	go func() {
		defer close(checked)
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			_ = p.Release()
		}
	}()
	defer func() { <-checked }()
	if b.probeStandby() == nil {
		return nil
	}
	err := b.probe()
	if err != nil && b.tmpBase != "" {
		b.tmpBase = "" // per-command directories instead of a tmpfs
		err = b.probe()
	}
	return err
}

// settle probes an unprivileged caller's launcher, once: with everything
// first; then without its pid namespace (a /proc of its own cannot be
// mounted where the machine's /proc is partly masked, as in many
// containers), without the tmpfs (per-command directories), without both;
// and where none works, without the launcher (Landlock and seccomp still
// apply; only the read-only view, metadata outside the root, is missing,
// and Guarantees and Probe say so). It is what New did before the first
// command; it runs when Guarantees is first asked, or when the first
// command, which tries the strongest configuration, could not start.
func (b *Backend) settle() {
	b.settleMu.Lock()
	defer b.settleMu.Unlock()
	if !b.unsettled {
		return
	}
	base := b.tmpBase
	if base != "" {
		// The long-lived launcher first: where it starts, it confined a
		// thread as its commands' will be. It is started again by the
		// first command, with the backend's policy as it is then.
		if c, err := b.startServer(); err == nil {
			c.kill()
			b.server, b.pidNS, b.unsettled = true, true, false
			b.g = b.guarantees()
			return
		}
	}
	b.server = false
	var err error
	for i, try := range []struct {
		pidNS   bool
		tmpBase string
	}{{true, base}, {false, base}, {true, ""}, {false, ""}} {
		if i >= 2 && base == "" {
			break // tried already
		}
		if err = b.probeLauncherNS(try.pidNS, try.tmpBase); err == nil {
			b.pidNS, b.tmpBase = try.pidNS, try.tmpBase
			break
		}
	}
	if err != nil {
		b.userns, b.pidNS, b.tmpBase = false, false, base
		b.usernsWhy = usernsWhy(err)
		b.log.Warn("ossandbox: no user namespace per command; metadata of files outside the root is not confined", "why", b.usernsWhy)
		if len(b.readOnly) > 0 {
			b.log.Warn("ossandbox: no mount namespace per command; the read-only paths are NOT read-only for commands", "paths", b.readOnly)
		}
	}
	b.unsettled = false
	b.g = b.guarantees()
}

// ensureReadOnly creates the read-only paths that are missing and checks
// that each is a directory reached without a symbolic link, here, before
// a command's confinement mounts them: a path that cannot be mounted is
// refused as this error, not as a launcher that failed to start (which
// would have settle fall back to a configuration without the mounts).
// It costs a lookup per path and component.
func (b *Backend) ensureReadOnly() error {
	if len(b.readOnly) == 0 {
		return nil
	}
	rfd, err := unix.Open(b.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%w: os sandbox: open the root: %w", backend.ErrUnavailable, err)
	}
	defer unix.Close(rfd)
	for _, p := range b.readOnly {
		fd, ok, err := launcher.OpenProtected(rfd, p, true)
		if err != nil {
			return fmt.Errorf("%w: os sandbox: read-only path: %w; a directory kept read-only for commands must be a plain directory of the root", backend.ErrUnavailable, err)
		}
		if ok {
			unix.Close(fd)
		}
	}
	return nil
}

// probeless returns the read-only paths a launcher started with probe
// mounts: none for a probe. settle's probes then test the launcher only,
// and a launcher that starts but cannot mount the paths is still chosen,
// so that its commands are refused as unavailable, instead of settle
// falling back to running them without a mount namespace, where the paths
// would not be read-only at all.
func (b *Backend) probeless(probe bool) []string {
	if probe {
		return nil
	}
	return b.readOnly
}

// launchView is what one command reads of the launcher's configuration.
type launchView struct {
	userns, pidNS bool
	server        bool
	tmpBase       string
	unsettled     bool
}

func (b *Backend) view() launchView {
	b.settleMu.RLock()
	defer b.settleMu.RUnlock()
	return launchView{userns: b.userns, pidNS: b.pidNS, server: b.server, tmpBase: b.tmpBase, unsettled: b.unsettled}
}

// proven records that a command started through the launcher configured as
// v: the configuration works, and settle has nothing left to probe.
func (b *Backend) proven(v launchView) {
	b.settleMu.Lock()
	defer b.settleMu.Unlock()
	if b.unsettled && v == (launchView{userns: b.userns, pidNS: b.pidNS, server: b.server, tmpBase: b.tmpBase, unsettled: true}) {
		b.unsettled = false
		b.g = b.guarantees()
	}
}

// Guarantees reports what the backend enforces.
func (b *Backend) Guarantees() backend.Guarantees {
	b.settle()
	b.settleMu.RLock()
	defer b.settleMu.RUnlock()
	return b.g
}

// Dir returns the root: the directory commands start in and may write
// beneath (see [backend.WorkingDir]).
func (b *Backend) Dir() string { return b.root }

// Timeout returns the longest a command may run (see [backend.TimeLimited]).
func (b *Backend) Timeout() time.Duration {
	if b.opts.Timeout > 0 {
		return b.opts.Timeout
	}
	return backend.DefaultTimeout
}

func (b *Backend) guarantees() backend.Guarantees {
	g := backend.Guarantees{
		Filesystem: backend.IsolationOSKernel,
		Network:    backend.IsolationOSKernel,
		Syscalls:   backend.IsolationOSKernel,
		Label:      Label,
	}
	if b.opts.AllowNetwork {
		g.Network = backend.IsolationNone
	}
	g.Features = landlock.Features(b.abi, b.opts.AllowNetwork || b.opts.Loopback)
	g.Features = append(g.Features, "seccomp-bpf: foreign architectures killed, namespaces, mounts, ptrace, io_uring, bpf, keyrings, TIOCSTI and set-user-ID/set-group-ID modes denied, no_new_privs")
	switch {
	case b.netMode() != launcher.NetNone:
		g.Features = append(g.Features, b.netFeatures()...)
		if b.egress != nil {
			g.Network = backend.IsolationProxied
		}
	case !b.opts.AllowNetwork:
		g.Features = append(g.Features, "seccomp-bpf: sockets other than AF_UNIX denied")
	}
	if b.tmpBase != "" {
		g.Features = append(g.Features, "temporary directory (HOME, TMPDIR): a private tmpfs per command in its mount namespace, at most the file size limit")
	} else {
		g.Features = append(g.Features, "temporary directory (HOME, TMPDIR): a private directory per command, removed afterwards")
	}
	g.Features = append(g.Features, b.homeFeature())
	if b.caches != nil {
		g.Features = append(g.Features, fmt.Sprintf("named caches kept across sessions (%s scope): %s, at most %d MiB together, GOCACHE, GOMODCACHE, npm_config_cache, PIP_CACHE_DIR, CARGO_HOME… set to them", b.opts.Caches, b.caches.scope, b.caches.cap>>20))
	}
	if b.abi < 9 {
		g.Features = append(g.Features, "seccomp-bpf: socket(AF_UNIX) denied and socketpair limited to stream pairs (Landlock below ABI 9 cannot confine connects to pathname sockets)")
	}
	if b.privileged {
		g.Features = append(g.Features,
			"root caller: all capabilities dropped, bounding set included",
			"root caller: private mount namespace, everything read-only but the root and the temporary directory",
			"root caller: private pid namespace, killed as a whole when the command ends")
		if b.traceMe {
			g.Features = append(g.Features, "resource limits set by prlimit on the command stopped at exec (ptrace keeps only TRACEME and DETACH)")
		} else {
			g.Features = append(g.Features, "resource limits set by a ulimit prologue (Yama forbids PTRACE_TRACEME here)")
		}
		if b.pids != "" {
			g.Features = append(g.Features, "pids cgroup per command")
		}
	} else if b.server && b.userns && b.pidNS && b.tmpBase != "" {
		g.Features = append(g.Features,
			"unprivileged caller: a long-lived launcher per backend in a user namespace of its own, holding its every capability; per command a private mount namespace, everything read-only and nosuid but the root and the temporary directory (chmod, chown, utimes, xattrs outside the root refused)",
			"unprivileged caller: all capabilities dropped, bounding set included",
			"unprivileged caller: a private pid namespace per command, killed as a whole when the command ends, this program exits or the launcher dies; /proc shows only the command's own processes")
		if b.serverTraceMe {
			g.Features = append(g.Features, "resource limits set by prlimit on the command stopped at exec (ptrace keeps only TRACEME and DETACH)")
		} else {
			g.Features = append(g.Features, "resource limits set by a ulimit prologue (Yama forbids PTRACE_TRACEME here)")
		}
	} else {
		g.Features = append(g.Features, "descendants tracked by a child subreaper and killed when the command ends")
		if b.pidNS {
			g.Features = append(g.Features, "unprivileged caller: a pid namespace per command with a /proc of its own (no process outside is visible); everything in it is killed when the command ends or this program exits")
		}
		if b.userns {
			g.Features = append(g.Features,
				"unprivileged caller: a user and mount namespace per command, everything read-only and nosuid but the root and the temporary directory (chmod, chown, utimes, xattrs outside the root refused)",
				"unprivileged caller: all capabilities dropped, bounding set included")
		} else {
			g.Features = append(g.Features, "unprivileged caller: NO read-only view, metadata of the caller's own files outside the root (chmod, utimes, xattrs) is NOT confined: "+b.usernsWhy)
		}
	}
	g.Features = append(g.Features, b.identity())
	if len(b.readOnly) > 0 {
		list := strings.Join(b.readOnly, ", ")
		if b.privileged || b.userns {
			g.Features = append(g.Features, "read-only paths: mounted read-only in the command's mount namespace: "+list+" (nothing beneath them can be written, created, removed or renamed, and they cannot be removed, renamed, replaced or given a second name, whatever program names them; created empty where missing)")
		} else {
			g.Features = append(g.Features, "read-only paths: "+list+" are NOT read-only for commands (no mount namespace: "+b.usernsWhy+"); only the tools' own checks protect them")
		}
	}
	return g
}

// identity is the guarantees feature that says who commands run as.
func (b *Backend) identity() string {
	switch {
	case b.privileged:
		return "identity: commands run as root (uid 0), without capabilities; HOME and TMPDIR are theirs"
	case b.userns && b.opts.MapRootUser:
		return fmt.Sprintf("identity: commands run as uid and gid 0 of their user namespace (MapRootUser), which are the caller's uid %d and gid %d outside; HOME and TMPDIR are theirs", os.Getuid(), os.Getgid())
	}
	return fmt.Sprintf("identity: commands run as the caller's own uid %d and gid %d; HOME and TMPDIR are theirs", os.Getuid(), os.Getgid())
}

func findShell() (string, shellKind, error) {
	sh, isBash, err := proc.Shell()
	if err != nil {
		return "", 0, fmt.Errorf("%w: os sandbox: %w", backend.ErrUnavailable, err)
	}
	if !isBash {
		return sh, kindSh, nil
	}
	return sh, kindBash, nil
}

func capLastCap() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, fmt.Errorf("read the last capability: %w", err)
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func mountWritable(path string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false
	}
	return st.Flags&unix.ST_RDONLY == 0
}

// pidsCgroupDir returns the v1 pids cgroup directory of this process when it
// is writable, or "". A v1 hierarchy lets one thread move into a cgroup (its
// tasks file) so that the command forked from it starts there, with no
// window in which it could fork uncounted.
func pidsCgroupDir() string {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	mount := ""
	for line := range strings.Lines(string(mi)) {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		pf, qf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(qf) < 3 || qf[0] != "cgroup" {
			continue
		}
		if contains(strings.Split(qf[2], ","), "pids") {
			mount = pf[4]
			break
		}
	}
	if mount == "" {
		return ""
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(cg)) {
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) == 3 && contains(strings.Split(f[1], ","), "pids") {
			dir := filepath.Join(mount, f[2])
			if unix.Access(filepath.Join(dir, "tasks"), unix.W_OK) == nil {
				return dir
			}
		}
	}
	return ""
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// probe confines a throwaway thread exactly as a command's thread would be,
// without starting anything, so that a machine that cannot do it fails at
// construction rather than at the first command.
func (b *Backend) probe() error {
	// Without a tmpfs the root stands in for the temporary directory: the
	// probe starts nothing, and creating and removing a directory costs
	// more than the rest of it.
	td := tempDir{path: b.root}
	if b.tmpBase != "" {
		td = tempDir{path: b.tmpBase, tmpfs: true, size: 1 << 20}
	}
	rs, err := b.buildRuleset(td, !b.userns)
	if err != nil {
		return err
	}
	defer rs.Close()
	return launcher.OnDiscardedThread(func() error {
		h, err := b.confineThread(rs, td, "")
		go h.close() // the namespace's teardown waits for RCU: not here
		return err
	})
}

// held is what confining a thread leaves to its caller, -1 where absent.
type held struct {
	// mntNS is a descriptor of the command's mount namespace (root
	// callers), which the caller closes once the command is gone:
	// destroying a mount namespace waits for an RCU grace period, and
	// without this reference the command's last process would pay it on
	// its way out, before its parent learns that it exited.
	mntNS int
	// janitor, when not nil, stops the command's reapTracedThreads.
	janitor chan struct{}
}

var none = held{mntNS: -1}

func (h held) close() {
	if h.janitor != nil {
		close(h.janitor)
	}
	if h.mntNS >= 0 {
		unix.Close(h.mntNS)
	}
}

// rules returns what a command may access; a tmpfs temporary directory is
// granted by descriptor once it is mounted (launcher.MountTmpfs).
func (b *Backend) rules(tmp tempDir) landlock.Config {
	c := b.ownRules(tmp, false)
	c.Rules = append(c.Rules, systemRules()...)
	return c
}

// ownRules returns the rules of rules that depend on the backend or the
// command: the root, the temporary directory, the read paths, and with
// reaper this program (an unprivileged caller's reaper, without the
// launcher, runs confined).
func (b *Backend) ownRules(tmp tempDir, reaper bool) landlock.Config {
	// With Loopback, TCP is left to the session's network namespace,
	// which has no route out: commands bind and connect on its loopback
	// at any port. Egress alone keeps connect to the proxy's port only.
	c := landlock.Config{AllowNetwork: b.opts.AllowNetwork || b.opts.Loopback}
	if b.egress != nil && !b.opts.Loopback {
		c.ConnectTCP = []uint16{proxyPort}
	}
	add := func(p string, access uint64) {
		c.Rules = append(c.Rules, landlock.Rule{Path: p, Access: access})
	}
	add(b.root, landlock.ReadWrite)
	for _, p := range b.writable() {
		add(p, landlock.ReadWrite)
	}
	if !tmp.tmpfs {
		add(tmp.path, landlock.ReadWrite)
	}
	for _, p := range b.readPaths {
		add(p, landlock.ReadOnly)
	}
	if reaper && b.exe != "" {
		add(b.exe, landlock.Execute|landlock.ReadFile)
	}
	return c
}

// systemRules returns the rules every command gets: the system
// directories, the harmless devices and /proc.
func systemRules() []landlock.Rule {
	var r []landlock.Rule
	for _, p := range SystemReadPaths {
		r = append(r, landlock.Rule{Path: p, Access: landlock.ReadOnly, Optional: true})
	}
	r = append(r, landlock.Rule{Path: "/dev/null", Access: landlock.ReadFile | landlock.WriteFile | landlock.Truncate | landlock.IoctlDev})
	for _, p := range []string{"/dev/zero", "/dev/random", "/dev/urandom"} {
		r = append(r, landlock.Rule{Path: p, Access: landlock.ReadFile, Optional: true})
	}
	// /proc is readable so that /proc/self works; Landlock refuses
	// ptrace-class access (environ, mem, fd, maps) to processes outside the
	// sandbox's domain.
	return append(r, landlock.Rule{Path: "/proc", Access: landlock.ReadFile | landlock.ReadDir})
}

// openedSystemRules opens the paths of systemRules once per program (a
// dozen descriptors, kept open): resolving them for every command cost
// about as much as the rest of building its ruleset. System directories
// are not replaced while a program runs; if one were, commands would keep
// the one that was opened, or lose access, never gain it.
var openedSystemRules = sync.OnceValues(func() (*landlock.Opened, error) {
	return landlock.Open(systemRules())
})

// buildRuleset builds the Landlock ruleset of a command confined by a
// thread of this program (the launcher builds its own from rules).
func (b *Backend) buildRuleset(tmp tempDir, reaper bool) (*landlock.Ruleset, error) {
	sys, err := openedSystemRules()
	if err != nil {
		return nil, err
	}
	c := b.ownRules(tmp, reaper)
	c.Opened = []*landlock.Opened{sys}
	return landlock.Build(b.abi, c)
}

// confineThread applies every restriction to the calling OS thread, which
// the caller has locked and will discard. Order matters: the cgroup, the
// namespaces and the mounts need capabilities that are dropped next;
// Landlock and seccomp need no_new_privs; seccomp comes last because it
// denies the syscalls used before it.
//
// With [Options].Loopback or [Options].Egress, the thread enters the
// session's network namespace (netSession).
func (b *Backend) confineThread(rs *landlock.Ruleset, tmp tempDir, cgroup string) (h held, err error) {
	h = none
	defer func() {
		if err != nil {
			h.close()
			h = none
		}
	}()
	if b.privileged {
		if cgroup != "" {
			// "0" is the writing thread. Naming it by its id instead would
			// make the kernel lock every thread group against migration,
			// which waits for an RCU grace period (milliseconds).
			if err := os.WriteFile(filepath.Join(cgroup, "tasks"), []byte("0"), 0); err != nil {
				return h, fmt.Errorf("enter pids cgroup: %w", err)
			}
		}
		if err := unix.Unshare(unix.CLONE_NEWNS | unix.CLONE_NEWPID); err != nil {
			return h, fmt.Errorf("create mount and pid namespaces: %w", err)
		}
		if h.mntNS, err = launcher.ThreadMountNS(); err != nil {
			h.mntNS = -1
			return h, fmt.Errorf("hold the mount namespace: %w", err)
		}
		if b.netMode() != launcher.NetNone {
			ns, err := b.net.get(b)
			if err != nil {
				return h, err
			}
			if err := launcher.EnterNetNS(ns); err != nil {
				return h, err
			}
		}
		viewTmp := tmp.path
		if tmp.tmpfs {
			viewTmp = "" // mounted below, writable
		}
		if err := launcher.ReadOnlyView(b.root, viewTmp, b.rootRW, b.tmpRW); err != nil {
			return h, err
		}
		if err := launcher.WritablePaths(b.writable()); err != nil {
			return h, err
		}
		if err := launcher.MountOverlays(rs, b.overlays(), false); err != nil {
			return h, err
		}
		if err := launcher.ProtectPaths(b.root, b.readOnly); err != nil {
			return h, err
		}
		if err := launcher.MaskPaths(b.secrets); err != nil {
			return h, err
		}
		if tmp.tmpfs {
			if err := launcher.MountTmpfs(rs, tmp.path, tmp.size); err != nil {
				return h, err
			}
		}
		if err := launcher.DropCapabilities(b.lastCap); err != nil {
			return h, err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return h, fmt.Errorf("set no_new_privs: %w", err)
	}
	if err := rs.RestrictThread(); err != nil {
		return h, err
	}
	return h, seccomp.InstallThread(b.filter)
}

// Run runs req confined. The command's working directory is the root;
// TMPDIR points to a private temporary directory, gone afterwards, and HOME
// to the session home (see [Options].HomeSize). While the session home or
// the named caches are over their caps, Run fails with [ErrHomeFull].
func (b *Backend) Run(ctx context.Context, req *backend.Request) (*backend.Result, error) {
	return b.runJob(ctx, req, proc.Job{})
}

// Start starts req confined as a process that keeps running (see
// [backend.Starter]): the same namespaces, Landlock ruleset, seccomp
// filter, cgroup and limits as a command of Run, for the process's whole
// life, which its lifetime bounds in place of the timeout. Through the
// long-lived launcher, the process can be killed but not sent other
// signals, and a terminal is not its controlling terminal.
func (b *Backend) Start(ctx context.Context, req *backend.StartRequest) (backend.Process, error) {
	p, err := proc.StartProcess(ctx, req, b.runJob)
	if err != nil {
		return nil, fmt.Errorf("ossandbox: %w", err)
	}
	return p, nil
}

// runJob is Run with j's timeout (when set) and start hook.
func (b *Backend) runJob(ctx context.Context, req *backend.Request, j proc.Job) (*backend.Result, error) {
	if (req.Command == "") == (len(req.Argv) == 0) {
		return nil, errors.New("ossandbox: exactly one of Command and Argv must be set")
	}
	if err := b.ensureReadOnly(); err != nil {
		return nil, err
	}
	if b.home != nil {
		if err := b.home.ensure(); err != nil {
			return nil, err
		}
		defer b.home.measureHome()
	}
	if b.caches != nil {
		if err := b.caches.ensure(); err != nil {
			return nil, err
		}
		defer b.caches.measureCaches()
	}
	v := b.view()
	if v.unsettled && req.Stdin != nil {
		if _, ok := req.Stdin.(*os.File); !ok {
			// A reader is copied to the launcher as soon as it starts:
			// a failed first try could consume input the retry needs.
			b.settle()
			v = b.view()
		}
	}
	res, err, ran := b.run(ctx, req, v, !b.noDirect, j)
	if v.unsettled {
		if res == nil && errors.Is(err, backend.ErrUnavailable) {
			// The strongest configuration did not start (nothing ran):
			// probe, as New used to, and run with what works.
			b.settle()
			if w := b.view(); w != v {
				v = w
				res, err, ran = b.run(ctx, req, v, !b.noDirect, j)
			}
		} else if res != nil {
			b.proven(v) // the command started through it
		}
	}
	if !ran {
		// The direct start of a literal command failed before anything
		// ran (the program is not executable in the sandbox, say): bash
		// runs it and reports as bash does.
		res, err, _ = b.run(ctx, req, v, false, j)
	}
	return b.explainDenied(req, res, err)
}

// run is Run; with direct, a literal command (see proc.Literal) is started
// without bash where limits are set at exec (traceMe), and ran is false
// when that start failed and nothing ran.
func (b *Backend) run(ctx context.Context, req *backend.Request, v launchView, direct bool, j proc.Job) (res *backend.Result, err error, ran bool) {
	timeout := backend.EffectiveTimeout(b.opts.Timeout, req.Timeout)
	if j.Timeout > 0 {
		timeout = j.Timeout
	}
	limits := b.limits(timeout, req.Limits)
	outCap := capture.Cap(b.opts.OutputCap, req.OutputCap) // a request may lower it, not raise it

	td, err := b.tempDir(limits.FileSize, v.tmpBase)
	if err != nil {
		return nil, err, true
	}
	defer td.remove()
	// The long-lived launcher needs the tmpfs: the view it holds for
	// every command has no per-command directory in it.
	server := v.server && v.userns && v.pidNS && td.tmpfs
	if err := b.checkNet(v, server); err != nil {
		return nil, err, true
	}
	key, standby := b.standbyFor(td, limits.Processes)
	var sb *rootWorker // a thread confined ahead for this command
	if standby {
		sb = b.standby.Take(key)
	}
	var rs *landlock.Ruleset // the launcher builds its own, a standby had its own
	if !v.userns && sb == nil {
		if rs, err = b.buildRuleset(td, !b.privileged); err != nil {
			return nil, fmt.Errorf("ossandbox: %w", err), true
		}
		defer rs.Close()
	}
	var (
		cgroup string
		procs  int64 = -1 // root callers: RLIMIT_NPROC does not apply
	)
	if sb != nil {
		cgroup = sb.State().cgroup
	} else if cgroup, procs, err = b.commandCgroup(limits.Processes); err != nil {
		return nil, err, true
	}
	if cgroup != "" {
		defer b.dropCgroup(cgroup)
	}
	traceMe := b.traceMe && !traced()
	if server {
		traceMe = b.serverTraceMe && !traced()
	}
	argv, rl := b.argv(req, limits, procs, traceMe)
	env := b.env(req, td.path)
	path := ""
	if direct && traceMe && (b.privileged || server) && req.Command != "" && req.Stdin == nil && limits.AddressSpace <= 0 && td.tmpfs {
		// Where the limits are set at exec, a literal command runs as
		// bash would run it, without bash (see proc.Literal). Only with
		// the tmpfs, whose path (HOME, TMPDIR) is the same for every
		// command: what bash exports is learnt once per environment.
		if words, p, ok := proc.Literal(req.Command, env, b.root); ok {
			if e := b.exported(ctx, req, env, server); e != nil {
				argv, path, env = words, p, e.For(p)
			}
		}
	}
	spec := &proc.Spec{
		Argv:      argv,
		Path:      path,
		Dir:       b.root,
		Env:       env,
		Stdin:     req.Stdin,
		Stdout:    req.Stdout,
		Stderr:    req.Stderr,
		OutputCap: outCap,
		Timeout:   timeout,
		Tracking:  b.tracking,
		Started:   j.Started,
	}
	st := &confinedStart{b: b, v: v, td: td, rs: rs, cgroup: cgroup, traceMe: traceMe, limits: rl, h: none, sb: sb}
	if standby {
		st.key, st.prepare = key, true
	}
	if server {
		spec.Spawn = b.spawner(&launcher.Request{Argv: argv, Env: env, TmpSize: td.size, TraceMe: traceMe}, rl)
	} else {
		spec.Starter = st
	}
	b.log.DebugContext(ctx, "ossandbox: run", "argv0", argv[0], "timeout", timeout, "privileged", b.privileged, "direct", spec.Path != "")
	res, err = proc.Run(ctx, spec)
	if sb != nil && !st.used {
		// proc.Run ended before the start (a cancelled context, say):
		// the standby, taken from the slot, would wait for it forever.
		sb.LetGo()
	}
	st.release()
	return b.outcome(spec, res, err)
}

// limits returns the limits of a command whose timeout is timeout and
// whose request asks for req (nil for none).
func (b *Backend) limits(timeout time.Duration, req *backend.ResourceLimits) backend.ResourceLimits {
	base := b.opts.Limits.WithDefaults(timeout)
	if base.Processes == 0 {
		base.Processes = DefaultProcesses
	}
	return tighten(base, req)
}

// commandCgroup returns the pids cgroup of one command capped at procs
// processes, or "" where there is none, and the process cap left to
// RLIMIT_NPROC (-1 for none).
func (b *Backend) commandCgroup(procs int64) (cgroup string, nproc int64, err error) {
	if b.pids == "" {
		if b.privileged {
			return "", -1, nil // RLIMIT_NPROC does not apply to uid 0
		}
		return "", procs, nil
	}
	if cgroup, err = b.newPidsCgroup(procs); err != nil {
		return "", 0, err
	}
	return cgroup, -1, nil // capped by the cgroup instead of RLIMIT_NPROC
}

// dropCgroup removes a command's pids cgroup once the command has ended.
// The confining thread leaves the cgroup when the runtime has terminated
// it, shortly after the command started: by then it is nearly always
// gone, and removing the empty cgroup costs microseconds. Only when it is
// not is the cgroup removed in the background; a program that exits before
// that leaves it to the sweep of the next backend (sweepCgroups).
func (b *Backend) dropCgroup(cgroup string) {
	if unix.Rmdir(cgroup) != nil {
		go removeCgroup(b.log, cgroup)
	}
}

// argv returns the argument vector that runs req under limits, with procs
// the process cap left to RLIMIT_NPROC: with traceMe the command itself
// and the limits set at its exec (rl); otherwise through a shell whose
// ulimit prologue sets them.
func (b *Backend) argv(req *backend.Request, limits backend.ResourceLimits, procs int64, traceMe bool) (argv []string, rl []rlimit) {
	switch {
	case traceMe:
		if req.Command != "" {
			return []string{b.shell, "-c", req.Command}, rlimits(limits, procs)
		}
		return req.Argv, rlimits(limits, procs)
	case req.Command != "":
		return []string{b.shell, "-c", prologue(b.shellKind, limits, procs, currentHard) + req.Command}, nil
	}
	// A program without a shell command line only needs a shell for
	// ulimit; sh (dash on Debian) starts several times faster than bash,
	// but its ulimit has no -u, which a process cap needs.
	sh, kind := b.shell, b.shellKind
	if _, err := os.Stat("/bin/sh"); err == nil && procs <= 0 {
		sh, kind = "/bin/sh", kindSh
	}
	return append([]string{sh, "-c", prologue(kind, limits, procs, currentHard) + `exec "$@"`, "helikon"}, req.Argv...), nil
}

// spawner returns the proc.Spec Spawn that runs r, completed with the
// program and, when r is traced, the limits rl, through the long-lived
// launcher.
func (b *Backend) spawner(r *launcher.Request, rl []rlimit) func(string, [3]*os.File) (proc.Remote, error) {
	if r.TraceMe {
		r.Limits = rl
	}
	return func(path string, stdio [3]*os.File) (proc.Remote, error) {
		c, err := b.srv.get(b)
		if err != nil {
			return nil, err
		}
		r.Path = path
		rc, err := c.spawn(r, stdio)
		if err != nil {
			return nil, err
		}
		return rc, nil
	}
}

// outcome is run's answer for spec's run, which proc.Run answered with res
// and err: ran is false when a direct start failed and nothing ran.
func (b *Backend) outcome(spec *proc.Spec, res *backend.Result, err error) (*backend.Result, error, bool) {
	if errors.Is(err, backend.ErrUnavailable) {
		return nil, fmt.Errorf("ossandbox: %w", err), true // nothing ran
	}
	var se *proc.StartError
	if spec.Path != "" && errors.As(err, &se) {
		return nil, nil, false
	}
	if spec.Path != "" {
		b.directRuns.Add(1)
	}
	return res, err, true
}

// confinedStart is the proc.Starter of one command that does not go
// through the long-lived launcher: it starts the command from a thread it
// confined (startConfined), or, with a user namespace, as a launcher of
// its own (startLauncherNS). What the start leaves behind (held) stays
// here until release.
type confinedStart struct {
	b       *Backend
	v       launchView
	td      tempDir
	rs      *landlock.Ruleset
	cgroup  string
	traceMe bool
	limits  []rlimit // set at exec with traceMe
	h       held
	sb      *rootWorker // a thread confined ahead for the command, or nil
	used    bool        // sb was given the command
	prepare bool        // once started, confine a standby for the next command of key
	key     standbyKey
}

// Start starts cmd confined.
func (c *confinedStart) Start(cmd *exec.Cmd) error {
	if c.v.userns {
		if err := c.b.startLauncherNS(cmd, c.td, false, c.v.pidNS); err != nil {
			return err
		}
		// Hold the launcher's mount namespace, as for root callers (see
		// held.mntNS): its teardown then happens off the command's exit
		// path. Best effort: a launcher that already failed has nothing
		// left to hold.
		fd, err := unix.Open(fmt.Sprintf("/proc/%d/ns/mnt", cmd.Process.Pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			c.h.mntNS = fd
		}
		return nil
	}
	var err error
	if c.sb != nil {
		c.used = true
		c.h, err = c.b.startStandby(c.sb, cmd, c.traceMe, c.limits)
	} else {
		c.h, err = c.b.startConfined(cmd, c.rs, c.td, c.cgroup, c.traceMe, c.limits)
	}
	if err == nil && c.prepare {
		// While this command runs (not before it starts: on two cores
		// that would slow its start).
		c.b.standby.Prepare(c.key)
	}
	return err
}

// release lets go of what the command's start held, once the command is
// gone; the namespaces' teardown happens off the caller's path.
func (c *confinedStart) release() {
	go c.h.close()
}

// env is the environment of req's command, whose temporary directory is tmp.
func (b *Backend) env(req *backend.Request, tmp string) []string {
	allow := b.opts.EnvAllowlist
	if allow == nil {
		allow = backend.DefaultEnvAllowlist
	}
	allow = append(allow[:len(allow):len(allow)], req.Env...)
	home := tmp
	if b.home != nil {
		home = b.home.path
	}
	set := append([]string{"HOME=" + home, "TMPDIR=" + tmp}, b.toolEnv...)
	if b.caches != nil {
		set = append(set, b.caches.env...) // after toolEnv: GOMODCACHE is the cache's
	}
	if b.egress != nil {
		for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"} {
			set = append(set, k+"="+ProxyURL)
		}
		// The session's own servers (Loopback) are reached directly;
		// the proxy would refuse loopback anyway.
		np := ""
		if b.opts.Loopback {
			np = "localhost,127.0.0.1,::1"
		}
		set = append(set, "NO_PROXY="+np, "no_proxy="+np)
	}
	set = append(set, req.SetEnv...)
	return backend.ScrubEnv(os.Environ(), allow, set)
}

// exported returns what bash, run confined like req's command with env,
// exports to a program it executes: learnt once per environment by running
// proc.ExportProbe's command through bash in the sandbox. Bash that
// executes it in place leaves this program its parent: the command's pid
// namespace has no /proc of its own (root callers), so /proc/self/stat
// shows pids as this program sees them. Nil means unknown: bash runs the
// command.
func (b *Backend) exported(ctx context.Context, req *backend.Request, env []string, server bool) *proc.Exported {
	return b.envs.Get(proc.ExportKey(b.root, env, false), func() *proc.Exported {
		command, cat, ok := proc.ExportProbe()
		if !ok {
			return nil
		}
		probe := &backend.Request{Command: command, Env: req.Env, SetEnv: req.SetEnv, Timeout: probeTimeout}
		res, err, _ := b.run(context.WithoutCancel(ctx), probe, b.view(), false, proc.Job{})
		if err != nil || res.ExitCode == nil || *res.ExitCode != 0 || len(res.Stderr) > 0 || res.Truncated {
			return nil
		}
		// Through the long-lived launcher, /proc is its pid namespace's,
		// where the launcher, bash's parent, is the first process.
		ppid := os.Getpid()
		if server {
			ppid = 1
		}
		e, _ := proc.ParseExported(res.Stdout, cat, ppid)
		return e
	})
}

// probeTimeout bounds the probe of bash's exported environment.
const probeTimeout = 10 * time.Second

// startConfined starts cmd from a new OS thread that is confined first: a
// fork inherits the forking thread's Landlock domain, seccomp filter,
// namespaces and capabilities, and the rest of this program stays as it
// was. The thread is never unlocked, so the Go runtime terminates it when
// the goroutine returns instead of reusing it for other goroutines.
func (b *Backend) startConfined(cmd *exec.Cmd, rs *landlock.Ruleset, tmp tempDir, cgroup string, traceMe bool, limits []rlimit) (h held, err error) {
	// Descriptors this program opened without O_CLOEXEC (by cgo code or a
	// raw syscall) would be inherited by the command and are outside
	// Landlock's reach: mark them all close-on-exec. Go's own descriptors
	// already are, and os/exec passes the command's descriptors by dup2.
	_ = unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	h = none
	err = launcher.OnDiscardedThread(func() error {
		var err error
		if h, err = b.confineThread(rs, tmp, cgroup); err != nil {
			return fmt.Errorf("%w: confine: %w", backend.ErrUnavailable, err)
		}
		return startOnThread(cmd, &h, traceMe, limits)
	})
	if err != nil {
		h.close()
		return none, err
	}
	return h, nil
}

// startOnThread starts cmd from the calling thread, confined for it, traced
// with its limits set at exec when traceMe (h then holds the janitor that
// reaps its threads' stops).
func startOnThread(cmd *exec.Cmd, h *held, traceMe bool, limits []rlimit) error {
	if !traceMe {
		return cmd.Start()
	}
	cmd.SysProcAttr.Ptrace = true
	if err := cmd.Start(); err != nil {
		return err
	}
	if err := limitAtExec(cmd, limits); err != nil {
		return err
	}
	h.janitor = make(chan struct{})
	go launcher.ReapTracedThreads(cmd.Process.Pid, h.janitor)
	return nil
}

// cgroupSeq numbers this program's per-command cgroups: one sequence for
// all its backends, so that no two commands share a cgroup (and its
// pids.max).
var cgroupSeq atomic.Uint64

func (b *Backend) newPidsCgroup(max int64) (string, error) {
	var dir string
	for tries := 0; ; tries++ {
		dir = filepath.Join(b.pids, cgroupName(os.Getpid(), cgroupSeq.Add(1)))
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) || tries == 100 {
			return "", fmt.Errorf("%w: ossandbox: create pids cgroup: %w", backend.ErrUnavailable, err)
		}
		// Left by an exited program whose pid this one has now: the
		// sweep removes it; take the next name.
	}
	v := "max"
	if max > 0 {
		v = strconv.FormatInt(max, 10)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(v), 0); err != nil {
		removeCgroup(slog.Default(), dir)
		return "", fmt.Errorf("%w: ossandbox: set pids.max: %w", backend.ErrUnavailable, err)
	}
	return dir, nil
}

// cgroupName is the name of a per-command cgroup: the program's pid and a
// sequence number.
func cgroupName(pid int, seq uint64) string { return fmt.Sprintf("helikon-%d-%d", pid, seq) }

// staleCgroupAge is the age past which a per-command cgroup is removed by
// any backend: a cgroup is used once, entered microseconds after it was
// created and removed when its command ends, and the kernel refuses to
// remove one that still has tasks (a command running for longer).
const staleCgroupAge = time.Minute

// sweepCgroups removes the per-command cgroups in dir left by programs that
// have exited (killed, or ended before a background removal finished):
// those whose program's pid is free, and those older than
// [staleCgroupAge] (the pid was reused). Removing one that still has tasks
// fails, harmlessly.
func sweepCgroups(dir string) { sweepCgroupsAt(dir, time.Now()) }

func sweepCgroupsAt(dir string, now time.Time) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		var pid int
		var seq uint64
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "helikon-") {
			continue
		}
		if _, err := fmt.Sscanf(e.Name(), "helikon-%d-%d", &pid, &seq); err != nil || cgroupName(pid, seq) != e.Name() || pid <= 0 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if pid == os.Getpid() || unix.Kill(pid, 0) != unix.ESRCH {
			var st unix.Stat_t
			if unix.Stat(p, &st) != nil || now.Sub(time.Unix(st.Ctim.Unix())) < staleCgroupAge {
				continue
			}
		}
		_ = unix.Rmdir(p)
	}
}

// removeCgroup removes a per-command cgroup once its last task (the
// confining thread, which exits asynchronously) has left.
func removeCgroup(log *slog.Logger, dir string) {
	for i := range 100 {
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return
		}
		time.Sleep(time.Duration(i+1) * 200 * time.Microsecond)
	}
	log.Warn("ossandbox: cannot remove pids cgroup", "cgroup", dir)
}

// currentHard returns this program's hard limit for a ulimit flag, in the
// limit's own unit (bytes, seconds, count), or -1 for unlimited.
func currentHard(flag byte) int64 {
	res := map[byte]int{'t': unix.RLIMIT_CPU, 'f': unix.RLIMIT_FSIZE, 'v': unix.RLIMIT_AS, 'n': unix.RLIMIT_NOFILE, 'u': unix.RLIMIT_NPROC}[flag]
	var rl unix.Rlimit
	if err := unix.Getrlimit(res, &rl); err != nil || rl.Max == unix.RLIM_INFINITY || rl.Max > 1<<62 {
		return -1
	}
	return int64(rl.Max)
}
