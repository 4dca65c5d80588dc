package ossandbox

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/paigasus/helikon/backend"
	"github.com/paigasus/helikon/egress"
)

// Options configure a [Backend]. The zero value means the defaults: no
// network, the system paths readable, [backend.DefaultTimeout],
// [backend.DefaultOutputCap], [backend.DefaultEnvAllowlist] and the default
// resource limits.
type Options struct {
	// AllowNetwork lets commands create network sockets. The network axis
	// of the guarantees is then none.
	AllowNetwork bool
	// Egress, when set, gives commands network access only through an
	// HTTP egress proxy that enforces its filter: the backend's commands
	// share a network namespace of their own (one per backend, the
	// session) whose only way out is the proxy, HTTP_PROXY, HTTPS_PROXY
	// and ALL_PROXY point to it, and the network axis of the guarantees
	// is proxied. Linux, root and unprivileged callers (see the package
	// documentation, Network); [New] fails elsewhere. It excludes
	// AllowNetwork.
	Egress *Egress
	// Loopback gives the backend's commands a network of their own: one
	// network namespace per backend (the session) with loopback up,
	// where they may create TCP sockets and listen and connect on any
	// port of its loopback. A server one command starts (in the
	// background) is reachable by the next; nothing outside the
	// namespace is: not the host's loopback, not its abstract Unix
	// sockets, not another backend's servers, no other address. With
	// Egress too, the proxy is the only way out and NO_PROXY names the
	// loopback addresses. Linux only; it excludes AllowNetwork.
	Loopback bool
	// ReadPaths are extra directories or files the command may read, list
	// and execute (a toolchain outside /usr, for instance).
	ReadPaths []string
	// NoPath stops granting the caller's PATH. By default each directory
	// of the caller's PATH outside the system paths, and the installation
	// tree behind it (a tool manager's root in the home directory such as
	// ~/.pyenv or ~/.nvm, or the prefix of a bin directory; see the
	// package documentation), is readable and executable, never writable,
	// with [HiddenPaths] cut out.
	NoPath bool
	// ReadCaches makes [CacheDirs] (the Go module cache, pip's, npm's,
	// Cargo's registry…) readable, never writable.
	ReadCaches bool
	// HidePaths are more credential locations no command may read, added
	// to [HiddenPaths]: absolute, or relative to the caller's home
	// directory. Nothing removes an entry of HiddenPaths.
	HidePaths []string
	// ReadOnlyPaths are directories beneath the root that commands may
	// read but not change: on Linux each is mounted read-only over itself
	// in the command's mount namespace (see the package documentation),
	// so that no program, however it names a file there (a shell
	// redirect, a script, tar, git, a hard link, /proc/self/cwd), can
	// write, create, remove or rename anything beneath it, nor remove,
	// rename or replace the directory. helikon's CLI and package toolbox
	// pass the policy files' directories (policyfile.Dirs: .helikon,
	// .claude, and the user's helikon directory where the root contains
	// it). A relative path is relative
	// to the root; an absolute one outside the root is dropped (commands
	// cannot write outside the root anyway). A missing directory is
	// created (empty, mode 0755) by [New] and before each command, and
	// left in place; one reached through a symbolic link is refused.
	ReadOnlyPaths []string
	// Timeout is the longest a command may run; a request can only
	// shorten it. Zero means [backend.DefaultTimeout].
	Timeout time.Duration
	// OutputCap is the cap per captured stream in bytes; zero means
	// [backend.DefaultOutputCap]. A request may lower it, not raise it.
	OutputCap int64
	// EnvAllowlist names the variables passed to commands (see
	// [backend.ScrubEnv]); nil means [backend.DefaultEnvAllowlist]. TMPDIR
	// is always set to the command's private temporary directory, and HOME
	// to the session home (see HomeSize), both owned by the command's uid
	// (the caller's home is not readable in the sandbox).
	EnvAllowlist []string
	// HomeSize caps, in bytes, the session home (Linux): a directory that
	// all commands of the backend share as HOME, so that the caches tools
	// keep there (Go's build and module caches, npm's, pip's, cargo's)
	// outlive one command. It lives outside the root, in
	// $TMPDIR/helikon-home-UID/, never in the caller's home, and is
	// removed by [Backend.Close] (or, after a crash, by [ReapHomes]:
	// helikon workspaces reap). Its size is measured after each command
	// (in the background: the next command sees the last measure);
	// once over the cap, commands fail with [ErrHomeFull] until it is
	// emptied or the cap raised (a command can overshoot the cap by what
	// it writes itself, at most its file size limit per file). Zero means
	// [DefaultHomeSize]; negative means no session home: HOME is each
	// command's private temporary directory, as TMPDIR is.
	HomeSize int64
	// Caches, when not [CacheSession], keeps the [NamedCaches] across
	// sessions (Linux): per project ([CacheProject], the one to choose)
	// or per user ([CacheUser]), in CacheDir, with the tools' variables
	// (GOCACHE, GOMODCACHE, npm_config_cache, PIP_CACHE_DIR, CARGO_HOME…)
	// set to them. It is an operator's choice: helikon's CLI takes it
	// from --caches or from a user or trusted project policy file
	// (sandbox.caches), never from an untrusted project's. See the package
	// documentation for what a poisoned cache can do.
	Caches CacheScope
	// CacheDir is where the named caches are kept; "" means
	// os.UserCacheDir()/helikon/caches (~/.cache/helikon/caches). It must
	// lie outside the root and every hidden location. Each directory on
	// the way that helikon creates is mode 0700; each must be a directory
	// of the caller's, not a symbolic link, that nobody else can write.
	CacheDir string
	// CacheSize caps, in bytes, the named caches of the scope together,
	// measured after each command as the session home is (see HomeSize);
	// zero means [DefaultCacheSize]. Over it, commands fail with
	// [ErrHomeFull] naming --cache-size.
	CacheSize int64
	// UserCachesBeneath lets the named caches kept across sessions
	// (Caches) read the user's own caches beneath them (Linux): Go's build
	// and module caches, npm's, pip's, Yarn's and ccache's (not Cargo's
	// or Gradle's homes, which hold credentials and configuration). Each
	// is the lower layer of an overlayfs mounted in the command's mount
	// namespace, whose upper layer is the named cache: commands find
	// what the user already downloaded or built, and everything they
	// write, change or remove goes to the named cache, never to the
	// user's (see the package documentation). Without a mount namespace
	// per command, the named caches are used without the user's content
	// beneath. It needs Caches.
	UserCachesBeneath bool
	// Limits are the resource limits; zero fields take the defaults (see
	// the package documentation).
	Limits backend.ResourceLimits
	// Logger receives a debug line per command and warnings; nil means
	// slog.Default(), as everywhere in helikon.
	Logger *slog.Logger
	// MapRootUser runs an unprivileged caller's commands as uid and gid
	// 0 of their user namespace, as unshare --map-root-user does, instead
	// of as the caller's own uid and gid (the default, as with bwrap).
	// It changes what commands are told, not what they may do: either
	// way they are the caller outside, without capabilities, confined
	// alike. It is for tools that expect to be root; the default suits
	// those that refuse to run as root or check that files are their
	// own (npm, pip, git's safe.directory). It has no effect for root
	// callers, whose commands run as root (no user namespace), nor where
	// user namespaces are unavailable (commands then run as the caller
	// in this program's namespace). Linux only.
	MapRootUser bool
	// Launcher, when set, is a launcher started ahead of the backend
	// ([StartLauncher]; Linux, unprivileged callers): the backend's
	// first command takes it, if it runs over the same root, instead of
	// starting one. The caller closes it (Close does nothing once taken).
	Launcher *Launcher
}

