#!/bin/bash
# down.sh: stops everything up.sh started (by its pid files, never by name) and undoes what the cluster changed on
# the host: the pods' containers, network namespaces and CNI results, the bridge, mounts under the state directory,
# the kubepods cgroups, and the sysctls the kubelet set. Safe to run twice, or with nothing up. Keeps the PKI and the
# built binaries; removes the rest of $HELIKON_K8S_DIR's run state.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
[ -d "$T/run" ] || { say "nothing to tear down in $T"; exit 0; }
export KUBECONFIG=$KUBECONFIG_ADMIN
ctr_() { timeout 20 ctr -a "$CTR_SOCK" -n k8s.io "$@"; }
alive() { [ -f "$T/run/$1.pid" ] && kill -0 "$(cat "$T/run/$1.pid")" 2>/dev/null; }
# stop NAME...: SIGTERM to each, wait up to 10 s, then SIGKILL; removes the pid files.
stop() {
	local pids="" n
	for n in "$@"; do [ -f "$T/run/$n.pid" ] && pids="$pids $(cat "$T/run/$n.pid")" && rm -f "$T/run/$n.pid"; done
	[ -n "$pids" ] || return 0
	kill $pids 2>/dev/null
	for _ in $(seq 50); do kill -0 $pids 2>/dev/null || return 0; sleep 0.2; done
	kill -9 $pids 2>/dev/null
	sleep 0.2
}
# Let the kubelet stop the pods (which tears down their networks): delete them and wait, at most 15 s.
if alive apiserver && alive kubelet; then
	timeout 20 kubectl delete sandboxclaims.extensions.agents.x-k8s.io,sandboxwarmpools.extensions.agents.x-k8s.io,sandboxes.agents.x-k8s.io --all -A --wait=false >/dev/null 2>&1
	stop agent-sandbox kcm
	timeout 20 kubectl delete pods --all -A --grace-period=0 --force >/dev/null 2>&1
	for _ in $(seq 75); do ctr_ tasks ls 2>/dev/null | grep -q RUNNING || break; sleep 0.2; done
fi
stop kubelet agent-sandbox kcm scheduler
# What the kubelet left: kill and delete the pods' containers through containerd, and their network namespaces.
if alive containerd; then
	for c in $(ctr_ containers ls -q 2>/dev/null); do
		ns=$(ctr_ containers info "$c" 2>/dev/null | grep -o '/var/run/netns/cni-[0-9a-f-]*' | head -n 1)
		ctr_ tasks kill -s SIGKILL "$c" >/dev/null 2>&1
		ctr_ tasks rm -f "$c" >/dev/null 2>&1
		ctr_ containers rm "$c" >/dev/null 2>&1
		[ -n "$ns" ] && ip netns delete "$(basename "$ns")" 2>/dev/null
	done
fi
stop containerd apiserver etcd
# containerd-shim processes outlive containerd by design: stop those of this containerd (their command line names
# its socket), by pid.
# gVisor's sandbox and gofer processes name the runsc root under $T.
for p in $(pgrep -f "containerd-shim.*-address $CTR_SOCK" 2>/dev/null) $(pgrep -f -- "--root=$T/run/runsc" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
grep -o " $T/run[^ ]*" /proc/mounts | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
for d in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/unified/kubepods /sys/fs/cgroup/kubepods; do
	[ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
done
ip link delete helikon-k8s0 2>/dev/null
rm -f /var/lib/cni/results/helikon-test-* /var/lib/cni/results/cni-loopback-*
# The kubelet makes its device-plugin socket here whatever its --root-dir: removed unless a kubelet's directory was
# there before up.sh.
if [ ! -f "$T/run/var-lib-kubelet.existed" ]; then
	rm -f /var/lib/kubelet/device-plugins/kubelet.sock /var/lib/kubelet/device-plugins/DEPRECATION
fi
rmdir /var/lib/kubelet/device-plugins /var/lib/kubelet /var/lib/cni/results /var/lib/cni 2>/dev/null
if [ -f "$T/run/sysctl.orig" ]; then
	read -r a b c < "$T/run/sysctl.orig"
	sysctl -q vm.overcommit_memory="$a" kernel.panic="$b" kernel.panic_on_oops="$c"
fi
rm -rf "$T/run" "$T/env"
say "cluster down"
