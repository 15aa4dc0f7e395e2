# The cluster's places and addresses, for scripts/k8s/*.sh (sourced). Everything the cluster writes lives under
# $K8S_STATE; `scripts/k8s/cluster.sh down` removes it and undoes every change made outside it.
K8S_STATE=${BATON_K8S_STATE:-/var/lib/baton-k8s}
K8S_CACHE=${BATON_K8S_CACHE:-$HOME/.cache/baton-k8s}
K8S_CONTAINERD_SOCK=$K8S_STATE/containerd/containerd.sock
# One node, named so; a bridge of our own whose address the API server binds (pods reach it through kube-proxy's
# rules for the `kubernetes` Service), the pods' subnet on it, the Services' range.
K8S_NODE=baton-node
K8S_BRIDGE=batonk8s0
K8S_NODE_IP=10.244.0.1
K8S_POD_CIDR=10.244.0.0/24
K8S_SERVICE_CIDR=10.96.0.0/24
K8S_API=https://$K8S_NODE_IP:6443
# The node's image registry (Debian's docker-registry): containerd pulls every registry's images from it
# (scripts/k8s/registry.sh), as no registry beyond this machine can be reached.
K8S_REGISTRY=127.0.0.1:25000
KUBECONFIG=$K8S_STATE/pki/admin.kubeconfig
export KUBECONFIG
# The node's container runtime (docs/e2e-k8s.md, "Which containerd"): containerd2, containerd 2 built here from its
# module (scripts/k8s/containerd/go.mod), which mounts images as volumes; or debian, Debian's containerd 1.6, which
# does not. `up` records its choice in run/runtime, which `down`, the other scripts and the tests then follow (a
# cluster started before that file existed ran Debian's).
K8S_RUNTIME=$(cat "$K8S_STATE/run/runtime" 2>/dev/null || { [ -d "$K8S_STATE/run" ] && echo debian; } || echo "${BATON_K8S_RUNTIME:-containerd2}")
# containerd 2.2's ctr prints, at every command, the daemon's deprecation of cgroup v1 (this machine's); the daemon's
# log keeps it.
CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS=1
export CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS
# Where scripts/k8s/build.sh put a group's programs: k8s_bin GROUP NAME.
k8s_bin() {
  awk -v n="$2" '$1 == n { print $3 }' "$K8S_CACHE/bin/$1.tsv" 2>/dev/null | grep . || { echo "scripts/k8s: $2 is not built (scripts/k8s/build.sh $1)" >&2; return 1; }
}
# The ctr of the node's runtime (the one built with containerd 2, or Debian's).
k8s_ctr() {
  if [ "$K8S_RUNTIME" = containerd2 ]; then k8s_bin containerd ctr; else command -v ctr; fi
}
