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
//     per command (TMPDIR points to it), gone afterwards; the session home
//     (HOME points to it), shared by the backend's commands and gone with
//     the backend (see below). Nothing else: not the caller's $HOME, not
//     /tmp. Device nodes cannot be created anywhere.
//   - The session home ([Options].HomeSize): a directory that all
//     commands of one backend share as HOME, so that the caches tools keep
//     there (Go's build and module caches, npm's, pip's, cargo's) warm up
//     once per session rather than once per command. It is
//     $TMPDIR/helikon-home-UID/PID-RANDOM: outside the root, never the
//     caller's home, mode 0700, owned by the caller, made by [New]; the
//     parent is made once (mode 0700) and refused, with a warning and no
//     session home (HOME is then each command's temporary directory, as
//     before), unless it is a directory of this user's, not a symbolic
//     link, that nobody else can write. Where the command has a mount
//     namespace of its own, the home is mounted over itself writable
//     (nosuid, nodev) on a descriptor opened from / component by component
//     without following a link (launcher.WritablePaths): a link swapped in
//     on its path fails the command. It is bounded: its size (blocks
//     allocated, never following links, at most 2^20 entries walked) is
//     measured in the background after each command (the next command
//     sees the last finished measure), and once over the cap
//     ([DefaultHomeSize], 4 GiB) every command fails with [ErrHomeFull],
//     which names the flag that raises it (helikon exec --home-size),
//     until files are removed; one command can overshoot by what it writes
//     itself (each file at most the file size limit). The backend holds an
//     exclusive flock on it; [Backend.Close] (or the backend becoming
//     garbage) removes it, and the next command gets a new, empty one;
//     [ReapHomes] (helikon workspaces reap) removes those no live backend
//     holds, left by a crash. The credential locations ([HiddenPaths]) are
//     in the caller's real home, which the session home never is. It is on
//     disk, not in memory: a tmpfs would live in one mount namespace, and
//     a root caller's commands each get a namespace of their own.
//   - The temporary directory: where the command has a mount namespace of
//     its own (root callers, and unprivileged callers through the
//     launcher), a fresh tmpfs (memory, mode 0700, nosuid, nodev) mounted
//     in that namespace only, of at most the command's file size limit in
//     all (1 GiB by default; the kernel's default, half the memory, when
//     the file size is unlimited) and a bounded number of files; Landlock
//     grants it by descriptor. It is mounted over one empty directory that
//     all of this user's commands share as a mount point,
//     $TMPDIR/helikon-os-tmp-UID (created once, mode 0700, left in
//     place); nothing a command writes there reaches the host or another
//     command, and it is freed with the namespace. Where that directory is
//     not this user's private directory, or without a mount namespace, each
//     command gets a directory of its own in os.TempDir(), removed
//     afterwards.
//   - Processes: Landlock refuses ptrace-class access (/proc/PID/environ,
//     mem, fd) to processes outside the command; from ABI 6, signals and
//     abstract Unix sockets are scoped to the command.
//   - Syscalls (seccomp-bpf, see internal/seccomp): a foreign-architecture
//     entry (int 0x80, x32) kills the process; namespaces, mounts, ptrace,
//     process_vm_*, io_uring, bpf, perf_event_open, userfaultfd, kexec,
//     modules, keyrings, open_by_handle_at, reboot, swap and TIOCSTI/TIOCLINUX
//     fail with EPERM; clone3 with ENOSYS; so do prlimit setting another
//     process's limits and setpriority on anything but the command's own
//     process or group (neither is confined by Landlock: an unprivileged
//     caller's command could otherwise lower this program's limits, or
//     set its CPU limit and have the kernel kill it); arguments are
//     compared on the low 32 bits the kernel reads. no_new_privs is set: setuid binaries gain
//     nothing.
//   - No set-user-ID or set-group-ID file is made (seccomp, the same
//     filter for root and unprivileged callers): chmod, fchmod, fchmodat
//     and fchmodat2 with either bit in the mode, mknod and mknodat with
//     either bit, creat with either bit, and open and openat that create
//     (O_CREAT, O_TMPFILE) with either bit fail with EPERM; openat2, whose
//     mode the filter cannot read, fails with ENOSYS, and libc falls back
//     to openat (mkdir drops both bits in the kernel). So chmod u+s,
//     install -m 4755, cp -p or tar -xp of a set-user-ID file, perl's and
//     python's chmod fail, and no such file is left. This matters most for
//     root callers: a set-user-ID-root program left in the project would
//     run as root for every local user who can reach it. An unprivileged
//     caller's command would leave one running as that caller, which is
//     still another user's way in, so the rule is the same. File
//     capabilities (security.capability) need CAP_SETFCAP, which the
//     command never holds. On macOS the Seatbelt profile denies
//     file-write-setugid. For root callers ptrace keeps two requests, PTRACE_TRACEME
//     and PTRACE_DETACH, which the backend uses to set resource limits (see
//     below); they reach no other process (attach, seize, peek and poke
//     stay refused).
//   - Network, one of four settings:
//     no network (the default): every socket family but AF_UNIX is refused
//     (ABI 4+ also refuses TCP bind and connect in Landlock);
//     [Options].AllowNetwork: unrestricted, the network axis is none;
//     [Options].Loopback: a network of the session's own (below);
//     [Options].Egress: the same namespace, whose only way out is a fresh
//     [egress.Proxy] listening at [ProxyURL] inside it; HTTP_PROXY,
//     HTTPS_PROXY and ALL_PROXY (and their lowercase forms) point to it.
//     The proxy applies the filter to CONNECT and plain HTTP requests and
//     makes its own connections from this program's namespace. There is
//     no DNS inside: clients that honour the proxy variables (curl, Go,
//     Python's requests, git over HTTPS) leave name resolution to the
//     proxy, which applies the filter before resolving. The network axis
//     is proxied. Without Loopback, Landlock (ABI 4+) lets commands
//     connect to the proxy's port only and bind nothing; with it, NO_PROXY
//     names localhost, 127.0.0.1 and ::1, so that the session's own
//     servers are reached directly.
//     The session's network namespace: one per backend (the session), made
//     by its first command, shared by all its commands and everything they
//     start (background processes of [Backend.Start] included), so that a
//     server one command starts is reachable by the next; let go by
//     [Backend.Close] (a later command makes a new one). It has only
//     loopback, brought up when it is made: no address outside it is
//     routable, and its abstract Unix socket namespace is its own (the
//     kernel keys abstract sockets by network namespace), so the host's
//     loopback servers, its abstract sockets (a session bus, an X server)
//     and another session's servers are out of reach whatever the
//     command's port or address: the namespace, not a filter of
//     addresses, is the guard. Inside it commands may create TCP sockets
//     only (seccomp: AF_INET and AF_INET6 stream sockets, no UDP, raw,
//     packet or netlink sockets, no TCP Fast Open; raw and packet sockets
//     also need CAP_NET_RAW, which no command holds), and with Loopback
//     Landlock leaves TCP ports to the namespace: a command may listen and
//     connect on any port of the session's 127.0.0.1 and ::1. Root
//     callers make the namespace from a discarded thread of this program
//     (unshare, loopback up, the proxy's socket made there, held by a
//     descriptor), and each command's confining thread enters it (setns)
//     before it drops its capabilities. Unprivileged callers' long-lived
//     launcher makes it in its user namespace, where it holds
//     CAP_SYS_ADMIN and CAP_NET_ADMIN, and each command's thread enters
//     it likewise. This program cannot enter a namespace owned by the
//     launcher's user namespace (setns needs CAP_SYS_ADMIN in its own),
//     so the launcher creates the proxy's listening socket inside the
//     namespace and passes it back over its control socket with its ready
//     message (SCM_RIGHTS, close-on-exec); a socket stays in the
//     namespace it was made in, whoever accepts on it, so this program
//     serves the proxy on it from its own namespace. The socket is never
//     a command's (close-on-exec, not inherited) and the launcher keeps no
//     copy. Nothing is relayed: the proxy is this program, its upstream
//     connections are its own. Where the long-lived launcher cannot start
//     (a partly masked /proc), each command's launcher makes a namespace
//     of the command's own with Loopback, and Egress is refused; where
//     user namespaces are unavailable, every command of a backend with
//     Loopback or Egress is refused with [backend.ErrUnavailable]: with
//     TCP allowed and no namespace, it could reach any address.
//     [Backend.Forward] (and [Backend.DialSession]) forwards a port of the
//     session's loopback to the user: each connection accepted on a
//     listener the caller chose (127.0.0.1 keeps it to this machine) is
//     joined to a connection made inside the namespace, by this program's
//     thread that entered it (root) or by the launcher, which sends the
//     connected socket back (unprivileged): only the session's own
//     loopback is reached, never the host's port of the same number, at
//     most [MaxForwardConns] connections at once, all closed with the
//     forward's context.
//     The namespace costs nothing per command but a setns (its creation
//     is once per session; see BENCHMARKS.md), and Loopback is an option
//     rather than the default because it widens what commands can do
//     (listen, connect on loopback) where the default refuses every
//     network socket.
//     Below Landlock ABI 9, which cannot confine connect(2) to a pathname
//     Unix socket (a Docker daemon, an SSH agent, the session bus),
//     socket(AF_UNIX) is refused in every setting and socketpair is limited
//     to stream and seqpacket pairs.
//   - Root callers: the command runs with every capability dropped (the
//     bounding set included) in a private mount namespace where every mount
//     is read-only and nosuid except the root and the temporary directory,
//     so chmod, chown, utimes, extended attributes and mknod outside the
//     root fail; and as the first process of a private pid namespace, which
//     the kernel empties when that process exits, so nothing outlives the
//     command and nothing needs to be searched for. Where a writable cgroup
//     v1 pids hierarchy exists, each command gets a pids cgroup
//     (ResourceLimits.Processes, default [DefaultProcesses]).
//   - Unprivileged callers: commands are started by a launcher, this
//     program re-executed (entered from the init function of a small
//     package, before the program's other packages are initialised; see
//     How it is applied) in a new user, mount and pid namespace created at
//     clone time, where it holds every capability of its user namespace as
//     root holds those of the machine. Where it can (a pid namespace with a
//     /proc of its own and the tmpfs), the launcher lives as long as the
//     backend: started by the first command, again by the next one if it
//     died, killed by [Backend.Close] or when the backend is garbage, never
//     shared between backends; it makes every mount read-only and nosuid
//     except the root once, mounts a /proc of its pid namespace
//     (read-only, hidepid=invisible), and receives each command (its
//     arguments, environment, limits and standard streams, over a socket
//     pair) to start it as a root caller's confining thread does: on a new
//     locked thread, a mount and pid namespace of its own, its tmpfs,
//     every capability dropped (the bounding set included), no_new_privs,
//     Landlock and seccomp, then the fork; the command is the first process
//     of its pid namespace, emptied by the kernel when it ends or is
//     killed. The command sees in /proc only its own processes (hidepid
//     shows only what Landlock lets it ptrace), cannot name a process
//     outside its pid namespace, holds none of the launcher's descriptors,
//     and cannot ptrace or signal the launcher. The launcher is the first
//     process of its own pid namespace: if it dies, the kernel kills every
//     command it runs, and their calls fail with an error (nothing is
//     retried, nothing runs unconfined); it exits when this program's end
//     of the socket closes, so commands die with this program.
//     Elsewhere each command gets a launcher of its own, which makes every
//     mount read-only and nosuid except the root and the temporary
//     directory, exactly as for root callers; then, on a locked thread,
//     drops every capability (the bounding set included), sets
//     no_new_privs, Landlock and seccomp, and forks the command from it.
//     Either way the command runs as the caller's own uid and gid (see
//     Identity), without capabilities: chmod, chown, utimes and extended
//     attributes of files outside the root fail, the caller's own files
//     included. If any step fails the command does not run and Run fails
//     with [backend.ErrUnavailable].
//     The launcher is probed when first needed, not by [New]: the first
//     command (or the first call of Guarantees) tries the strongest
//     configuration, and only if that cannot start, with nothing run,
//     are the weaker ones probed, as described next, and the command run
//     with the first that works.
//     Where user namespaces are unavailable (kernel.unprivileged_userns_clone=0,
//     user.max_user_namespaces=0, an AppArmor or seccomp restriction),
//     commands run without the read-only view (see Not guaranteed), and
//     Guarantees().Features and [Probe] (helikon doctor) say so.
//     With a launcher per command, descendants are tracked by a child
//     subreaper (the launcher, see internal/proc) and killed when the
//     command ends, setsid or not; ResourceLimits.Processes becomes
//     RLIMIT_NPROC (default [DefaultProcesses]), as with the long-lived
//     launcher. That launcher is also the first process of a new pid
//     namespace with a /proc of its own (read-only): the command sees no
//     process outside it, the subreaper's search for descendants reads
//     only the namespace's few processes, and the launcher watches the
//     caller through a pidfd, exiting when the caller exits, whereupon the
//     kernel kills everything left in the namespace. Where such a /proc
//     cannot be mounted (a partly masked /proc, as in many containers) the
//     launcher runs without the pid namespace; the subreaper then notices
//     its parent's exit (a new parent pid) within 200 ms and kills the
//     tree.
//   - Identity: an unprivileged caller's commands run as its own uid and
//     gid, and HOME (the session home) and TMPDIR are theirs: id,
//     ls -l and stat show the caller, and tools that refuse to run as root
//     or check that files are their own (npm, pip, git's safe.directory)
//     behave as they do outside. The launcher's user namespace maps the
//     caller's uid and gid to themselves, as bwrap does, and nothing else
//     (other users' files show as the overflow id, 65534, and the caller's
//     supplementary groups as that id too, though they still grant their
//     access; setgroups is denied). With [Options].MapRootUser it maps them
//     to 0 instead, as unshare --map-root-user does, for tools that expect
//     to be root. Either way the command is the caller outside, without
//     capabilities, and is confined alike: the mapping changes what it is
//     told, not what it may do. The launcher needs its namespace's
//     capabilities for the mounts and namespaces it makes; mapped to the
//     caller's uid, which keeps none across execve, it is given them as
//     ambient capabilities (over its own namespace only), and each
//     command's thread drops them all, ambient set included, before the
//     command starts. Root callers' commands run as root, without
//     capabilities, as bwrap's do: the rule is that a command is told who
//     it is outside, and a root caller's commands are root there (every
//     file they write is root's; they have no user namespace, which their
//     confinement does not need). A tool that refuses to run as root is
//     right to refuse; run helikon as the user the tool should run as.
//     Where user namespaces are unavailable, commands run as the caller in
//     this program's namespace ([Options].MapRootUser has no effect). HOME
//     is never the caller's home directory: that is not readable in the
//     sandbox (Landlock grants the root, the system paths and the
//     temporary directory), and a HOME in the root would have every tool
//     write its caches and read its dotfiles there. Guarantees().Features
//     says which identity applies.
//   - Read-only paths ([Options].ReadOnlyPaths; helikon's CLI passes the
//     policy files' directories, .helikon and .claude, and the user's
//     helikon directory where the root contains it): where the command has
//     a mount namespace of its own (root callers, and unprivileged callers
//     through either launcher), each is bind-mounted read-only, nosuid and
//     nodev over itself, recursively, in that namespace, after the root's
//     own mount and before Landlock (launcher.ProtectPaths). Nothing
//     beneath them can be written, created, truncated, chmod-ed, removed or
//     renamed (EROFS); the directories themselves cannot be removed,
//     renamed or replaced (EBUSY: mount points); a file in them cannot be
//     given a second name elsewhere in the root (EXDEV: links do not cross
//     mounts). This holds for every program and every way of naming the
//     file (a shell redirect, python, perl, cp -r or tar -x of a tree into
//     the root, mv, rm -rf, git checkout or apply, patch, a hard link,
//     /proc/self/cwd): the kernel decides, not a check of the command
//     line, which stays the first line in front of it. The mount is made
//     on a descriptor of the directory opened component by component
//     without following links (openat2 RESOLVE_NO_SYMLINKS), so a link
//     cannot redirect it; a read-only path that is a symbolic link, or
//     reached through one, is refused: Run fails with
//     [backend.ErrUnavailable] and nothing runs. So does a command whose
//     mount cannot be made. A path that does not exist is created, empty,
//     mode 0755, owned by the caller, by [New] and again before each
//     command (in this program's namespace, so that a command finds a
//     read-only directory there, never a name it could take to plant a
//     policy file a later run would obey), and left in place: removing it
//     afterwards would detach the mounts of any other command using it at
//     the time (another session's, or a thread confined ahead), and an
//     empty directory is invisible to git. Where the root's file system is
//     read-only, a missing path is skipped (no command can create it). A
//     thread confined ahead for the next command (root callers' standby,
//     the long-lived launcher's) checks, just before the command starts,
//     that each path is still a read-only mount in its namespace: one
//     removed on the host since then (the kernel detaches the mounts on a
//     removed directory in every namespace) fails that command with
//     [backend.ErrUnavailable], and the next is confined afresh. An empty
//     list adds no mount and no lookup.
//   - Resource limits, soft and hard alike: core 0, CPU = timeout + 5 s,
//     file size 1 GiB, and address space and open files when configured. A
//     command never starts without them. For root callers the command is
//     started traced (PTRACE_TRACEME just before execve): the kernel stops
//     it once the new program is loaded, before its first instruction, and
//     the confining thread sets the limits with prlimit(2) and detaches. A
//     program runs directly, with no shell around it. The long-lived
//     launcher does the same for unprivileged callers. With a launcher per
//     command (whose command is started by the reaper, a Go program that
//     cannot run under a small address-space limit), where Yama forbids
//     PTRACE_TRACEME after the capability drop (ptrace_scope 2 or 3), and
//     while this program is itself traced (a debugger, strace -f), the
//     limits are set by a ulimit prologue in the shell the command runs in
//     (sh -c 'ulimit …; exec "$@"' for a program).
//
// # Why the filter allows PTRACE_TRACEME (root callers)
//
// To set the limits at exec, a root caller's filter (where Yama allows it:
// no Yama, or ptrace_scope 0 or 1) lets ptrace make two requests,
// PTRACE_TRACEME and PTRACE_DETACH; every other request (attach, seize,
// peek, poke, cont, setregs…) fails with EPERM, and the request is compared
// on all 64 bits, so a request with high bits set cannot pass for one of
// the two (internal/seccomp's filter tests). The command can use them too,
// and that is safe:
//
//   - Tracing is a power of the tracer over the tracee, not the reverse.
//     PTRACE_TRACEME makes the caller's parent, this program, its tracer; it
//     hands the command no access to this program or to any process. The
//     command cannot become a tracer itself: attach and seize are refused
//     and TRACEME names only one's own parent, so PTRACE_DETACH, which acts
//     on one's own tracees, has nothing to act on. process_vm_*,
//     pidfd_getfd and kcmp stay refused, and Landlock still refuses
//     ptrace-class access (/proc/PID/mem, environ, fd) outside the command.
//     This program uses the relation only at exec (limitAtExec: wait for
//     the stop, prlimit, detach); it never reads, writes or resumes the
//     command through it.
//   - What a traced command can do is stop, and have the stop reported to
//     this program's wait, where it reads as the command's end: the call
//     ends then, and the command's pid namespace is killed with it, so a
//     stopped process does not outlive the call
//     (TestTraceMeStopLeavesNothing). A command could end its call early by
//     exiting anyway.
//   - The pid namespace: the command is the first process of a pid
//     namespace of its own, which the kernel empties when that process
//     exits. No pid outside it can be named, which is also why the filter,
//     under TraceMe, lets prlimit set limits without checking whose: only
//     the command's own processes are reachable.
//   - The traced-thread janitor: a thread other than the command's first
//     that asks to be traced stays a zombie after it dies until its tracer,
//     this program, reaps it by thread id; until then the namespace's first
//     process cannot finish exiting and Run would wait forever, timeout or
//     not. reapTracedThreads reaps such zombie threads of the command every
//     50 ms, by their thread ids only, with WNOHANG: it consumes no live
//     thread's stop, leaves the first thread's status to os/exec and
//     touches no other child (TestTraceMeThreadDoesNotHang).
//
// The long-lived launcher's commands are in the same position (the first
// process of a pid namespace of their own, the launcher's confining thread
// their tracer, which uses the relation only at exec; a stop ends the call
// and the launcher kills the namespace). Commands started by a launcher of
// their own, and root callers' where Yama forbids PTRACE_TRACEME after the
// capability drop, refuse ptrace entirely; their limits come from the
// ulimit prologue.
//
// # The caller's toolchains and credentials
//
// Unless [Options].NoPath is set, [New] grants, read and execute but never
// write, each directory of the caller's PATH outside the system paths and
// the installation tree behind it, so that tools installed in the home
// directory run in the sandbox. "Behind it" reaches, after resolving
// symbolic links: the tool manager's root when the directory lies beneath
// one in the home directory (~/.pyenv, ~/.nvm, ~/.cargo with ~/.rustup,
// ~/.asdf, ~/.local/share/mise, ~/.volta, conda's roots and others: a
// shim runs the manager's code, its versions and their standard library,
// all under that root, so nothing narrower works and nothing wider is
// needed); otherwise, for a directory named bin, its parent, the
// installation prefix whose lib and share its programs read
// (~/.local/bin reaches ~/.local/lib only, Python's user site: the rest of
// ~/.local is application data); otherwise the directory alone. The same
// applies to the tree a program in such a directory links to (a pipx
// venv). It never reaches the home directory itself. Variables the
// managers find their root by, which would otherwise point into HOME (the
// session home), are set: PYENV_ROOT, RUSTUP_HOME,
// ASDF_DATA_DIR, MISE_DATA_DIR, VOLTA_HOME and the like.
// [Options].ReadCaches makes [CacheDirs] readable too. [ExplainPath] (and
// helikon doctor) says what each PATH entry grants.
//
// [HiddenPaths], a fixed list of credential locations in the home
// directory (SSH and GPG keys, cloud CLIs' credentials, git credentials,
// .netrc, registry authentication files, Kubernetes configuration,
// keyrings, browser profiles), plus [Options].HidePaths, are never
// readable through any of these grants nor through [Options].ReadPaths.
// Landlock cannot deny beneath a granted directory, so a grant whose tree
// contains a hidden location is replaced by grants of its entries,
// recursively, leaving the hidden one out; a symbolic link is not granted
// (Landlock checks its target, which must be granted on its own), and a
// directory that cannot be listed is not granted. A read path that is, or
// lies beneath, a hidden location makes New fail with [ErrHidden].
// The grants are worked out once, by New: a file created in a split
// directory afterwards is not readable until the backend is built again.
//
// The operator adds to the list with [Options].HidePaths, helikon's
// --hide-path flag, or sandbox.hidePaths in a policy file (package
// policyfile: every file's entries add up, a project's too, since hiding
// only tightens); nothing removes a built-in entry.
//
// A command whose program, or the interpreter its #! line names (directly
// or through /usr/bin/env), lies in a directory commands cannot read
// fails at exec with a bare EACCES. [Backend.Run] turns that into a
// [NotReadableError] (errors.Is [ErrNotReadable]) naming the directory
// and --read-path, for a program vector; for a command that exits 126
// with a shell naming such a file (bash's "line 1: /p: Permission
// denied", a shim's "exec: /p: Permission denied"), it adds a line saying
// the same to the captured standard error. A program that reports the
// refusal in its own words, or a standard error the caller streams, is
// not explained.
//
// Not covered: a hard link to a credential file, made outside the sandbox
// into a granted tree, is readable under that name: Landlock checks the
// path a file is opened by (the rules are on the directories along it),
// and a hard link is another path to the same inode, so hiding one name
// hides only that one (TestHardLinkToCredentialIsReported shows it).
// Finding every name of an inode would mean walking every granted tree for
// every backend, so New does not; [ExplainPath] (helikon doctor) walks
// them when a hidden file has more than one name and reports each other
// name it finds as [PathReport].Exposed; hiding that name too
// ([Options].HidePaths) keeps it out. The hidden locations are not cut out of the
// root, which is the caller's choice of project directory (a root that
// contains the home's credentials exposes them, read and write).
// Docker and Kubernetes workspaces are unaffected: they run the image's
// tools and see none of the host's home.
//
// # Caches across sessions
//
// By default the tools' caches live in the session home and die with the
// session: a second `go test` in one session is warm, the first of the
// next session is cold. [Options].Caches (helikon exec/run --caches, or
// sandbox.caches in the user's policy file or a trusted project's) keeps
// the [NamedCaches] (go-build, go-mod, npm, pip, cargo, yarn, ccache,
// gradle) across sessions, each a directory of [Options].CacheDir
// (~/.cache/helikon/caches by default) per project (CacheDir/project-
// NAME-HASH/, HASH from the root's resolved path) or per user
// (CacheDir/user/), with GOCACHE, GOMODCACHE, npm_config_cache,
// PIP_CACHE_DIR, CARGO_HOME, YARN_CACHE_FOLDER, CCACHE_DIR and
// GRADLE_USER_HOME set to them (a request's SetEnv still overrides
// them). Each directory helikon makes is mode 0700 and must be the
// caller's, not a symbolic link, not writable by others ([ErrCacheDir]
// otherwise: New fails, nothing runs with a cache elsewhere); the scope
// must lie outside the root, the read paths and every hidden location.
// Each command finds them mounted writable over themselves as the session
// home is, and Landlock grants them. Together they are capped
// ([Options].CacheSize, 16 GiB by default; --cache-size), measured after
// each command as the home is. They are never removed by helikon: remove
// the directory (chmod -R u+w first: Go's module cache and overlayfs's
// work directory are read-only) to start cold.
//
// An untrusted project cannot turn sharing on: a project policy file of a
// project not trusted that sets sandbox.caches to project or user (or
// widens project to user) is refused by package policyfile
// (ErrUntrusted), and no policy key names a cache's directory, so no
// project file can point a cache anywhere: CacheDir is an SDK option of
// the operator's only.
//
// [Options].UserCachesBeneath (--user-caches-beneath) also reads the
// user's own caches (Go's build and module caches, npm's, pip's, Yarn's,
// ccache's, where they exist; never Cargo's or Gradle's homes, which hold
// credentials and configuration) beneath the named caches: in each
// command's mount namespace an overlayfs (nosuid, nodev; user.* extended
// attributes in the launcher's user namespace) is mounted on the named
// cache, the user's cache its lower layer and
// CacheDir/SCOPE/.layers/NAME/upper its upper layer (work beside it;
// neither granted by Landlock, so commands reach them only through the
// overlay). Commands read what the user already downloaded or built; every
// write, change, chmod or removal is a copy-up into the upper layer, and
// the user's cache is never written: overlayfs does not write a lower
// layer (a test checks the user's tree byte for byte after a command
// appends to, removes and renames its files). A change the user makes to
// their cache later shows through unless the named cache already holds
// that path. Exercised on Linux 6.18 (ext4) as root and as an
// unprivileged user through each launcher configuration, and through
// helikon exec as nobody. For an unprivileged caller, a file or directory
// of the user's cache whose owner or group is not the caller's (say a
// directory whose group is root) is outside the launcher's user
// namespace's mapping: commands read it, but changing it (a copy-up)
// fails with EOVERFLOW, and the user's cache stays as it was. Where the
// command has no mount namespace (user namespaces unavailable to an
// unprivileged caller), the named caches are used without the user's
// beneath them: nothing reads or writes the user's caches. Where the
// overlay cannot be mounted (a kernel without overlayfs in user
// namespaces, before 5.11, or an upper layer on a file system overlayfs
// refuses, such as another overlayfs), the command fails with
// [backend.ErrUnavailable] naming the overlay, and nothing runs:
// drop --user-caches-beneath there.
//
// What a poisoned cache can do: a cache is code and data that later
// commands trust without checking. Go's build cache holds compiled
// packages keyed by their inputs' hashes, which the go command does not
// verify on reading: an entry rewritten by one command (a compiled
// net/http with a backdoor) is linked into every later build that hits
// it. A module cache, npm's cache or pip's wheels can be replaced with
// other code under a trusted name and version (Go verifies go.sum on
// download, not on every read of the extracted tree), Cargo's home and
// Gradle's user home hold configuration and init scripts that run on
// every build, and CARGO_HOME keeps credentials a command wrote. So a
// poisoned cache turns one agent command into code that runs in every
// later build that uses the cache, with the rights of that build. That is
// why sharing is off by default, why the default scope when it is on
// is the project (a poisoned entry reaches only later sessions of the
// same project, which the agent could change anyway through its files),
// why only an operator can turn it on, and why the user's own caches are
// only ever read beneath a writable layer (--user-caches-beneath), never
// granted writable: nothing the agent does reaches the builds the user
// runs outside the sandbox. The user scope lets one project's session
// poison every project's builds in the sandbox; choose it only where all
// projects are equally trusted.
//
// Checkpoints and review never include these caches: the session home
// and the named caches lie outside the root by construction (checked),
// and workspace/local's checkpoints and the review of changes cover the
// root only.
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
// main thread, which the runtime never terminates, is never used.
//
// For unprivileged callers that thread is the launcher's (see above): only
// a single-threaded process can create a user namespace, so the user
// namespace is created when the launcher is cloned. The long-lived
// launcher, holding every capability of that namespace, then creates each
// command's mount and pid namespaces from a thread, as root callers do; a
// launcher per command has its mounts changed before it confines itself
// (Landlock forbids mount changes once applied, and the seccomp filter
// denies them), and replaces the reaper those callers needed anyway. The
// launcher needs no hook in main: it is entered from the init function of a package
// (internal/launcher) that imports only low-level packages. Go initialises
// packages in a defined order (by imports, then by import path among those
// ready), so that init runs before any package that needs net/http, a
// model SDK, grpc or SQLite: a program embedding helikon, however large, is
// re-executed without running its own initialisation
// (TestLauncherRunsBeforeHeavyPackages checks it in a test binary that
// links those SDKs). What remains is the Go runtime's start of the binary,
// which grows with its size. The long-lived launcher pays it once per
// backend: a command then costs about twice a plain spawn, whatever the
// program's size (BENCHMARKS.md); a launcher per command (the namespaces,
// their id maps, the mount changes, a Go runtime start) costs several
// milliseconds. A program that runs one command and exits can start the
// launcher before it builds the backend ([StartLauncher],
// [Options].Launcher), so that this start overlaps its own work: the
// launcher waits for the policy, which the backend's first command sends.
//
// # Not guaranteed
//
//   - The set-ID rule cannot tell a directory from a file, so the
//     set-group-ID bit is refused on directories too (git init --shared,
//     install -d -m 2775, GNU chmod with a numeric mode on a directory that
//     has the bit, which chmod passes back): they fail with EPERM. A
//     directory made inside a set-group-ID directory still inherits the
//     bit (the kernel sets it), and set-ID files already in the root keep
//     theirs; a chmod that keeps such a bit (chmod g-w on such a file)
//     fails.
//   - For unprivileged callers without user namespaces (no mount
//     namespace), [Options].ReadOnlyPaths are NOT read-only for commands:
//     only the callers' own checks (helikon's command analyser) protect
//     them. Guarantees().Features says so.
//   - A read-only path removed on the host by a process outside the
//     sandbox while a command runs is detached from that command's
//     namespace by the kernel: the command could then create it. No
//     command can remove it; the user, or an unconfined program, can. A
//     file of a read-only path that already had a second name in the root
//     before the backend started (a hard link made outside the sandbox) can
//     be written through that name: the mount covers the directory, not
//     the inode's other names.
//   - For unprivileged callers on a machine without user namespaces,
//     metadata of the caller's own files outside the root (chmod, utimes,
//     chown to oneself, user xattrs) can be changed: Landlock does not
//     cover it, and the launcher's user and mount namespace, which would,
//     cannot be created. Guarantees().Features and [Probe] report it.
//   - With the long-lived launcher, the mount view is taken when the
//     launcher starts: a file system mounted on the host afterwards is
//     not visible to commands (they see the directory beneath it) until
//     the launcher is started again ([Backend.Close]). A command never
//     sees more than the view allowed when it was taken.
//   - Mounts are not made nodev: /dev/null lives on one. Device nodes
//     cannot be created (Landlock, and no CAP_MKNOD), and existing ones
//     outside the four listed are not reachable through Landlock.
//   - For root callers, files under the readable system paths that only
//     root may read are readable, except [SystemSecrets] (/etc/shadow,
//     /etc/gshadow, SSH host keys, /etc/ssl/private…), which are masked in
//     the command's mount namespace: /dev/null on a nodev mount over each
//     file (open fails with EACCES), an empty read-only tmpfs over each
//     directory (launcher.MaskPaths, TestSystemSecretsHiddenFromRoot). The
//     list is expanded by [New]: a key created afterwards is not masked
//     until the backend is built again. A secret elsewhere under /etc (a
//     service's own key file) is not on the list and stays readable; add
//     it with care, since the list is fixed. Unprivileged callers rely on
//     the files' permissions (a caller in group shadow can read
//     /etc/shadow in the sandbox as outside it).
//   - /proc shows other processes' command lines and status (not their
//     environment or memory).
//   - Descriptors opened by this program without O_CLOEXEC are marked
//     close-on-exec before each command (process-wide), but a descriptor
//     passed deliberately (Stdin, Stdout, Stderr) is the command's to use.
//   - Without a pids cgroup, a root caller's fork bomb is bounded only by the
//     timeout (RLIMIT_NPROC does not apply to uid 0).
//   - If a root caller is itself killed with SIGKILL, its running command is
//     not: it runs on until it ends or reaches its CPU limit (the timeout is
//     enforced by the caller). Unprivileged callers' commands die with the
//     caller (the long-lived launcher exits when its socket closes, a
//     launcher per command watches the caller through a pidfd).
//   - Below Landlock ABI 6, signals to other processes of the same user are
//     not confined for unprivileged callers.
//   - For unprivileged callers, the command can still lower the scheduling
//     of other processes of the same user, this program included
//     (sched_setaffinity, sched_setscheduler to SCHED_IDLE, ioprio_set):
//     a slowdown, not a change to their state or files.
//   - The egress proxy does not look inside CONNECT tunnels (see package
//     egress): the command can still reach whatever the allowed names
//     serve. Commands of one session share its network namespace by
//     design: one command's server is every other's to reach, and a port
//     one holds is taken for the others.
//   - With Loopback and Egress, a session's commands reach each other's
//     servers on loopback without the proxy; the proxy filters only what
//     leaves the namespace.
//   - Costs per command (see BENCHMARKS.md): a new OS thread, namespaces,
//     a tmpfs, a Landlock ruleset and a seccomp filter (the kernel compiles
//     it each time), and for root a pids cgroup. Unprivileged callers also
//     pay a message to the long-lived launcher and back, and once per
//     backend its start, a start of this program's binary up to the
//     launcher's init (see BENCHMARKS.md); with a launcher per command,
//     that start per command.
//
// # macOS
//
// The macOS backend runs commands under sandbox-exec with a generated
// Seatbelt profile: deny by default, reads allowed everywhere, writes only
// beneath the root and the private temporary directory (passed as profile
// parameters, never spliced into the profile), network off unless allowed;
// its guarantees report syscalls none. Each of [Options].ReadOnlyPaths
// gets a deny rule for writes beneath it, after the root's allow (created
// first where missing; a symbolic link refused); Seatbelt checks the path
// an operation names, so a hard link made before the backend existed is
// not covered. It is compiled and its profile
// unit-tested on Linux, but has not been exercised on macOS.
package ossandbox
