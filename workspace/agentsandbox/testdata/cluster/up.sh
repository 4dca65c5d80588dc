#!/bin/bash
# up.sh: brings up a single-node Kubernetes cluster on loopback with agent-sandbox's controller and its extensions
# (templates, claims, warm pools), from what build.sh built, as root. Prints the variables the real-cluster tests
# read, and writes them to $HELIKON_K8S_DIR/env. down.sh stops it all and undoes its changes to the host; up.sh runs
# it first when a previous cluster was left, and again when it fails half-way.
#
# What runs, all bound to 127.0.0.1: etcd (2379-2381), kube-apiserver (6443), kube-controller-manager (10257),
# kube-scheduler (10259), agent-sandbox-controller --extensions (18080, 18081), containerd (its socket under
# $HELIKON_K8S_DIR, its stream server on a loopback port) with runc, the kubelet (10250, 10248) as node
# "localhost". Pods get 10.244.0.0/24 on a bridge with no gateway and no masquerade: no route out, no Services, no
# DNS (there is no kube-proxy and no CoreDNS), no NetworkPolicy enforcement (the bridge plugin has none).
# With HELIKON_K8S_GVISOR=1 and runsc built (build.sh runsc), containerd gets a runsc handler and the cluster a
# RuntimeClass gvisor (its shim needs CAP_SYS_RESOURCE: see below).
#
# Needs: Debian's containerd, runc, containernetworking-plugins and kubectl, openssl (installed here when missing,
# except kubectl).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || die "up.sh: run as root (the kubelet and containerd need it)"
for f in "$K8S_BIN/kubelet" "$ETCD_BIN" "$CONTROLLER_BIN" "$IMAGES/busybox.tar" "$CRDS"; do
	[ -e "$f" ] || die "up.sh: $f is missing: run $here/build.sh first"
done
missing=
for p in containerd:containerd runc:runc /usr/lib/cni/bridge:containernetworking-plugins openssl:openssl; do
	command -v "${p%%:*}" >/dev/null 2>&1 || [ -x "${p%%:*}" ] || missing="$missing ${p#*:}"
done
if [ -n "$missing" ]; then
	say "installing$missing"
	apt-get install -y -qq $missing >/dev/null
