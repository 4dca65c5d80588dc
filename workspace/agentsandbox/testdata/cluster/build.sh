#!/bin/bash
# build.sh [k8s] [etcd] [controller] [images] [runsc]: builds what the test cluster runs, from the Go module proxy
# only, into $HELIKON_K8S_CACHE (see lib.sh). With no argument it builds k8s, etcd, controller and images. Each
# artefact is named by its version and skipped when already there, so a second run costs nothing; a build writes to a
# temporary name and renames it, so an interrupted build leaves no half a binary.
#
# Cold on 2 cores: about 6-7 minutes for all (kube-apiserver is most of it) and about 1 GB into the module cache.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mkdir -p "$CACHE"
# -trimpath: the binaries do not depend on where the module cache or this checkout is.
LDK8S="-s -w -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION -X k8s.io/component-base/version.gitMajor=${K8S_VERSION%%.*}
 -X k8s.io/component-base/version.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2) -X k8s.io/component-base/version.gitTreeState=clean
 -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION"

build_k8s() {
	[ -x "$K8S_BIN/kubelet" ] && return
	local tmp=$K8S_BIN.tmp.$$
	mkdir -p "$tmp"
	# One go build for the four: they share most packages, and go build runs the compiles in parallel.
	(cd "$here/build/k8s" && go build -trimpath -ldflags "$LDK8S" -o "$tmp/" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet)
	rm -rf "$K8S_BIN"; mv "$tmp" "$K8S_BIN"
}

build_etcd() {
	[ -x "$ETCD_BIN" ] && return
	# etcd's own module has replace directives, so go install ...@version refuses it: build/etcd pins it instead.
	(cd "$here/build/etcd" && go build -trimpath -ldflags "-s -w" -o "$ETCD_BIN.tmp.$$" go.etcd.io/etcd/server/v3)
	mv "$ETCD_BIN.tmp.$$" "$ETCD_BIN"
}

build_controller() {
	[ -x "$CONTROLLER_BIN" ] && [ -d "$CRDS" ] && return
	local tmp=$CACHE/gobin.tmp.$$
	GOFLAGS= GOBIN=$tmp go install -trimpath -ldflags "-s -w" "sigs.k8s.io/agent-sandbox/cmd/agent-sandbox-controller@$AGENT_SANDBOX_VERSION"
	# The CRDs ship in the module zip, next to the controller's source; up.sh applies them from here.
	local dir
	dir=$(GOFLAGS= go mod download -json "sigs.k8s.io/agent-sandbox@$AGENT_SANDBOX_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
	rm -rf "$CRDS"; mkdir -p "$CRDS"; cp "$dir"/k8s/crds/*.yaml "$CRDS/"
	mv "$tmp/agent-sandbox-controller" "$CONTROLLER_BIN"; rmdir "$tmp"
}

build_runsc() {
	[ -x "$RUNSC_BIN" ] && [ -x "$GVISOR_DIR/containerd-shim-runsc-v1" ] && return
	local tmp=$GVISOR_DIR.tmp.$$
	# gVisor's module at a commit of its go branch (the one the module proxy serves): runsc, and the containerd shim
	# that the cluster's runsc handler runs.
	GOFLAGS= GOBIN=$tmp CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "gvisor.dev/gvisor/runsc@$GVISOR_VERSION" "gvisor.dev/gvisor/shim@$GVISOR_VERSION"
	mv "$tmp/shim" "$tmp/containerd-shim-runsc-v1"
	rm -rf "$GVISOR_DIR"; mv "$tmp" "$GVISOR_DIR"
}

build_images() {
	[ -f "$IMAGES/busybox.tar" ] && return
	[ -x /bin/busybox ] || apt-get install -y -qq busybox-static >/dev/null
	file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' || ldd /bin/busybox 2>&1 | grep -q 'not a dynamic' ||
		die "/bin/busybox is not static: install busybox-static"
	local w
	w=$(mktemp -d)
	mkdir -p "$w/pause/bin" "$w/bb/bin" "$w/bb/tmp" "$w/bb/etc" "$w/bb/workspace" "$IMAGES.tmp.$$"
	(cd "$here/build/pause" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$w/pause/pause" .)
	cp /bin/busybox "$w/bb/bin/busybox"
	for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$w/bb/bin/$a"; done
	chmod 1777 "$w/bb/tmp"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' > "$w/bb/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\n' > "$w/bb/etc/group"
	"$here/mkimg.sh" "$w/pause" "$PAUSE_IMAGE" "$IMAGES.tmp.$$/pause.tar" '["/pause"]'
	"$here/mkimg.sh" "$w/bb" "$BUSYBOX_IMAGE" "$IMAGES.tmp.$$/busybox.tar" '["sh"]'
	rm -rf "$w" "$IMAGES"; mv "$IMAGES.tmp.$$" "$IMAGES"
}

[ $# -gt 0 ] || set -- k8s etcd controller images
for what in "$@"; do
	s=$(date +%s)
	case $what in
	k8s | etcd | controller | images | runsc) "build_$what" ;;
	*) die "build.sh: unknown target $what (want k8s, etcd, controller, images or runsc)" ;;
	esac
	say "built $what ($(( $(date +%s) - s )) s)"
done
