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

stop() { stop_pid "$PIDFILE"; }

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
*)
	echo "usage: ci-setup.sh start|stop|podman-start|podman-stop" >&2
	exit 2
	;;
esac
