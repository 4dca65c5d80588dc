# lib.sh: paths and helpers shared by build.sh, up.sh and down.sh (sourced, bash).
#
#   HELIKON_K8S_CACHE  where built binaries and images are kept between runs, one file per name and version
#                      (default /var/cache/helikon-k8s); delete it to rebuild.
#   HELIKON_K8S_DIR    the running cluster's state: PKI, kubeconfigs, logs, etcd data, containerd's root, pid files
#                      (default /var/tmp/helikon-k8s). up.sh writes $HELIKON_K8S_DIR/admin.kubeconfig.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/versions.sh"
CACHE=${HELIKON_K8S_CACHE:-/var/cache/helikon-k8s}
T=${HELIKON_K8S_DIR:-/var/tmp/helikon-k8s}
# The built artefacts, one name per version, so that a version change rebuilds and an unchanged one never does.
K8S_BIN=$CACHE/k8s-v$K8S_VERSION                 # kube-apiserver kube-controller-manager kube-scheduler kubelet
ETCD_BIN=$CACHE/etcd-v$ETCD_VERSION
CONTROLLER_BIN=$CACHE/agent-sandbox-controller-$AGENT_SANDBOX_VERSION
CRDS=$CACHE/agent-sandbox-crds-$AGENT_SANDBOX_VERSION   # the CRDs from the same module
GVISOR_DIR=$CACHE/gvisor-$GVISOR_VERSION              # runsc and containerd-shim-runsc-v1 (containerd finds it on PATH)
RUNSC_BIN=$GVISOR_DIR/runsc
IMAGES=$CACHE/images-1                           # pause.tar and busybox.tar (bump when mkimg changes)
PAUSE_IMAGE=registry.k8s.io/pause:3.10           # the name containerd's sandbox_image asks for
BUSYBOX_IMAGE=helikon.test/busybox:1             # the workload image (imagePullPolicy: Never)
KUBECONFIG_ADMIN=$T/admin.kubeconfig
CTR_SOCK=$T/run/containerd/containerd.sock
export GOFLAGS="${GOFLAGS:-} -mod=readonly"

t0=${t0:-$(date +%s%N)}
# say MESSAGE: prints MESSAGE with the seconds since the script started.
say() { printf '[%6.1fs] %s\n' "$(( ($(date +%s%N) - t0) / 1000000 ))e-3" "$*"; }
die() { echo "$*" >&2; exit 1; }
