// Package landlock builds Landlock rulesets and enforces them on the calling
// OS thread only.
//
// github.com/landlock-lsm/go-landlock's high-level API restricts every
// thread of the process at once (it sets no_new_privs and calls
// landlock_restrict_self on all threads, or uses TSYNC on ABI 8). The
// OS-sandbox backend needs the opposite: one locked thread is restricted,
// forks the command, and is discarded, while the rest of the program stays
// unrestricted. go-landlock's raw wrappers (landlock/syscall) would do, but
// that package pulls in libcap's psx for its all-threads variants; this
// package makes the three syscalls itself with golang.org/x/sys/unix.
//
// # Guarantees
//
// [Build] creates a ruleset that handles every filesystem access right the
// running kernel knows (so whatever is not granted by a rule is denied),
// TCP bind and connect when the network is not allowed (ABI 4+), abstract
// Unix socket and signal scoping (ABI 6+) and, from ABI 9, the resolution of
// pathname Unix sockets. [RestrictThread] enforces it on the calling thread
// and every process that thread forks afterwards; it cannot be undone.
//
// # Not guaranteed
//
// Landlock does not cover chmod, chown, utimes, extended attributes, or
// connect to a pathname Unix socket before ABI 9; it does not affect file
// descriptors opened before enforcement. See the OS-sandbox backend for how
// those are closed.
package landlock

import (
	"errors"
	"fmt"
)

// MinABI is the lowest Landlock ABI the OS sandbox accepts: ABI 3 is the
// first that can refuse truncate(2) outside the granted paths; below it a
// command could empty any file it can read.
const MinABI = 3

// Filesystem access rights (linux/landlock.h).
const (
	Execute     uint64 = 1 << 0  // LANDLOCK_ACCESS_FS_EXECUTE
	WriteFile   uint64 = 1 << 1  // LANDLOCK_ACCESS_FS_WRITE_FILE
	ReadFile    uint64 = 1 << 2  // LANDLOCK_ACCESS_FS_READ_FILE
	ReadDir     uint64 = 1 << 3  // LANDLOCK_ACCESS_FS_READ_DIR
	RemoveDir   uint64 = 1 << 4  // LANDLOCK_ACCESS_FS_REMOVE_DIR
	RemoveFile  uint64 = 1 << 5  // LANDLOCK_ACCESS_FS_REMOVE_FILE
	MakeChar    uint64 = 1 << 6  // LANDLOCK_ACCESS_FS_MAKE_CHAR
	MakeDir     uint64 = 1 << 7  // LANDLOCK_ACCESS_FS_MAKE_DIR
	MakeReg     uint64 = 1 << 8  // LANDLOCK_ACCESS_FS_MAKE_REG
	MakeSock    uint64 = 1 << 9  // LANDLOCK_ACCESS_FS_MAKE_SOCK
	MakeFifo    uint64 = 1 << 10 // LANDLOCK_ACCESS_FS_MAKE_FIFO
	MakeBlock   uint64 = 1 << 11 // LANDLOCK_ACCESS_FS_MAKE_BLOCK
	MakeSym     uint64 = 1 << 12 // LANDLOCK_ACCESS_FS_MAKE_SYM
	Refer       uint64 = 1 << 13 // LANDLOCK_ACCESS_FS_REFER
	Truncate    uint64 = 1 << 14 // LANDLOCK_ACCESS_FS_TRUNCATE
	IoctlDev    uint64 = 1 << 15 // LANDLOCK_ACCESS_FS_IOCTL_DEV
	ResolveUnix uint64 = 1 << 16 // LANDLOCK_ACCESS_FS_RESOLVE_UNIX

	// ReadOnly is read, list and execute.
	ReadOnly = Execute | ReadFile | ReadDir
	// ReadWrite is every right but the creation of device nodes.
	ReadWrite = allFS &^ (MakeChar | MakeBlock)
	// fileRights are the rights that apply to a file (not a directory).
	fileRights = Execute | WriteFile | ReadFile | Truncate | IoctlDev
	allFS      = ResolveUnix<<1 - 1
)

// fsRights is the set of filesystem rights each ABI knows.
func fsRights(abi int) uint64 {
	switch {
	case abi >= 9:
		return ResolveUnix<<1 - 1
	case abi >= 5:
		return IoctlDev<<1 - 1
	case abi >= 3:
		return Truncate<<1 - 1
	case abi == 2:
		return Refer<<1 - 1
	case abi == 1:
		return MakeSym<<1 - 1
	}
	return 0
}

// ErrUnavailable is wrapped when the kernel has no usable Landlock.
var ErrUnavailable = errors.New("landlock unavailable")

// Rule grants Access beneath Path (a directory) or on Path (a file).
type Rule struct {
	Path   string // an absolute path, opened with O_PATH when the ruleset is built
	Access uint64 // access-right constants; rights the ABI lacks or a non-directory cannot take are dropped
	// Optional rules are skipped when Path does not exist (system
	// directories that a distribution lacks, such as /lib64).
	Optional bool
}

// Config is what a ruleset grants.
type Config struct {
	// Rules are everything the filesystem allows; every other access the
	// ABI handles is denied.
	Rules []Rule
	// AllowNetwork leaves TCP unrestricted; otherwise (ABI 4+) TCP bind
	// and connect are denied.
	AllowNetwork bool
	// Opened are more rules, whose paths were opened beforehand ([Open]).
	Opened []*Opened
	// ConnectTCP lists the ports TCP connect is still allowed to when the
	// network is not allowed (ABI 4+; ignored below). Landlock filters by
	// port only: any address on these ports is reachable unless something
	// else (a network namespace) confines addresses.
	ConnectTCP []uint16
}

// Features returns, in words, what a ruleset built on abi enforces.
func Features(abi int, allowNetwork bool) []string {
	f := []string{fmt.Sprintf("landlock abi %d: filesystem read/write/execute", abi)}
	if abi >= 2 {
		f = append(f, "landlock: cross-directory rename and link (refer)")
	}
	if abi >= 3 {
		f = append(f, "landlock: truncate")
	}
	if abi >= 4 && !allowNetwork {
		f = append(f, "landlock: tcp bind and connect denied (but for explicitly allowed ports)")
	}
	if abi >= 5 {
		f = append(f, "landlock: device ioctl")
	}
	if abi >= 6 {
		f = append(f, "landlock: abstract unix sockets and signals scoped to the sandbox")
	}
	if abi >= 9 {
		f = append(f, "landlock: pathname unix sockets resolvable only beneath granted paths")
	}
	return f
}

// Opened is a set of rules with their paths open, made by [Open].
type Opened struct {
	rules []openedRule
}

type openedRule struct {
	fd     int
	name   string
	access uint64
	dir    bool
}

// Ruleset is a ruleset file descriptor ready to be enforced.
type Ruleset struct {
	fd      int
	ABI     int    // the Landlock ABI the ruleset was built for
	handled uint64 // the filesystem rights it handles
}

// Close releases the ruleset.
func (r *Ruleset) Close() error { return closeFD(r.fd) }

// String describes the ruleset for logs.
func (r *Ruleset) String() string {
	return "landlock ruleset (abi " + fmt.Sprint(r.ABI) + ")"
}
