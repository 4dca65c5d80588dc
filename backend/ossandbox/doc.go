// Package ossandbox is the OS-kernel sandbox execution backend: Landlock and
// seccomp on Linux, Seatbelt on macOS. A command it runs is contained by the
// kernel, not by checks in this program.
//
// # Guarantees (Linux)
//
// [New] fails, with an error wrapping [backend.ErrUnavailable] that says
// why, when the kernel cannot enforce what follows: no Landlock or an ABI
// below 3 ([landlock.MinABI]; ABI 3 is the first that confines truncate),
// no seccomp, an architecture other than amd64 or arm64, or a root caller
// that cannot create mount and pid namespaces. Nothing ever runs unconfined,
// and no field of a [backend.Request] can weaken the confinement (request
// limits can only tighten the backend's).
//
//   - Filesystem (Landlock, every access right the kernel knows): read and
//     write beneath the root, including cross-directory renames and links;
//     read, list and execute beneath /usr, /bin, /sbin, /lib*, /etc and
//     [Options].ReadPaths; /dev/null read-write; /dev/zero, /dev/random and
//     /dev/urandom read-only; /proc readable; a private temporary directory
//     per command (HOME and TMPDIR point to it), removed afterwards. Nothing
//     else: not $HOME, not /tmp. Device nodes cannot be created anywhere.
//   - Processes: Landlock refuses ptrace-class access (/proc/PID/environ,
//     mem, fd) to processes outside the command; from ABI 6, signals and
//     abstract Unix sockets are scoped to the command.
//   - Syscalls (seccomp-bpf, see internal/seccomp): a foreign-architecture
//     entry (int 0x80, x32) kills the process; namespaces, mounts, ptrace,
//     process_vm_*, io_uring, bpf, perf_event_open, userfaultfd, kexec,
//     modules, keyrings, open_by_handle_at, reboot, swap and TIOCSTI/TIOCLINUX
//     fail with EPERM; clone3 with ENOSYS; arguments are compared on the low
//     32 bits the kernel reads. no_new_privs is set: setuid binaries gain
//     nothing.
//   - Network: every socket family but AF_UNIX is refused unless
//     [Options].AllowNetwork (ABI 4+ also refuses TCP bind and connect in
//     Landlock). Below Landlock ABI 9, which cannot confine connect(2) to a
//     pathname Unix socket (a Docker daemon, an SSH agent, the session bus),
//     socket(AF_UNIX) is refused too and socketpair is limited to stream and
//     seqpacket pairs.
//   - Root callers: the command runs with every capability dropped (the
//     bounding set included) in a private mount namespace where every mount
//     is read-only and nosuid except the root and the temporary directory,
//     so chmod, chown, utimes, extended attributes and mknod outside the
//     root fail; and in a private pid namespace, which the kernel empties
//     when the command's first process exits. Where a writable cgroup v1
//     pids hierarchy exists, each command gets a pids cgroup
//     (ResourceLimits.Processes, default [DefaultProcesses]).
//   - Unprivileged callers: descendants are tracked by a child subreaper
//     (this program re-executed, see internal/proc) inside the sandbox and
//     killed when the command ends, setsid or not; ResourceLimits.Processes
//     becomes RLIMIT_NPROC (default [DefaultProcesses]).
//   - Resource limits, set by a ulimit prologue in the shell the command runs
//     in (both soft and hard): core 0, CPU = timeout + 5 s, file size 1 GiB,
//     and address space and open files when configured. A command never
//     starts without them.
//
// # How it is applied
//
// Go has no hook between fork and exec. Each command is started from a new
// OS thread, locked to its goroutine, that confines itself (namespaces and
// capabilities for root, no_new_privs, landlock_restrict_self and a seccomp
// filter, all without their all-threads variants) and then forks the
// command with os/exec: a fork inherits the forking thread's restrictions.
// The goroutine then returns without unlocking, so the Go runtime
// terminates the thread; the rest of the program is never restricted. The
// main thread, which the runtime never terminates, is never used. The
// alternative, re-executing this program as a launcher, was rejected: it
// costs a Go runtime start per command and needs a hook in main.
//
// # Not guaranteed
//
//   - For unprivileged callers, metadata of the caller's own files outside
//     the root (chmod, utimes, chown to oneself, user xattrs) can be changed:
//     Landlock does not cover it, and an unprivileged thread of a
//     multi-threaded program cannot create the mount namespace that would.
//   - For root callers, files under the readable system paths that only
//     root may read (/etc/shadow) are readable.
//   - /proc shows other processes' command lines and status (not their
//     environment or memory).
//   - Descriptors opened by this program without O_CLOEXEC are marked
//     close-on-exec before each command (process-wide), but a descriptor
//     passed deliberately (Stdin, Stdout, Stderr) is the command's to use.
//   - Without a pids cgroup, a root caller's fork bomb is bounded only by the
//     timeout (RLIMIT_NPROC does not apply to uid 0).
//   - Below Landlock ABI 6, signals to other processes of the same user are
//     not confined for unprivileged callers.
//
// # macOS
//
// The macOS backend runs commands under sandbox-exec with a generated
// Seatbelt profile: deny by default, reads allowed everywhere, writes only
// beneath the root and the private temporary directory (passed as profile
// parameters, never spliced into the profile), network off unless allowed;
// its guarantees report syscalls none. It is compiled and its profile
// unit-tested on Linux, but has not been exercised on macOS.
package ossandbox
