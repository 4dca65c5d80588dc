package ossandbox

// Support is what this machine offers the OS sandbox, as found by [Probe].
type Support struct {
	OS string `json:"os"`
	// LandlockABI is the Landlock ABI version, 0 when there is none.
	LandlockABI int    `json:"landlock_abi"`
	Landlock    string `json:"landlock"`
	Seccomp     string `json:"seccomp"`
	// UserNamespaces and MountNamespaces say whether this process can
	// create them (a child with CLONE_NEWUSER; unshare of a mount and pid
	// namespace, which needs root).
	UserNamespaces  string `json:"user_namespaces"`
	MountNamespaces string `json:"mount_namespaces"`
	PidsCgroup      string `json:"pids_cgroup"`
	Seatbelt        string `json:"seatbelt,omitempty"`
	Root            bool   `json:"root"`
	// Available is true when [New] can build a backend here; Reason says
	// why not otherwise.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
}
