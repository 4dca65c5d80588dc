# Versions of everything the test cluster runs. Sourced by build.sh, up.sh and down.sh; changing one changes the
# cache key of the built binaries.
K8S_VERSION=1.37.2            # k8s.io/kubernetes (its staging modules are v0.${K8S_VERSION#1.})
ETCD_VERSION=3.7.0            # go.etcd.io/etcd/server/v3
AGENT_SANDBOX_VERSION=v0.2.1  # sigs.k8s.io/agent-sandbox: the version workspace/agentsandbox's go.mod requires
GVISOR_VERSION=v0.0.0-20260905035102-160fafc42237  # gvisor.dev/gvisor (runsc)
