#!/bin/sh
# ci-setup.sh start|stop|podman-start|podman-stop: the Docker daemon (or
# Podman's Docker-compatible service) and the image that the tests of
# package workspace/docker run against, built without any registry.
#
#   start  installs docker.io and busybox-static where they are missing,
#          starts dockerd in the background unless a daemon already answers
#          (its pid in $PIDFILE), waits until it answers, and imports the
#          test image $HELIKON_DOCKER_IMAGE from a busybox root file system
#          with a non-root user (helikon, uid 1000).
#   stop   stops the dockerd that start started (by its pid file), and
#          nothing else.
#
#   podman-start  installs podman and catatonit (its --init) where they are
#          missing, starts `podman system service` as root on the socket
#          $HELIKON_PODMAN_SOCK (storage driver vfs, its own storage under
#          /var/lib/helikon-podman), and imports the same image into it.
#   podman-stop   stops that service, by its pid file.
#
#   rootless-start  rootless Podman: creates the user $HELIKON_ROOTLESS_USER
#          (helikon-rootless, with subordinate ids) where missing, imports
#          the image into its own storage and starts its `podman system
#          service` on /run/$HELIKON_ROOTLESS_USER/podman.sock, as that user
#          (XDG_RUNTIME_DIR=/run/$HELIKON_ROOTLESS_USER, storage driver vfs).
#   rootless-stop  stops that service, by its pid file, and the conmon
#          processes of that user's containers.
#   rootless-docker-start  rootless Docker for the same user: Debian's
#          docker.io and rootlesskit, dockerd-rootless.sh on
#          /run/$HELIKON_ROOTLESS_USER/docker.sock, the image imported.
#          rootlesskit runs with --net=host and no port driver: slirp4netns
#          needs /dev/net/tun, which only root may open on these machines;
#          the tests use network mode none.
#   rootless-docker-stop  stops it, by its pid file.
#   runsc-start RUNSC  a second dockerd with gVisor's runsc as a runtime
#          (see runsc_start below); runsc-stop stops it.
#
# Then: HELIKON_REQUIRE_DOCKER=1 HELIKON_DOCKER_IMAGE=... go test ./workspace/docker/
# with HELIKON_PODMAN_HOST=unix://$HELIKON_PODMAN_SOCK to run TestPodmanService
# too (or DOCKER_HOST=unix://$HELIKON_PODMAN_SOCK to run every test on Podman).
set -eu

IMAGE=${HELIKON_DOCKER_IMAGE:-helikon-test-busybox:1}
PIDFILE=${HELIKON_DOCKERD_PIDFILE:-/run/helikon-dockerd.pid}
LOG=${HELIKON_DOCKERD_LOG:-/tmp/helikon-dockerd.log}

PODMAN_SOCK=${HELIKON_PODMAN_SOCK:-/run/helikon-podman.sock}
PODMAN_PIDFILE=${HELIKON_PODMAN_PIDFILE:-/run/helikon-podman.pid}
PODMAN_LOG=${HELIKON_PODMAN_LOG:-/tmp/helikon-podman.log}
PODMAN_CONF=/run/helikon-podman/containers.conf
# runc, named: where crun is installed too (apt picks it for podman when runc
# is not yet there), Podman prefers it, and crun refuses this machine's
# hybrid cgroups ("cgroups in hybrid mode not supported").
podman_() { CONTAINERS_CONF=$PODMAN_CONF podman --runtime runc --storage-driver vfs --root /var/lib/helikon-podman --runroot /run/helikon-podman "$@"; }