fi
command -v kubectl >/dev/null || die "up.sh: kubectl is missing (apt-get install kubectl, or any kubectl 1.3x)"
[ -d "$T/run" ] && { say "a previous cluster was left in $T: tearing it down"; "$here/down.sh"; }
trap 'echo "up.sh failed: logs in $T/logs" >&2; "$here/down.sh" >&2' ERR
mkdir -p "$T/run" "$T/logs"
P=$T/pki
[ -f "$P/ca.crt" ] && openssl x509 -checkend 86400 -noout -in "$P/ca.crt" >/dev/null || { rm -rf "$P"; "$here/pki.sh" "$P"; }
cp "$P/admin.kubeconfig" "$KUBECONFIG_ADMIN"
export KUBECONFIG=$KUBECONFIG_ADMIN
k() { kubectl --request-timeout=30s "$@"; }
# wait_for WHAT SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds; else shows the logs and fails.
wait_for() {
	local what=$1 n=$(($2 * 5))
	shift 2
	until "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		if [ $n -le 0 ]; then
			echo "up.sh: $what did not happen in time" >&2
			tail -n 15 "$T"/logs/*.log >&2
			return 1
		fi
		sleep 0.2
	done
}
# start NAME COMMAND...: starts COMMAND in the background, logging to logs/NAME.log, its pid in run/NAME.pid.
start() {
	local name=$1
	shift
	"$@" > "$T/logs/$name.log" 2>&1 &
	echo $! > "$T/run/$name.pid"
}

# The kubelet sets these at start (its protectKernelDefaults is off); down.sh restores them.
sysctl -n vm.overcommit_memory kernel.panic kernel.panic_on_oops | paste -sd' ' > "$T/run/sysctl.orig"
[ -d /var/lib/kubelet ] && touch "$T/run/var-lib-kubelet.existed"

start etcd "$ETCD_BIN" --name helikon-test --data-dir "$T/run/etcd" \
	--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
	--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
	--initial-cluster helikon-test=http://127.0.0.1:2380 --listen-metrics-urls http://127.0.0.1:2381 \
	--unsafe-no-fsync --quota-backend-bytes 2147483648
start apiserver "$K8S_BIN/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
	--bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=6443 --endpoint-reconciler-type=none \
	--tls-cert-file="$P/apiserver.crt" --tls-private-key-file="$P/apiserver.key" --client-ca-file="$P/ca.crt" \
	--kubelet-client-certificate="$P/apiserver-kubelet-client.crt" --kubelet-client-key="$P/apiserver-kubelet-client.key" \
	--kubelet-certificate-authority="$P/ca.crt" --kubelet-preferred-address-types=Hostname \
	--service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$P/sa.pub" \
	--service-account-signing-key-file="$P/sa.key" --service-cluster-ip-range=10.0.0.0/24 \
	--authorization-mode=Node,RBAC --allow-privileged=true --enable-priority-and-fairness=false --profiling=false
wait_for "the API server's /readyz" 120 k get --raw /readyz
say "API server ready"
k apply -f "$CRDS" >/dev/null
wait_for "the CRDs" 60 k wait --for condition=established --timeout=5s crd --all
say "agent-sandbox CRDs established"

start kcm "$K8S_BIN/kube-controller-manager" --kubeconfig="$P/controller-manager.kubeconfig" \
	--authentication-kubeconfig="$P/controller-manager.kubeconfig" --authorization-kubeconfig="$P/controller-manager.kubeconfig" \
	--bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false \
	--service-account-private-key-file="$P/sa.key" --root-ca-file="$P/ca.crt" --use-service-account-credentials=true \
	--cluster-signing-cert-file="$P/ca.crt" --cluster-signing-key-file="$P/ca.key" \
	--service-cluster-ip-range=10.0.0.0/24 --concurrent-gc-syncs=2
start scheduler "$K8S_BIN/kube-scheduler" --kubeconfig="$P/scheduler.kubeconfig" \
	--authentication-kubeconfig="$P/scheduler.kubeconfig" --authorization-kubeconfig="$P/scheduler.kubeconfig" \
	--bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false
start agent-sandbox env KUBECONFIG="$P/admin.kubeconfig" "$CONTROLLER_BIN" --extensions --leader-elect=false \
	--metrics-bind-address=127.0.0.1:18080 --health-probe-bind-address=127.0.0.1:18081

# containerd: its own root, state and socket, so that it never meets a containerd of Docker's or the host's.
# restrict_oom_score_adj: containerd gives the pause container oom_score_adj -998, and lowering it needs
# CAP_SYS_RESOURCE, which root lacks on these machines (runc then fails "can't get final child's PID from pipe").
mkdir -p "$T/cni/net.d"
runsc_handler=
# Opt-in: gVisor's containerd shim sets its own oom_score_adj to -999, which needs CAP_SYS_RESOURCE (root lacks it
# on the machines this was written on: the shim fails "failed to set OOM Score on shim: ... permission denied").
gvisor=
[ -n "${HELIKON_K8S_GVISOR:-}" ] && [ -x "$RUNSC_BIN" ] && gvisor=1
if [ -n "$gvisor" ]; then
	runsc_handler="
    [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runsc]
      runtime_type = \"io.containerd.runsc.v1\"
      [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runsc.options]
        TypeUrl = \"io.containerd.runsc.v1.options\"
        ConfigPath = \"$T/runsc.toml\""
	# The shim's options: which runsc, and its state under the cluster's directory.
	printf 'binary_name = "%s"\nroot = "%s"\n' "$RUNSC_BIN" "$T/run/runsc" > "$T/runsc.toml"
fi
cat > "$T/containerd.toml" <<TOML
version = 2
root = "$T/run/containerd/root"
state = "$T/run/containerd/state"
[grpc]
  address = "$CTR_SOCK"
[ttrpc]
  address = "$CTR_SOCK.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = "$T/run/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  stream_server_address = "127.0.0.1"
  enable_selinux = false
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$T/cni/net.d"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false$runsc_handler
TOML
# containerd 1.6 needs an address on the pod's eth0: a bridge without gateway or masquerade gives one and no route.
cat > "$T/cni/net.d/10-helikon-test.conflist" <<JSON
{"cniVersion": "1.0.0", "name": "helikon-test", "plugins": [{"type": "bridge", "bridge": "helikon-k8s0",
 "isGateway": false, "ipMasq": false, "hairpinMode": false,
 "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.244.0.0/24"}]], "dataDir": "$T/run/cni-ipam"}}]}
JSON
# PATH: containerd runs the shim of a runtime_type io.containerd.runsc.v1 as containerd-shim-runsc-v1, found on it.
start containerd env PATH="$GVISOR_DIR:$PATH" containerd --config "$T/containerd.toml"
ctr_() { ctr -a "$CTR_SOCK" -n k8s.io "$@"; }
wait_for "containerd" 30 ctr -a "$CTR_SOCK" version
ctr_ images import "$IMAGES/pause.tar" >/dev/null
ctr_ images import "$IMAGES/busybox.tar" >/dev/null
say "containerd up, images $PAUSE_IMAGE and $BUSYBOX_IMAGE imported"

cat > "$T/kubelet.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: $P/kubelet.crt
tlsPrivateKeyFile: $P/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $P/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://$CTR_SOCK
cgroupDriver: cgroupfs
# These machines have hybrid cgroups (v1 controllers); the kubelet refuses v1 unless told not to.
failCgroupV1: false
failSwapOn: false
cgroupsPerQOS: true
enforceNodeAllocatable: ["pods"]
registerNode: true
evictionHard: {"memory.available": "100Mi", "nodefs.available": "1%", "imagefs.available": "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
maxPods: 110
serializeImagePulls: false
podLogsDir: $T/run/pod-logs
YAML
start kubelet "$K8S_BIN/kubelet" --config="$T/kubelet.yaml" --kubeconfig="$P/kubelet.kubeconfig" \
	--hostname-override=localhost --root-dir="$T/run/kubelet" --cert-dir="$T/run/kubelet/pki" --v=1
wait_for "node localhost to register" 120 k get node localhost
wait_for "node localhost to be Ready" 120 k wait --for condition=Ready --timeout=5s node/localhost
say "node Ready"
wait_for "the default service account" 60 k get serviceaccount default
if [ -n "$gvisor" ]; then
	k apply -f - >/dev/null <<YAML
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: gvisor}
handler: runsc
YAML
fi
k apply -f "$here/manifests.yaml" >/dev/null
wait_for "the warm pool helikon-test-pool" 120 sh -c "k() { kubectl --request-timeout=30s \"\$@\"; }; [ \"\$(k get sandboxwarmpool helikon-test-pool -o jsonpath='{.status.readyReplicas}')\" = 1 ]"
say "template helikon-test and warm pool helikon-test-pool ready"
cat > "$T/env" <<ENV
HELIKON_K8S_KUBECONFIG=$KUBECONFIG_ADMIN
HELIKON_K8S_TEMPLATE=helikon-test
HELIKON_K8S_WARMPOOL=helikon-test-pool
HELIKON_K8S_RUNTIMECLASS=${gvisor:+gvisor}
ENV
cat "$T/env"
