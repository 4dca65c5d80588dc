package landlock

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ABI returns the Landlock ABI version of the running kernel, or an error
// wrapping [ErrUnavailable] that says why there is none.
func ABI() (int, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch errno {
	case 0:
		return int(v), nil
	case unix.ENOSYS:
		return 0, fmt.Errorf("%w: the kernel was built without Landlock (CONFIG_SECURITY_LANDLOCK, Linux 5.13+)", ErrUnavailable)
	case unix.EOPNOTSUPP:
		return 0, fmt.Errorf("%w: Landlock is disabled at boot (add landlock to the lsm= kernel parameter)", ErrUnavailable)
	}
	return 0, fmt.Errorf("%w: %w", ErrUnavailable, errno)
}

// Build creates a ruleset for abi granting c's rules. The rules' paths are
// opened now (O_PATH): a path replaced after Build is not followed.
func Build(abi int, c Config) (*Ruleset, error) {
	if abi < 1 {
		return nil, fmt.Errorf("%w: abi %d", ErrUnavailable, abi)
	}
	handled := fsRights(abi)
	attr := unix.LandlockRulesetAttr{Handled_access_fs: handled}
	if abi >= 4 && !c.AllowNetwork {
		attr.Handled_access_net = unix.LANDLOCK_ACCESS_NET_BIND_TCP | unix.LANDLOCK_ACCESS_NET_CONNECT_TCP
	}
	if abi >= 6 {
		attr.Scoped = unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | unix.LANDLOCK_SCOPE_SIGNAL
	}
	// The structure is passed with the size the ABI knows: kernels before
	// ABI 6 reject a larger one unless its tail is zero, and passing exactly
	// what is meant keeps that reasoning out of the way.
	size := unsafe.Offsetof(attr.Scoped)
	if abi >= 6 {
		size += unsafe.Sizeof(attr.Scoped)
	}
	fd, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), size, 0)
	if errno != 0 {
		return nil, fmt.Errorf("landlock: create ruleset: %w", errno)
	}
	for _, o := range c.Opened {
		for _, r := range o.rules {
			access := r.access
			if !r.dir {
				access &= fileRights
			}
			if err := addRuleAccess(int(fd), r.fd, r.name, access&handled); err != nil {
				unix.Close(int(fd))
				return nil, err
			}
		}
	}
	for _, r := range c.Rules {
		if err := addRule(int(fd), r, handled); err != nil {
			unix.Close(int(fd))
			return nil, err
		}
	}
	if attr.Handled_access_net != 0 {
		for _, port := range c.ConnectTCP {
			// struct landlock_net_port_attr (linux/landlock.h), which
			// golang.org/x/sys/unix does not define.
			na := struct{ allowedAccess, port uint64 }{unix.LANDLOCK_ACCESS_NET_CONNECT_TCP, uint64(port)}
			if _, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, fd, ruleNetPort, uintptr(unsafe.Pointer(&na)), 0, 0, 0); errno != 0 {
				unix.Close(int(fd))
				return nil, fmt.Errorf("landlock: allow tcp connect to port %d: %w", port, errno)
			}
		}
	}
	return &Ruleset{fd: int(fd), ABI: abi, handled: handled}, nil
}

// AllowFD grants access beneath the directory (or on the file) that fd
// refers to, like a [Rule] but for a file that has no path the caller can
// name: a tmpfs mounted in a mount namespace of the calling thread, say.
// Rules can be added until the ruleset is enforced; each enforcement takes
// the rules the ruleset has at that moment.
func (r *Ruleset) AllowFD(fd int, access uint64) error {
	return addRuleFD(r.fd, fd, "descriptor "+strconv.Itoa(fd), access, r.handled)
}

// ruleNetPort is LANDLOCK_RULE_NET_PORT.
const ruleNetPort = 2

func addRule(fd int, r Rule, handled uint64) error {
	pfd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		if r.Optional && errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("landlock: %w", &os.PathError{Op: "open", Path: r.Path, Err: err})
	}
	defer unix.Close(pfd)
	return addRuleFD(fd, pfd, r.Path, r.Access, handled)
}

func addRuleFD(fd, pfd int, name string, access, handled uint64) error {
	access &= handled
	var st unix.Stat_t
	if err := unix.Fstat(pfd, &st); err != nil {
		return fmt.Errorf("landlock: %w", &os.PathError{Op: "stat", Path: name, Err: err})
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	return addRuleAccess(fd, pfd, name, access)
}

// addRuleAccess adds a rule granting access (already reduced to what the
// ruleset handles and the file can take) beneath pfd.
func addRuleAccess(fd, pfd int, name string, access uint64) error {
	if access == 0 {
		return nil
	}
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(pfd)}
	_, _, errno := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if errno != 0 {
		return fmt.Errorf("landlock: add rule for %s: %w", name, errno)
	}
	return nil
}

// RestrictThread enforces r on the calling OS thread (and, through fork, on
// its future children). The caller must have locked its goroutine to the
// thread and set no_new_privs on it; the thread must never be handed back
// to the Go scheduler. The raw syscall acts on the calling thread only.
func (r *Ruleset) RestrictThread() error {
	if _, _, errno := unix.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(r.fd), 0, 0); errno != 0 {
		return fmt.Errorf("landlock: restrict thread: %w", errno)
	}
	return nil
}

func closeFD(fd int) error { return unix.Close(fd) }

// Open opens the rules' paths now (O_PATH, optional ones skipped when
// missing) so that [Build] can add them to many rulesets without resolving
// the paths each time ([Config].Opened). A path replaced afterwards is not
// followed: the rule keeps naming what was opened. The descriptors stay
// open until [Opened.Close].
func Open(rules []Rule) (*Opened, error) {
	o := &Opened{}
	for _, r := range rules {
		pfd, err := unix.Open(r.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			if r.Optional && errors.Is(err, unix.ENOENT) {
				continue
			}
			o.Close()
			return nil, fmt.Errorf("landlock: %w", &os.PathError{Op: "open", Path: r.Path, Err: err})
		}
		var st unix.Stat_t
		if err := unix.Fstat(pfd, &st); err != nil {
			unix.Close(pfd)
			o.Close()
			return nil, fmt.Errorf("landlock: %w", &os.PathError{Op: "stat", Path: r.Path, Err: err})
		}
		o.rules = append(o.rules, openedRule{fd: pfd, name: r.Path, access: r.Access, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR})
	}
	return o, nil
}

// Close closes the descriptors; rulesets already built keep their rules.
func (o *Opened) Close() error {
	for _, r := range o.rules {
		unix.Close(r.fd)
	}
	o.rules = nil
	return nil
}