ROOTLESS_USER=${HELIKON_ROOTLESS_USER:-helikon-rootless}
ROOTLESS_RUN=/run/$ROOTLESS_USER
ROOTLESS_PIDFILE=/run/$ROOTLESS_USER.podman.pid
ROOTLESS_LOG=/tmp/$ROOTLESS_USER-podman.log
ROOTLESS_DOCKER_PIDFILE=/run/$ROOTLESS_USER.dockerd.pid
ROOTLESS_DOCKER_LOG=/tmp/$ROOTLESS_USER-dockerd.log
# as_rootless COMMAND...: runs COMMAND as the rootless user, with nothing of
# this environment but what a login of that user would have.
# With ROOTLESS_EXEC=exec it replaces the shell: in the background, $! is
# then COMMAND itself, which the stop commands signal (setpriv, not runuser,
# which would stay between and not pass SIGTERM on).
as_rootless() {
	${ROOTLESS_EXEC:-} setpriv --reuid="$ROOTLESS_USER" --regid="$ROOTLESS_USER" --init-groups env -i HOME="$(getent passwd "$ROOTLESS_USER" | cut -d: -f6)" \
		XDG_RUNTIME_DIR="$ROOTLESS_RUN" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
rootless_podman() { as_rootless podman --storage-driver vfs "$@"; }

answers() { docker version >/dev/null 2>&1; }

# wait_until NAME LOG COMMAND...: waits up to 60 s for COMMAND to succeed,
# else shows the end of NAME's LOG and fails.
wait_until() {
	name=$1 log=$2
	shift 2
	i=0
	until "$@"; do
		i=$((i + 1))
		if [ "$i" -gt 120 ]; then
			echo "ci-setup.sh: $name did not answer within 60 s; its log:" >&2
			tail -n 30 "$log" >&2
			exit 1
		fi
		sleep 0.5
	done
}

# image IMPORT...: the test image's root file system as a tar stream into
# IMPORT (docker import or podman import): busybox and its links, a
# non-root user helikon (uid 1000), ENV PATH=/bin, USER helikon.
image() {
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	chmod 0755 "$dir" # the image's /: Podman keeps mktemp's 0700
	mkdir -p "$dir/bin" "$dir/etc" "$dir/tmp" "$dir/root" "$dir/home/helikon"
	cp /bin/busybox "$dir/bin/busybox"
	for applet in $(/bin/busybox --list); do
		[ -e "$dir/bin/$applet" ] || ln -s busybox "$dir/bin/$applet"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\nhelikon:x:1000:1000:helikon:/home/helikon:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$dir/etc/passwd"
	printf 'root:x:0:\nhelikon:x:1000:\nnogroup:x:65534:\n' >"$dir/etc/group"
	chmod 1777 "$dir/tmp"
	chmod 0700 "$dir/root"
	chown 1000:1000 "$dir/home/helikon"
	tar --numeric-owner -C "$dir" -c . | "$@" -c 'ENV PATH=/bin' -c 'USER helikon' - "$IMAGE" >/dev/null
	rm -rf "$dir"
	trap - EXIT
}

start() {
	if ! command -v dockerd >/dev/null 2>&1 || ! [ -x /bin/busybox ]; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -q docker.io busybox-static >/dev/null
	fi
	if ! answers; then
		# No bridge and no iptables: the tests use network mode none, and the
		# machine has no network to reach anyway.
		dockerd --iptables=false --bridge=none --pidfile "$PIDFILE" >"$LOG" 2>&1 &
		wait_until dockerd "$LOG" answers
	fi
	if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
		image docker import
	fi
}

# podman_limit PID NAME: the hard limit NAME ("Max processes") of process PID.
podman_limit() { awk -v n="$2" 'index($0, n) == 1 { print $(NF - 1) }' "/proc/$1/limits"; }

podman_up() {
	rm -f "$PODMAN_SOCK"
	# Under catatonit, a subreaper: the orphaned conmon processes of the
	# containers and execs are reaped there, not left to this machine's init.
	catatonit -- env CONTAINERS_CONF="$PODMAN_CONF" podman --runtime runc --storage-driver vfs --root /var/lib/helikon-podman --runroot /run/helikon-podman \
		system service --time=0 "unix://$PODMAN_SOCK" >"$PODMAN_LOG" 2>&1 &
	echo $! >"$PODMAN_PIDFILE"
	wait_until "podman system service" "$PODMAN_LOG" podman_answers
}

podman_answers() { [ -S "$PODMAN_SOCK" ] && podman --remote --url "unix://$PODMAN_SOCK" version >/dev/null 2>&1; }

podman_start() {
	if ! command -v podman >/dev/null 2>&1 || ! [ -x /usr/bin/catatonit ] || ! [ -x /bin/busybox ]; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -q podman catatonit busybox-static >/dev/null
	fi
	mkdir -p /run/helikon-podman
	# podman_ names this file, which must exist; after a reboot (/run is
	# a tmpfs) it does not until the service is configured below.
	[ -f "$PODMAN_CONF" ] || : >"$PODMAN_CONF"
	if ! podman_ image exists "$IMAGE"; then
		image podman_ import -q
	fi
	if ! [ -f "$PODMAN_PIDFILE" ] || ! kill -0 "$(cat "$PODMAN_PIDFILE")" 2>/dev/null; then
		# Podman gives containers open-file and process limits above those
		# of conmon, its container monitor, which runc inherits and cannot
		# raise ("error setting rlimit"): give them conmon's, read from a
		# container started with low ones.
		: >"$PODMAN_CONF"
		id=$(podman_ run -d --network none --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 "$IMAGE" sleep 60)
		conmon=$(podman_ inspect --format '{{.State.ConmonPid}}' "$id")
		nofile=$(podman_limit "$conmon" 'Max open files')
		nproc=$(podman_limit "$conmon" 'Max processes')
		podman_ rm -f -t 0 "$id" >/dev/null
		printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' "$nofile" "$nofile" "$nproc" "$nproc" >"$PODMAN_CONF"
		podman_up
	fi
}

podman_stop() {
	stop_pid "$PODMAN_PIDFILE"
	rm -f "$PODMAN_PIDFILE"
	# The conmon processes of exec sessions outlive their containers here
	# (Podman 4.3): kill those of this storage, with SIGKILL, or each one
	# starts a podman clean-up process as it exits (hundreds at once).
	for pid in $(pgrep -f '^/usr/bin/conmon .*/var/lib/helikon-podman' || true); do
		kill -KILL "$pid" 2>/dev/null || true
	done
}

# rootless_user: the rootless user, with subordinate uids and gids, and its
# runtime directory.
rootless_user() {
	if ! command -v newuidmap >/dev/null 2>&1 || ! command -v podman >/dev/null 2>&1 || ! [ -x /usr/bin/catatonit ] || ! [ -x /bin/busybox ]; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -q podman uidmap catatonit slirp4netns busybox-static >/dev/null
	fi
	id "$ROOTLESS_USER" >/dev/null 2>&1 || useradd -m -s /bin/sh "$ROOTLESS_USER"
	for f in /etc/subuid /etc/subgid; do
		# useradd gives a range where login.defs says so; else 65536 ids
		# above every range given.
		if ! grep -q "^$ROOTLESS_USER:" "$f"; then
			next=$(awk -F: 'BEGIN { n = 100000 } $2 + $3 > n { n = $2 + $3 } END { print n }' "$f")
			echo "$ROOTLESS_USER:$next:65536" >>"$f"
		fi
	done
	mkdir -p "$ROOTLESS_RUN"
	chown "$ROOTLESS_USER:" "$ROOTLESS_RUN"
	chmod 0700 "$ROOTLESS_RUN"
}

rootless_answers() { [ -S "$1" ] && as_rootless podman --remote --url "unix://$1" version >/dev/null 2>&1; }

rootless_start() {
	rootless_user
	# crun, Podman's default runtime for a rootless user, refuses a
	# machine with cgroup v1 controllers and v2 mounted beside them ("cgroups
	# in hybrid mode not supported"); runc runs there without cgroups.
	home=$(getent passwd "$ROOTLESS_USER" | cut -d: -f6)
	if [ -d /sys/fs/cgroup/unified ]; then
		as_rootless mkdir -p "$home/.config/containers"
		printf '[engine]\nruntime = "runc"\n' | as_rootless sh -c "cat >'$home/.config/containers/containers.conf'"
	fi
	if ! rootless_podman image exists "$IMAGE"; then
		image rootless_podman import -q
	fi
	if ! [ -f "$ROOTLESS_PIDFILE" ] || ! kill -0 "$(cat "$ROOTLESS_PIDFILE")" 2>/dev/null; then
		rm -f "$ROOTLESS_RUN/podman.sock"
		ROOTLESS_EXEC=exec as_rootless catatonit -- podman --storage-driver vfs system service --time=0 "unix://$ROOTLESS_RUN/podman.sock" >"$ROOTLESS_LOG" 2>&1 &
		echo $! >"$ROOTLESS_PIDFILE"
		wait_until "rootless podman system service" "$ROOTLESS_LOG" rootless_answers "$ROOTLESS_RUN/podman.sock"
	fi
}

rootless_docker_answers() { as_rootless docker -H "unix://$ROOTLESS_RUN/docker.sock" version >/dev/null 2>&1; }

rootless_docker_start() {
	rootless_user
	if ! command -v rootlesskit >/dev/null 2>&1 || ! command -v dockerd >/dev/null 2>&1; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -q docker.io rootlesskit >/dev/null
	fi
	if ! [ -f "$ROOTLESS_DOCKER_PIDFILE" ] || ! kill -0 "$(cat "$ROOTLESS_DOCKER_PIDFILE")" 2>/dev/null; then
		ROOTLESS_EXEC=exec as_rootless env DOCKERD_ROOTLESS_ROOTLESSKIT_NET=host DOCKERD_ROOTLESS_ROOTLESSKIT_PORT_DRIVER=none \
			/usr/share/docker.io/contrib/dockerd-rootless.sh --iptables=false --bridge=none \
			--host "unix://$ROOTLESS_RUN/docker.sock" >"$ROOTLESS_DOCKER_LOG" 2>&1 &
		echo $! >"$ROOTLESS_DOCKER_PIDFILE"
		wait_until "rootless dockerd" "$ROOTLESS_DOCKER_LOG" rootless_docker_answers
	fi
	if ! as_rootless docker -H "unix://$ROOTLESS_RUN/docker.sock" image inspect "$IMAGE" >/dev/null 2>&1; then
		image as_rootless docker -H "unix://$ROOTLESS_RUN/docker.sock" import
	fi
}

rootless_docker_stop() {
	stop_pid "$ROOTLESS_DOCKER_PIDFILE"
	rm -f "$ROOTLESS_DOCKER_PIDFILE"
}

rootless_stop() {
	stop_pid "$ROOTLESS_PIDFILE"
	rm -f "$ROOTLESS_PIDFILE"
	# As podman_stop: the conmon processes of exec sessions outlive their
	# containers; only the rootless user's.
	for pid in $(pgrep -u "$ROOTLESS_USER" -x conmon || true); do
		kill -KILL "$pid" 2>/dev/null || true
	done
}

stop() { stop_pid "$PIDFILE"; }

# runsc-start RUNSC: a second dockerd, beside the first (its own socket
# $RUNSC_SOCK, data root, exec root and containerd), with gVisor's runsc
# (the binary RUNSC, built by workspace/agentsandbox/testdata/cluster/build.sh
# runsc) registered as the runtime "runsc", and runc registered a second
# time under the name "kata": the guarantees must tell them apart by what
# their containers run on, not by the name. The test image is imported.
# runsc-stop stops it, by its pid file.
RUNSC_SOCK=${HELIKON_RUNSC_DOCKER_SOCK:-/run/helikon-runsc-docker.sock}
RUNSC_DIR=/run/helikon-runsc-docker
RUNSC_PIDFILE=/run/helikon-runsc-docker.pid
RUNSC_LOG=/tmp/helikon-runsc-docker.log
runsc_answers() { DOCKER_HOST="unix://$RUNSC_SOCK" docker version >/dev/null 2>&1; }
runsc_start() {
	[ -x "${1:-}" ] || { echo "ci-setup.sh runsc-start RUNSC: RUNSC must be runsc's binary" >&2; exit 2; }
	mkdir -p "$RUNSC_DIR"
	printf '{"runtimes": {"runsc": {"path": "%s", "runtimeArgs": ["--overlay2=none", "--file-access=shared", "--oci-seccomp"]}, "kata": {"path": "runc"}}}\n' "$1" >"$RUNSC_DIR/daemon.json"
	if ! runsc_answers; then
		dockerd --config-file "$RUNSC_DIR/daemon.json" --host "unix://$RUNSC_SOCK" --data-root /var/lib/helikon-runsc-docker \
			--exec-root "$RUNSC_DIR/exec" --pidfile "$RUNSC_PIDFILE" --iptables=false --bridge=none >"$RUNSC_LOG" 2>&1 &
		wait_until "dockerd (runsc)" "$RUNSC_LOG" runsc_answers
	fi
	if ! DOCKER_HOST="unix://$RUNSC_SOCK" docker image inspect "$IMAGE" >/dev/null 2>&1; then
		image env DOCKER_HOST="unix://$RUNSC_SOCK" docker import
	fi
}

# stop_pid FILE: stops the process whose pid FILE holds, and waits for it.
stop_pid() {
	[ -f "$1" ] || return 0
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || true
	i=0
	while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 60 ]; do
		i=$((i + 1))
		sleep 0.5
	done
}

case "${1:-}" in
start) start ;;
stop) stop ;;
podman-start) podman_start ;;
podman-stop) podman_stop ;;
rootless-start) rootless_start ;;
rootless-stop) rootless_stop ;;
rootless-docker-start) rootless_docker_start ;;
rootless-docker-stop) rootless_docker_stop ;;
runsc-start) runsc_start "${2:-}" ;;
runsc-stop) stop_pid "$RUNSC_PIDFILE" ;;
*)
	echo "usage: ci-setup.sh start|stop|podman-start|podman-stop|rootless-start|rootless-stop|rootless-docker-start|rootless-docker-stop|runsc-start RUNSC|runsc-stop" >&2
	exit 2
	;;
esac
