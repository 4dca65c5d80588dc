package ossandbox

// Support is what this machine offers the OS sandbox, as found by [Probe].
//
// The string fields describe one mechanism each, in words for operators
// ("abi 6", "available", "unavailable: …"); they are not meant to be parsed.
// Decide on Available and LandlockABI.
type Support struct {
	OS string `json:"os"` // runtime.GOOS
	// LandlockABI is the Landlock ABI version, 0 when there is none.
	LandlockABI int    `json:"landlock_abi"`
	Landlock    string `json:"landlock"` // the ABI found, or why there is none (Linux)
	Seccomp     string `json:"seccomp"`  // whether seccomp filters can be installed (Linux)
	// UserNamespaces and MountNamespaces say whether this process can
	// create them (a child with CLONE_NEWUSER; a mount namespace, by
	// unshare for root callers, in the launcher's user namespace for
	// unprivileged ones) and, when not, what the sandbox lacks.
	UserNamespaces  string `json:"user_namespaces"`
	MountNamespaces string `json:"mount_namespaces"`
	// PidsCgroup says whether a writable cgroup v1 pids hierarchy can cap
	// a command's process count (Linux).
	PidsCgroup string `json:"pids_cgroup"`
	// Seatbelt says whether sandbox-exec is usable (macOS only).
	Seatbelt string `json:"seatbelt,omitempty"`
	// Root is true when this process runs with effective uid 0.
	Root bool `json:"root"`
	// Available is true when [New] can build a backend here; Reason says
	// why not otherwise.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"` // why New would fail; "" when Available
}
