// Package docker is the workspace engine on the Docker Engine API (which
// Podman's service speaks too): one container per session, created from an
// image the operator names, through the official client
// (github.com/moby/moby/client) with the API version negotiated, so a daemon
// older than the client works (Debian's docker.io 20.10 speaks API 1.41).
//
//	e, err := docker.New(ctx, &docker.Options{Image: "golang:1.26", Root: "."})
//	ws, err := e.Create(ctx, session) // or e.Attach(ctx, session)
//	defer ws.Close(ctx)
//
// # The two file modes
//
//   - Bind (the default): Root is bind-mounted into the container at the same
//     absolute path and is the commands' working directory, so a path means
//     the same file to the file tools and to commands, and edits land in the
//     project. The file operations run on this machine, on Root opened as an
//     os.Root (package workspace/local over package fsroot). The daemon must
//     see this machine's disk.
//   - Isolated (Options.Isolate): Root's content is copied into the container
//     at creation (the archive API; regular files, directories and symbolic
//     links, owned by the container's user, whose name the engine looks up
//     in the image's /etc/passwd once: [New] pins the image by its ID), and
//     the host is never written.
//     The file operations run as scripts in the container (package
//     workspace/execfs over this engine's exec). The only mode for a daemon
//     on another machine.
//
// # Guarantees
//
//   - Every container is created with network mode none (only loopback)
//     unless Options.AllowNetwork; all capabilities dropped
//     (--cap-drop ALL); no-new-privileges; the daemon's default seccomp
//     profile (in the bind mode, the set-ID profile below instead); an init process as PID 1 that reaps orphans; a pids limit
//     (Options.Limits.Processes, [DefaultPids] by default) and, when set,
//     memory (swap included) and CPU limits (Options.Memory, Options.CPUs)
//     for the whole container; the labels of [workspace.Labels] plus
//     io.helikon.docker.mode. Attach refuses a container that is privileged
//     or keeps a capability.
//   - Guarantees are computed from the container's own configuration as the
//     daemon reports it: filesystem os_kernel (its own mount namespace and
//     root file system; in the bind mode Root is the only directory of this
//     machine it sees); network os_kernel with network mode none, none
//     otherwise; syscalls os_kernel when the daemon applies its seccomp
//     profile, none when it does not. Every contained axis is virtualized
//     when the runtime's containers run on a kernel of their own: [New] runs
//     one container of the runtime (unless it is runc, crun or youki) and
//     compares the kernel release it sees with the daemon host's; the
//     runtime's name decides nothing (runc registered as "kata" is
//     os_kernel; gVisor's runsc, exercised, is virtualized). No guarantee is
//     reported that the configuration does not enforce.
//   - Under gVisor, Docker's seccomp profile (and with it the set-ID
//     refusal below) holds only where runsc runs with --oci-seccomp: runsc
//     does not apply an OCI seccomp profile otherwise. Register it so (as
//     testdata/ci-setup.sh runsc-start does, with --file-access=shared,
//     which the isolated mode's copy after start needs).
//   - In the bind mode, where the daemon applies seccomp, no command makes
//     a set-user-ID or set-group-ID file: the container's seccomp profile
//     is Docker's default (github.com/moby/profiles/seccomp, the source
//     of the daemon's own) with chmod, fchmod, fchmodat, fchmodat2, mknod,
//     mknodat, creat, and open and openat that create (O_CREAT,
//     O_TMPFILE), allowed only without either bit in their mode (masked
//     comparisons: bits above 32 change nothing), and openat2, whose mode
//     seccomp cannot read, failing with ENOSYS so that callers fall back to
//     openat; everything else is the default's. chmod u+s, cp -p or tar
//     -xp of a set-user-ID file fail with EPERM. Without it a command
//     running as root (the bind mode's default user for a root caller)
//     could leave a set-user-ID-root program in Root that every user of
//     this machine runs as root; capabilities do not help, since a file's
//     owner sets its mode without one. Docker takes the profile's content
//     in the security option; Podman's service opens the value as a path,
//     so for Podman the profile is written to a temporary file on this
//     machine (the bind mode's daemon sees its disk) that is removed once
//     the container is created. The isolated mode keeps the daemon's
//     default profile: its files stay in the container, whose processes
//     gain nothing from a set-ID bit (no-new-privileges).
//   - Commands run with docker exec as the container's user: Options.User,
//     else in the bind mode this process's uid:gid (the user the file
//     operations run as on the same files, as the local backends run
//     commands), else the image's user (root when the image names none).
//     Root in the container has no capability: it can write only what uid
//     0 owns.
//     Request.Command runs with bash -c where the image has bash, else
//     /bin/sh -c; the environment is the image's (its PATH and HOME), plus
//     the variables of this process that Options.EnvAllowlist or
//     Request.Env name, with [backend.ScrubEnv]'s rules (secrets only when
//     named exactly), plus Request.SetEnv. LOCPATH, and LC_ALL, LC_CTYPE or
//     LANG naming a locale whose character set is not UTF-8, are removed
//     even when the image sets them.
//   - Per-command limits (CPU seconds, file size, address space, open
//     files) are set with ulimit, soft and hard, before the command starts;
//     a limit that cannot be set stops the command with exit 125.
//   - Timeouts and cancellation: Docker has no call that kills an exec.
//     Every command starts under a wrapper that reports its pid (the leader
//     of a session and a process group of its own, as runc starts every
//     exec) before it replaces itself with the command; at the timeout or
//     when ctx ends, a second exec kills that process group and every
//     process of that session with SIGKILL, until none is left, and Run
//     returns once the output has ended. A timeout is a [backend.Result]
//     with TimedOut set and no exit code; a cancellation returns the result
//     with ctx's error.
//   - Each captured stream keeps its first 1 MiB (configurable) in bounded
//     memory; a command that closes its output and runs on is waited for.
//   - Processes ([Workspace.Start], [backend.Starter]): a docker exec with
//     its standard input attached, under the same wrapper, environment and
//     limits as Run's commands, with the lifetime as the timeout. Its
//     standard error is joined to its standard output in the container
//     (the daemon reads two pipes and would reorder them), or, with a
//     terminal, the exec has one (Tty; the size is given at creation and
//     set with stty before the command for daemons older than API 1.42;
//     Resize is ExecResize). Kill, the lifetime's end and ctx's end kill
//     the session and group as at Run's timeout; other signals go to the
//     group with the shell's kill in a second exec.
//   - A process ends when the helikon process that started it dies, also
//     of SIGKILL: the first Start of a workspace starts a keeper exec
//     (/bin/sh reading its attached input) that this process tells the
//     pid of every process it starts and ends. When its input ends (the
//     workspace closes, or this process died and the kernel closed its
//     connection to the daemon, which then closes the exec's input) it
//     kills the session and group of every process still listed
//     (TestProcessesEndWhenHelikonIsKilled: the tree is gone within
//     seconds of a SIGKILL; with the keeper disabled it runs on). A keeper
//     that a command killed is started again, with the list, at the next
//     Start or when Start cannot write to it. Not covered: a SIGKILL in
//     the instant between the pid line and the keeper's news (the process
//     then runs until the workspace is closed or reaped), and processes
//     that left both their session and group (as for Run). The container
//     itself, left by a killed helikon, is for helikon workspaces reap.
//   - A container that was removed or stopped makes every operation fail
//     with an error wrapping [workspace.ErrGone]; nothing is recreated
//     behind the caller's back (the next Create, or Attach, which restarts
//     a stopped container, is the caller's decision). Close force-removes
//     the container, also when its context is already done.
//   - The engine never pulls: a missing image fails naming it and how to
//     build or load it. A daemon that does not answer fails with an error
//     wrapping [backend.ErrUnavailable].
//   - Read-only paths (Options.ReadOnlyPaths, bind mode; helikon's CLI
//     passes the policy files' directories .helikon and .claude): each is
//     bind-mounted read-only into the container over its place in the
//     root, so no program in the container, however it names a file there
//     (a redirect, cp -r or tar -x into the root, mv, rm -rf, a hard link,
//     /proc/self/cwd), can write, create, remove or rename anything beneath
//     it (EROFS), nor remove, rename or replace the directory (EBUSY), nor
//     link a file of it elsewhere (EXDEV); without capabilities, no command
//     can unmount it. A missing directory is created (empty, mode 0755)
//     before the container, and left in place (the bind mount needs a
//     source, and removing it would detach the mount); one that is a
//     symbolic link, or reached through one, is refused (the daemon would
//     mount what it points to). The guarantees list the read-only mounts
//     the container has. In the isolated mode nothing a command writes
//     reaches Root, and the option is ignored.
//   - Checkpoints ([workspace.Checkpointer], Options.Checkpoints): in the
//     bind mode package local's store on the bind mount's source; in the
//     isolated mode the same store on a mirror of the container's tree,
//     brought over by the archive API through os.Root (a name or link
//     target leaving the tree is refused) and put back, owned by the
//     container's user, by a restore. The isolated mode's cost follows the
//     size of the tree, and its store is removed with the container.
//   - Named caches (Options.Caches, helikon's --caches): the tools' caches
//     (ossandbox.NamedCaches) are kept across sessions in a local volume
//     per project (helikon-cache-project-HASH, HASH from Root's resolved
//     path) or per user of this machine (helikon-cache-user-UID), which
//     the daemon creates on first use, mounted at [CacheDir] in every
//     container the engine creates, bind and isolated mode alike, with
//     GOCACHE, GOMODCACHE, npm_config_cache, PIP_CACHE_DIR, CARGO_HOME…
//     in the container's environment. After the start, an exec as the
//     container's root (which owns the volume, and needs no capability
//     for that) makes the caches' directories mode 1777 so that the
//     container's user can write them. A poisoned cache reaches every
//     later container of the project (see ossandbox's package
//     documentation); the volume never holds the project's files, and
//     nothing else of the host. It is not capped (a volume has no size
//     limit in the local driver); docker volume rm empties it. Exercised
//     with Docker as root (bind and isolated); not with Podman or a
//     rootless daemon.
//
// # Not guaranteed
//
//   - A read-only path removed on the host while the container lives is
//     detached from the container's mount namespace by the kernel (no
//     command in the container can remove it; the user or an unconfined
//     program can). Each command first checks, in the container, that
//     every read-only path is still a directory it cannot create anything
//     in, and exits 125 saying so otherwise: create a new workspace. A
//     removal during a command, after its check, is not caught for that
//     command. A container created without the option (by an older
//     helikon) and attached to has no read-only paths; its guarantees do
//     not list any.
//   - A container shares this machine's kernel: a kernel vulnerability
//     reachable through the default seccomp profile is a way out. Use a
//     virtualizing runtime where that matters.
//   - A process that leaves both the command's process group and its
//     session (setsid(1), a daemon that double-forks into a new session)
//     is not killed at the timeout or cancellation; it runs until the
//     workspace closes. Processes a command leaves in the background when
//     it exits normally keep running too (as in a terminal session), and
//     keep its output open until they end or the daemon gives up on them.
//   - Request.Limits.Processes has no effect (the pids limit is the
//     container's); the CPU and memory caps are for the whole container,
//     not per command.
//   - Set-ID files in the bind mode where the set-ID profile is not
//     applied: a daemon without seccomp, or started with its default
//     profile unconfined (Guarantees then say syscalls none), a client not
//     built for Linux (the default profile's source is Linux-only), or a
//     container created without it and attached to (its Guarantees name
//     the profile it has). There a command can create set-ID
//     files in Root owned by the user it runs as (root for a root caller;
//     set Options.User to an unprivileged uid). The set-group-ID bit is
//     refused on directories too (git init --shared fails); a directory
//     made inside a set-group-ID directory still inherits it from the
//     kernel. A command inside the container can race the file operations
//     as any local process can race package fsroot; the os.Root
//     resolution still never leaves Root. Links the container's processes create that point at the
//     container's "/" are absolute links, which os.Root refuses.
//   - In the isolated mode the file operations are as confined as package
//     workspace/execfs says (its checks run inside the container, where the
//     commands run too); the copy at creation follows nothing and skips
//     sockets, FIFOs and devices.
//   - The image must have a POSIX /bin/sh, and /proc mounted (every Docker
//     and Podman container has it); the isolated mode's file operations
//     need the tools package workspace/execfs lists (busybox has them).
//   - Two handles on one session (two processes attached) share the
//     container without coordination.
//   - Podman: its Docker-compatible service (podman system service) is
//     tested too, Podman 4.3.1 (Debian 12) as root with the vfs storage
//     driver (testdata/ci-setup.sh podman-start; TestPodmanService with
//     HELIKON_PODMAN_HOST, or the whole package with DOCKER_HOST at its
//     socket: all pass). What it needed: the image's "/" mode 0755 (Podman
//     keeps the import's, and a non-root user cannot reach its --init
//     binary at /run/podman-init otherwise); catatonit, its --init; and
//     default_ulimits in containers.conf no higher than conmon's own
//     limits, or runc fails "error setting rlimit" where the machine caps
//     them. This package reads Podman's inspect answers as they are (every
//     default capability in CapDrop by name instead of ALL, runtime "oci",
//     500 where Docker answers 409) and has a file operation read all its
//     input before it exits, as Podman 4.3 otherwise loses the reply of a
//     refused write ("read unixpacket ... connection reset by peer"). Its
//     exec sessions' conmon processes stay behind after their containers
//     are removed (two per exec: about 150 for TestPodmanService, 860 for
//     the whole package), until podman-stop kills them.
//   - Rootless daemons (see docs/docker.md): [New] reads the daemon's user
//     namespace from its info (Podman's Rootless field, dockerd's
//     "rootless" and "userns" security options). In the bind mode the
//     default user is the container's user that the daemon maps to this
//     process's user: rootless Podman runs the container in its keep-id
//     user namespace as this uid:gid, rootless Docker as the container's
//     root (that user on this machine, with every capability dropped); a
//     daemon with userns-remap is refused ([ErrUserMapping]). On a rootless
//     daemon each bind-mode workspace is checked when opened: a command
//     creates a file in Root, which must belong to this process's uid on
//     this machine, else the workspace is refused with [ErrUserMapping]
//     (an Options.User the daemon maps to a subordinate id, a daemon run by
//     another user). A rootless daemon without cgroup v2 delegation
//     enforces no container limits: Memory, CPUs and Limits.Processes are
//     refused ([ErrLimitsUnsupported]), the default pids limit is left out
//     and the guarantees say so. Tested as an unprivileged user by
//     TestRootlessPodman (Podman 4.3.1, Debian 12, runc, vfs, cgroup v1)
//     and TestRootlessDocker (docker.io 20.10.24 under rootlesskit 1.1
//     with --net=host): a part of the suite, see docs/docker.md.
package docker
