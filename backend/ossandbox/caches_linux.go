//go:build linux

package ossandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/paigasus/helikon/backend/ossandbox/internal/launcher"
)

// ErrCacheDir is wrapped by [New]'s error when the named caches
// ([Options].Caches) cannot be kept where asked: a directory on the way
// that is a symbolic link, not the caller's, writable by others, or one
// that lies in the root or a hidden location. Nothing runs with caches
// elsewhere.
var ErrCacheDir = errors.New("ossandbox: unusable cache directory")

// sharedCaches are a backend's named caches kept across sessions.
type sharedCaches struct {
	scope string // the scope's directory
	dirs  []string
	env   []string // KEY=VALUE
	// overlays: with UserCachesBeneath, the caches that read the user's
	// beneath them.
	overlays []launcher.Overlay
	cap      int64
	usage
}

// setUpCaches makes the named caches' directories where [Options].Caches
// asks for them.
func (b *Backend) setUpCaches() error {
	o := b.opts
	if o.Caches == CacheSession {
		if o.UserCachesBeneath {
			return fmt.Errorf("ossandbox: Options.UserCachesBeneath needs Options.Caches (project or user): the user's caches are read beneath a named cache")
		}
		return nil
	}
	var key string
	switch o.Caches {
	case CacheProject:
		sum := sha256.Sum256([]byte(b.root))
		key = "project-" + filepath.Base(b.root) + "-" + hex.EncodeToString(sum[:8])
	case CacheUser:
		key = "user"
	default:
		return fmt.Errorf("ossandbox: Options.Caches %q: want %q, %q or empty (the session's)", o.Caches, CacheProject, CacheUser)
	}
	base := o.CacheDir
	if base == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return fmt.Errorf("%w: %w; set Options.CacheDir", ErrCacheDir, err)
		}
		base = filepath.Join(d, "helikon", "caches")
	}
	if !filepath.IsAbs(base) {
		return fmt.Errorf("%w: %s is not absolute", ErrCacheDir, base)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return fmt.Errorf("%w: %w", ErrCacheDir, err)
	}
	// The operator's path may reach its directory through links (a
	// cache disk mounted elsewhere); from there on, none is followed.
	real, err := filepath.EvalSymlinks(base)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCacheDir, err)
	}
	c := &sharedCaches{scope: filepath.Join(real, key), cap: o.CacheSize}
	if c.cap <= 0 {
		c.cap = DefaultCacheSize
	}
	for _, p := range []string{real, c.scope} {
		if err := privateDir(p); err != nil {
			return err
		}
	}
	for _, q := range append(append([]string{b.root}, b.readPaths...), b.hidden...) {
		if within(c.scope, q) || within(q, c.scope) {
			return fmt.Errorf("%w: %s would lie in or hold %s", ErrCacheDir, c.scope, q)
		}
	}
	if !mountWritable(c.scope) {
		return fmt.Errorf("%w: %s is on a read-only file system", ErrCacheDir, c.scope)
	}
	for _, n := range NamedCaches {
		d := filepath.Join(c.scope, n.Name)
		if err := privateDir(d); err != nil {
			return err
		}
		c.dirs = append(c.dirs, d)
		for _, k := range n.Env {
			c.env = append(c.env, k+"="+d)
		}
		if o.UserCachesBeneath {
			ov, err := c.overlay(n.Name, d, b.hidden)
			if err != nil {
				return err
			}
			if ov != nil {
				c.overlays = append(c.overlays, *ov)
			}
		}
	}
	b.caches = c
	return nil
}

