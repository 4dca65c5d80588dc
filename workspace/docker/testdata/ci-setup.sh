#!/bin/sh
# ci-setup.sh start|stop: the Docker daemon and the image that the tests of
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
# Then: HELIKON_REQUIRE_DOCKER=1 HELIKON_DOCKER_IMAGE=... go test ./workspace/docker/
set -eu

IMAGE=${HELIKON_DOCKER_IMAGE:-helikon-test-busybox:1}
PIDFILE=${HELIKON_DOCKERD_PIDFILE:-/run/helikon-dockerd.pid}
LOG=${HELIKON_DOCKERD_LOG:-/tmp/helikon-dockerd.log}

answers() { docker version >/dev/null 2>&1; }

start() {
	if ! command -v dockerd >/dev/null 2>&1 || ! [ -x /bin/busybox ]; then
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -q docker.io busybox-static >/dev/null
	fi
	if ! answers; then
		# No bridge and no iptables: the tests use network mode none, and the
		# machine has no network to reach anyway.
		dockerd --iptables=false --bridge=none --pidfile "$PIDFILE" >"$LOG" 2>&1 &
		i=0
		until answers; do
			i=$((i + 1))
			if [ "$i" -gt 120 ]; then
				echo "ci-setup.sh: dockerd did not answer within 60 s; its log:" >&2
				tail -n 30 "$LOG" >&2
				exit 1
			fi
			sleep 0.5
		done
	fi
	if ! docker image inspect "$IMAGE" >/dev/null 2>&1; then
		dir=$(mktemp -d)
		trap 'rm -rf "$dir"' EXIT
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
		tar --numeric-owner -C "$dir" -c . |
			docker import -c 'ENV PATH=/bin' -c 'USER helikon' - "$IMAGE" >/dev/null
	fi
}

stop() {
	[ -f "$PIDFILE" ] || return 0
	pid=$(cat "$PIDFILE")
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
*)
	echo "usage: ci-setup.sh start|stop" >&2
	exit 2
	;;
esac
