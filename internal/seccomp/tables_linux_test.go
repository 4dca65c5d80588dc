package seccomp

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestNativeTableMatchesXSys cross-checks the hand-written table of the
// architecture under test against golang.org/x/sys/unix.
func TestNativeTableMatchesXSys(t *testing.T) {
	arch, err := Native()
	if err != nil {
		t.Skipf("no table for %s: %v", runtime.GOARCH, err)
	}
	want := map[string]uintptr{
		"sendto": unix.SYS_SENDTO, "sendmsg": unix.SYS_SENDMSG, "sendmmsg": unix.SYS_SENDMMSG,
		"ioctl": unix.SYS_IOCTL, "socket": unix.SYS_SOCKET, "socketpair": unix.SYS_SOCKETPAIR,
		"clone": unix.SYS_CLONE, "clone3": unix.SYS_CLONE3, "ptrace": unix.SYS_PTRACE,
		"mount": unix.SYS_MOUNT, "umount2": unix.SYS_UMOUNT2, "pivot_root": unix.SYS_PIVOT_ROOT,
		"chroot": unix.SYS_CHROOT, "setns": unix.SYS_SETNS, "unshare": unix.SYS_UNSHARE,
		"bpf": unix.SYS_BPF, "perf_event_open": unix.SYS_PERF_EVENT_OPEN, "userfaultfd": unix.SYS_USERFAULTFD,
		"io_uring_setup": unix.SYS_IO_URING_SETUP, "io_uring_enter": unix.SYS_IO_URING_ENTER,
		"io_uring_register": unix.SYS_IO_URING_REGISTER, "kexec_load": unix.SYS_KEXEC_LOAD,
		"kexec_file_load": unix.SYS_KEXEC_FILE_LOAD, "init_module": unix.SYS_INIT_MODULE,
		"finit_module": unix.SYS_FINIT_MODULE, "delete_module": unix.SYS_DELETE_MODULE,
		"keyctl": unix.SYS_KEYCTL, "add_key": unix.SYS_ADD_KEY, "request_key": unix.SYS_REQUEST_KEY,
		"open_by_handle_at": unix.SYS_OPEN_BY_HANDLE_AT, "name_to_handle_at": unix.SYS_NAME_TO_HANDLE_AT,
		"reboot": unix.SYS_REBOOT, "swapon": unix.SYS_SWAPON, "swapoff": unix.SYS_SWAPOFF,
		"process_vm_readv": unix.SYS_PROCESS_VM_READV, "process_vm_writev": unix.SYS_PROCESS_VM_WRITEV,
		"pidfd_getfd": unix.SYS_PIDFD_GETFD, "kcmp": unix.SYS_KCMP, "process_madvise": unix.SYS_PROCESS_MADVISE,
		"open_tree": unix.SYS_OPEN_TREE, "move_mount": unix.SYS_MOVE_MOUNT, "fsopen": unix.SYS_FSOPEN,
		"fsconfig": unix.SYS_FSCONFIG, "fsmount": unix.SYS_FSMOUNT, "fspick": unix.SYS_FSPICK,
		"mount_setattr": unix.SYS_MOUNT_SETATTR, "open_tree_attr": unix.SYS_OPEN_TREE_ATTR,
		"acct": unix.SYS_ACCT, "quotactl": unix.SYS_QUOTACTL, "quotactl_fd": unix.SYS_QUOTACTL_FD,
		"syslog": unix.SYS_SYSLOG, "vhangup": unix.SYS_VHANGUP, "settimeofday": unix.SYS_SETTIMEOFDAY,
		"clock_settime": unix.SYS_CLOCK_SETTIME, "clock_adjtime": unix.SYS_CLOCK_ADJTIME,
		"adjtimex": unix.SYS_ADJTIMEX, "fanotify_init": unix.SYS_FANOTIFY_INIT,
		"setpriority": unix.SYS_SETPRIORITY, "prlimit64": unix.SYS_PRLIMIT64,
		"openat": unix.SYS_OPENAT, "openat2": unix.SYS_OPENAT2, "fchmod": unix.SYS_FCHMOD,
		"fchmodat": unix.SYS_FCHMODAT, "fchmodat2": unix.SYS_FCHMODAT2, "mknodat": unix.SYS_MKNODAT,
	}
	for name, nr := range nativeOnly {
		want[name] = nr
	}
	for name, nr := range want {
		got, ok := arch.Nr(name)
		if !ok || uintptr(got) != nr {
			t.Errorf("%s: table has %d (present %v), x/sys has %d", name, got, ok, nr)
		}
	}
	if len(arch.nr) != len(want) {
		t.Errorf("table has %d entries, cross-checked %d", len(arch.nr), len(want))
	}
}

// TestSetIDConstantsMatchXSys cross-checks the mode bits and open flags
// that the filter and its reference spell out.
func TestSetIDConstantsMatchXSys(t *testing.T) {
	if setIDBits != unix.S_ISUID|unix.S_ISGID || sISUID != unix.S_ISUID || sISGID != unix.S_ISGID {
		t.Errorf("set-ID bits %#o, want %#o", setIDBits, unix.S_ISUID|unix.S_ISGID)
	}
	tmpfile := unix.O_TMPFILE &^ unix.O_DIRECTORY
	if createFlags != unix.O_CREAT|tmpfile || oCreat != unix.O_CREAT || oTmpfile != tmpfile {
		t.Errorf("create flags %#o, want %#o", createFlags, unix.O_CREAT|tmpfile)
	}
}