// userCacheDirs returns the user's own cache of each named cache that
// can be read beneath one (UserCachesBeneath): where the tool keeps it by
// default, or where this program's environment says.
func userCacheDirs() map[string]string {
	m := map[string]string{}
	home, _ := os.UserHomeDir()
	ucd, _ := os.UserCacheDir()
	pick := func(name, env, def string) {
		if v := os.Getenv(env); filepath.IsAbs(v) {
			m[name] = v
		} else if def != "" && filepath.IsAbs(def) {
			m[name] = def
		}
	}
	gopath := filepath.Join(home, "go")
	if v, _, _ := strings.Cut(os.Getenv("GOPATH"), ":"); filepath.IsAbs(v) {
		gopath = v
	}
	pick("go-build", "GOCACHE", filepath.Join(ucd, "go-build"))
	pick("go-mod", "GOMODCACHE", filepath.Join(gopath, "pkg", "mod"))
	pick("npm", "npm_config_cache", filepath.Join(home, ".npm"))
	pick("pip", "PIP_CACHE_DIR", filepath.Join(ucd, "pip"))
	pick("yarn", "YARN_CACHE_FOLDER", filepath.Join(ucd, "yarn"))
	pick("ccache", "CCACHE_DIR", filepath.Join(ucd, "ccache"))
	return m
}

// overlay returns the overlay that reads the user's cache of name beneath
// the named cache dir, or nil where the user has none (or it cannot be
// read beneath: Cargo's and Gradle's homes). The writable layer and
// overlayfs's work directory are kept beside the caches, in
// .layers/NAME/upper and work, which commands are not granted.
func (c *sharedCaches) overlay(name, dir string, hidden []string) (*launcher.Overlay, error) {
	lower, ok := userCacheDirs()[name]
	if !ok {
		return nil, nil
	}
	real, err := filepath.EvalSymlinks(lower)
	if err != nil {
		return nil, nil // none yet
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return nil, nil
	}
	for _, q := range append(hidden, c.scope) {
		if within(real, q) || within(q, real) {
			return nil, fmt.Errorf("%w: the user's cache %s would lie in or hold %s", ErrCacheDir, real, q)
		}
	}
	layers := filepath.Join(c.scope, ".layers", name)
	ov := &launcher.Overlay{Lower: real, Upper: filepath.Join(layers, "upper"), Work: filepath.Join(layers, "work"), Target: dir}
	for _, p := range []string{filepath.Dir(layers), layers, ov.Upper, ov.Work} {
		if err := privateDir(p); err != nil {
			return nil, err
		}
	}
	return ov, nil
}

// overlays returns the overlays commands get.
func (b *Backend) overlays() []launcher.Overlay {
	if b.caches == nil {
		return nil
	}
	return b.caches.overlays
}

// privateDir makes p (mode 0700) if it is missing, and checks that it is a
// directory of the caller's, not a symbolic link, that nobody else can
// write.
func privateDir(p string) error {
	err := unix.Mkdir(p, 0o700)
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("%w: create %s: %w", ErrCacheDir, p, err)
	}
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCacheDir, p, err)
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return fmt.Errorf("%w: %s is a symbolic link", ErrCacheDir, p)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("%w: %s is not a directory", ErrCacheDir, p)
	case st.Uid != uint32(os.Geteuid()):
		return fmt.Errorf("%w: %s belongs to uid %d, not to this user", ErrCacheDir, p, st.Uid)
	case st.Mode&0o022 != 0:
		return fmt.Errorf("%w: %s is writable by others (mode %o)", ErrCacheDir, p, st.Mode&0o777)
	}
	return nil
}

// ensure fails with ErrHomeFull while the caches are over their cap.
func (c *sharedCaches) ensure() error {
	if used, over := c.last(); over {
		return fmt.Errorf("%w: the named caches in %s hold %d MiB, more than their cap of %d MiB; raise the cap (helikon exec/run --cache-size, ossandbox.Options.CacheSize) or empty them", ErrHomeFull, c.scope, used>>20, c.cap>>20)
	}
	return nil
}

// measureCaches counts, in the background, what the caches hold after a
// command (see dirUsage).
func (c *sharedCaches) measureCaches() { c.measure(c.scope, c.cap) }