// Egress configures network access through the egress proxy
// ([Options].Egress). A fresh [egress.Proxy] serves each command.
type Egress struct {
	// Filter is what the proxy lets through; its zero value refuses
	// everything.
	Filter egress.Filter
	// Resolver resolves host names for the proxy; nil means the system
	// resolver.
	Resolver egress.Resolver
	// CheckAddr vets every resolved address (see [egress.Proxy]); nil
	// means public unicast addresses only.
	CheckAddr func(netip.Addr) error
}

// ProxyURL is the address of the egress proxy as commands see it, inside
// their own network namespace ([Options].Egress).
const ProxyURL = "http://127.0.0.1:3128"

// proxyPort is the port of ProxyURL.
const proxyPort = 3128

// errLoopbackAndNetwork is returned by New when both are asked for.
var errLoopbackAndNetwork = errors.New("ossandbox: Loopback and AllowNetwork exclude each other: the network allowed is the host's, not a loopback of the commands' own")

// errEgressAndNetwork is returned by New when both are asked for.
var errEgressAndNetwork = errors.New("ossandbox: Egress and AllowNetwork exclude each other: egress already lets commands reach the network, through the proxy")

// Label is the guarantees label of the backend on Linux.
const Label = "os-sandbox (landlock+seccomp)"

// SeatbeltLabel is the guarantees label of the backend on macOS.
const SeatbeltLabel = "os-sandbox (seatbelt)"

// DefaultProcesses caps the processes (and threads) of one command where the
// cap can be applied per command (a pids cgroup), and is the RLIMIT_NPROC of
// commands run by a non-root user otherwise.
const DefaultProcesses = 1024

// SystemReadPaths are the directories every command may read and execute.
var SystemReadPaths = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"}

// errRoot is wrapped by construction errors about the root directory.
var errRoot = errors.New("ossandbox: bad sandbox root")

// cleanRoot resolves root to an absolute path without symbolic links and
// checks that granting write access beneath it does not grant it to the
// system: the filesystem root, a system directory or an ancestor of one are
// refused.
func cleanRoot(root string) (string, error) {
	if root == "" {
		return "", fmt.Errorf("%w: empty path", errRoot)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errRoot, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errRoot, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%w: %w", errRoot, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: %s is not a directory", errRoot, real)
	}
	// Refuse the filesystem root and any ancestor of a directory that
	// must not become writable, and anything beneath the system
	// directories or the kernel's pseudo-filesystems.
	for _, sys := range append([]string{"/proc", "/dev", "/sys", "/tmp", "/var", "/home", "/root", "/run"}, SystemReadPaths...) {
		if real == "/" || real == sys || strings.HasPrefix(sys, real+"/") {
			return "", fmt.Errorf("%w: %s is or contains %s; use a project directory", errRoot, real, sys)
		}
	}
	for _, sys := range append([]string{"/proc", "/dev", "/sys"}, SystemReadPaths...) {
		if strings.HasPrefix(real, sys+"/") {
			return "", fmt.Errorf("%w: %s is inside the system directory %s; use a project directory", errRoot, real, sys)
		}
	}
	return real, nil
}
