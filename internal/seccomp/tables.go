package seccomp

// Syscall numbers from the kernel's syscall tables
// (arch/x86/entry/syscalls/syscall_64.tbl and the generic table used by
// arm64, include/uapi/asm-generic/unistd.h). They are spelled out here rather
// than taken from golang.org/x/sys/unix because that package only has the
// numbers of the architecture it is compiled for, and the filter of each
// architecture is tested on every architecture.

var amd64 = &Arch{
	Name:  "amd64",
	Audit: 0xc000003e, // AUDIT_ARCH_X86_64
	X32:   true,
	nr: map[string]uint32{
		"ioctl": 16, "socket": 41, "sendto": 44, "sendmsg": 46, "sendmmsg": 307, "socketpair": 53, "clone": 56, "ptrace": 101, "syslog": 103,
		"vhangup": 153, "pivot_root": 155, "adjtimex": 159, "chroot": 161, "acct": 163,
		"settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168,
		"reboot": 169, "iopl": 172, "ioperm": 173, "init_module": 175, "delete_module": 176,
		"quotactl": 179, "clock_settime": 227, "kexec_load": 246, "add_key": 248,
		"request_key": 249, "keyctl": 250, "unshare": 272, "perf_event_open": 298,
		"fanotify_init": 300, "name_to_handle_at": 303, "open_by_handle_at": 304,
		"clock_adjtime": 305, "setns": 308, "process_vm_readv": 310, "process_vm_writev": 311,
		"kcmp": 312, "finit_module": 313, "kexec_file_load": 320, "bpf": 321, "userfaultfd": 323,
		"io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "open_tree": 428,
		"move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
		"clone3": 435, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
		"quotactl_fd": 443, "open_tree_attr": 467,
		"setpriority": 141, "prlimit64": 302,
		"open": 2, "creat": 85, "chmod": 90, "fchmod": 91, "mknod": 133, "openat": 257,
		"mknodat": 259, "fchmodat": 268, "openat2": 437, "fchmodat2": 452,
	},
}

var arm64 = &Arch{
	Name:  "arm64",
	Audit: 0xc00000b7, // AUDIT_ARCH_AARCH64
	nr: map[string]uint32{
		"ioctl": 29, "umount2": 39, "sendto": 206, "sendmsg": 211, "sendmmsg": 269, "mount": 40, "pivot_root": 41, "chroot": 51, "vhangup": 58,
		"quotactl": 60, "acct": 89, "unshare": 97, "kexec_load": 104, "init_module": 105,
		"delete_module": 106, "clock_settime": 112, "syslog": 116, "ptrace": 117, "reboot": 142,
		"settimeofday": 170, "adjtimex": 171, "socket": 198, "socketpair": 199, "add_key": 217,
		"request_key": 218, "keyctl": 219, "clone": 220, "swapon": 224, "swapoff": 225,
		"perf_event_open": 241, "fanotify_init": 262, "name_to_handle_at": 264,
		"open_by_handle_at": 265, "clock_adjtime": 266, "setns": 268, "process_vm_readv": 270,
		"process_vm_writev": 271, "kcmp": 272, "finit_module": 273, "bpf": 280, "userfaultfd": 282,
		"kexec_file_load": 294, "io_uring_setup": 425, "io_uring_enter": 426,
		"io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430,
		"fsconfig": 431, "fsmount": 432, "fspick": 433, "clone3": 435, "pidfd_getfd": 438,
		"process_madvise": 440, "mount_setattr": 442, "quotactl_fd": 443, "open_tree_attr": 467,
		"setpriority": 140, "prlimit64": 261,
		"mknodat": 33, "fchmod": 52, "fchmodat": 53, "openat": 56, "openat2": 437, "fchmodat2": 452,
	},
}
