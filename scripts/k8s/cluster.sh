#!/bin/sh
# A single-node Kubernetes cluster from real parts, for `make e2e-k8s` (docs/e2e-k8s.md). Needs root.
#
#   scripts/k8s/cluster.sh up       build what is missing (scripts/k8s/build.sh), start etcd, the image registry
#                                   (registry.sh), containerd, the API server, the controller manager, the scheduler,
#                                   the kubelet and kube-proxy, import the pause and busybox images, wait until the
#                                   node is Ready
#   scripts/k8s/cluster.sh down     stop everything and undo every change: processes, mounts, network namespaces,
#                                   the bridge, iptables chains, cgroups, sysctls, the state folder
#   scripts/k8s/cluster.sh status   what runs
#
# Kubernetes' programs are built from k8s.io/kubernetes (scripts/k8s/kubernetes/go.mod), containerd 2 from its module
# (scripts/k8s/containerd/go.mod; BATON_K8S_RUNTIME=debian: Debian's containerd 1.6 instead); etcd, runc and the CNI
# plugins are Debian's. Everything lives under $BATON_K8S_STATE (default /var/lib/baton-k8s): certificates
# made here with openssl, kubeconfigs, the programs' data, logs (logs/NAME.log). `export KUBECONFIG=$STATE/pki/
# admin.kubeconfig` (scripts/k8s/env.sh) for kubectl.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
S=$K8S_STATE
# Kernel settings the kubelet (protectKernelDefaults: false sets the first six), the bridge plugin (ip_forward) and
# kube-proxy may change: saved at `up`, put back at `down`.
# The registries whose pulls go to the node's registry (registry.sh publish puts images there).
MIRRORED="docker.io mirror.gcr.io gcr.io quay.io ghcr.io registry.k8s.io cgr.dev mcr.microsoft.com public.ecr.aws"
SYSCTLS="vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward net.ipv4.conf.all.route_localnet net.bridge.bridge-nf-call-iptables net.netfilter.nf_conntrack_max"

log() { echo "k8s: $*" >&2; }
die() { echo "scripts/k8s/cluster.sh: $*" >&2; exit 1; }

# wait_for WHAT SECONDS COMMAND...: polls COMMAND every 0.5 s.
wait_for() {
  what=$1 seconds=$2
  shift 2
  deadline=$(( $(date +%s) + seconds ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || die "$what: not ready after $seconds s (logs in $S/logs/)"
    sleep 0.5
  done
}

# start NAME COMMAND...: in the background, in a session of its own, logging to logs/NAME.log.
start() {
  name=$1
  shift
  setsid "$@" > "$S/logs/$name.log" 2>&1 < /dev/null &
  echo $! > "$S/run/$name.pid"
}

running() { [ -f "$S/run/$1.pid" ] && kill -0 "$(cat "$S/run/$1.pid")" 2>/dev/null; }

# stop NAME: SIGTERM, then SIGKILL after 10 s.
stop() {
  pid=$(cat "$S/run/$1.pid" 2>/dev/null) || return 0
  if kill -TERM "$pid" 2>/dev/null; then
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$S/run/$1.pid"
}

# --- certificates ---------------------------------------------------------------------------------------------------
# cert NAME SUBJECT USAGE [SAN]: an EC key and a certificate signed by the cluster's CA.
cert() {
  openssl ecparam -name prime256v1 -genkey -noout -out "$S/pki/$1.key" 2>/dev/null
  openssl req -new -key "$S/pki/$1.key" -subj "$2" -out "$S/pki/$1.csr" 2>/dev/null
  { echo "basicConstraints=CA:FALSE"; echo "keyUsage=critical,digitalSignature,keyEncipherment"; echo "extendedKeyUsage=$3"
    [ -z "${4:-}" ] || echo "subjectAltName=$4"; } > "$S/pki/$1.ext"
  openssl x509 -req -in "$S/pki/$1.csr" -CA "$S/pki/ca.crt" -CAkey "$S/pki/ca.key" -CAcreateserial -days 30 \
    -extfile "$S/pki/$1.ext" -out "$S/pki/$1.crt" 2>/dev/null
  rm -f "$S/pki/$1.csr" "$S/pki/$1.ext"
}

# kubeconfig NAME: a kubeconfig for the certificate NAME.
kubeconfig() {
  cat > "$S/pki/$1.kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
- name: baton
  cluster: {server: "$K8S_API", certificate-authority: "$S/pki/ca.crt"}
users:
- name: $1
  user: {client-certificate: "$S/pki/$1.crt", client-key: "$S/pki/$1.key"}
contexts:
- name: baton
  context: {cluster: baton, user: $1}
current-context: baton
KUBECONFIG
}

certificates() {
  mkdir -p "$S/pki"
  openssl ecparam -name prime256v1 -genkey -noout -out "$S/pki/ca.key" 2>/dev/null
  openssl req -x509 -new -key "$S/pki/ca.key" -subj /CN=baton-k8s-ca -days 30 -out "$S/pki/ca.crt" 2>/dev/null
  cert apiserver /CN=kube-apiserver serverAuth \
    "IP:$K8S_NODE_IP,IP:10.96.0.1,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost"
  cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
  cert kubelet-serving "/CN=$K8S_NODE" serverAuth "IP:$K8S_NODE_IP,DNS:$K8S_NODE"
  cert admin "/O=system:masters/CN=baton-admin" clientAuth
  cert controller-manager /CN=system:kube-controller-manager clientAuth
  cert scheduler /CN=system:kube-scheduler clientAuth
  cert kubelet "/O=system:nodes/CN=system:node:$K8S_NODE" clientAuth
  cert kube-proxy /CN=system:kube-proxy clientAuth
  for name in admin controller-manager scheduler kubelet kube-proxy; do kubeconfig $name; done
  # The service accounts' tokens are signed with this key.
  openssl ecparam -name prime256v1 -genkey -noout -out "$S/pki/sa.key" 2>/dev/null
  openssl ec -in "$S/pki/sa.key" -pubout -out "$S/pki/sa.pub" 2>/dev/null
  chmod 600 "$S"/pki/*.key
}

# --- configuration files --------------------------------------------------------------------------------------------
# Debian's containerd 1.6: its configuration format 2.
containerd16_config() {
  cat > "$S/containerd/config.toml" <<TOML
version = 2
root = "$S/containerd/root"
state = "$S/containerd/state"
[grpc]
  address = "$K8S_CONTAINERD_SOCK"
[plugins."io.containerd.internal.v1.opt"]
  path = "$S/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10.1"
  # No CAP_SYS_RESOURCE here (a sandbox of this machine's kind): a container's oom_score_adj may not go below
  # containerd's, or runc fails ("failed to update /proc/self/oom_score_adj: Permission denied").
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$S/runc"
  # Every registry's images come from the node's registry (registry.sh); hosts.toml files are read at each pull.
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$S/containerd/certs.d"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$S/cni/net.d"
TOML
}

# containerd 2 (built from scripts/k8s/containerd/go.mod): format 3, the same settings as 1.6's where they moved (the
# CRI's image settings in cri.v1.images, its runtime's in cri.v1.runtime), the shim given by its path (Debian's
# containerd-shim-runc-v2 of 1.6 is on PATH), the opt plugin's folder under the state folder (its default is
# /opt/containerd), NRI off (it would listen on /var/run/nri/nri.sock; no plugin here uses it).
containerd2_config() {
  cat > "$S/containerd/config.toml" <<TOML
version = 3
root = "$S/containerd/root"
state = "$S/containerd/state"
[grpc]
  address = "$K8S_CONTAINERD_SOCK"
[plugins.'io.containerd.internal.v1.opt']
  path = "$S/containerd/opt"
[plugins.'io.containerd.nri.v1.nri']
  disable = true
[plugins.'io.containerd.grpc.v1.cri']
  stream_server_address = "127.0.0.1"
[plugins.'io.containerd.cri.v1.images']
  snapshotter = "overlayfs"
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = "registry.k8s.io/pause:3.10.1"
  # As for 1.6: every registry's images from the node's registry (registry.sh).
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = "$S/containerd/certs.d"
[plugins.'io.containerd.cri.v1.runtime']
  # As for 1.6: no CAP_SYS_RESOURCE here.
  restrict_oom_score_adj = true
  # Off, as in 1.6 (which had no CDI): no device here is described by one.
  enable_cdi = false
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = "runc"
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      runtime_path = "$(dirname "$(k8s_bin containerd containerd)")/containerd-shim-runc-v2"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$S/runc"
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "$S/cni/net.d"
TOML
}

configs() {
  mkdir -p "$S/containerd" "$S/cni/net.d" "$S/cni/ipam" "$S/kubelet" "$S/pod-logs" "$S/kubelet-plugins"
  if [ "$K8S_RUNTIME" = containerd2 ]; then containerd2_config; else containerd16_config; fi
  for host in $MIRRORED; do
    mkdir -p "$S/containerd/certs.d/$host"
    printf 'server = "https://%s"\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' "$host" "$K8S_REGISTRY" \
      > "$S/containerd/certs.d/$host/hosts.toml"
  done
  cat > "$S/registry.yml" <<YAML
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: "$S/registry"}, delete: {enabled: true}}
http: {addr: "$K8S_REGISTRY"}
YAML
  # No masquerading (no pod talks to anything beyond this machine): the bridge plugin adds no iptables rule.
  cat > "$S/cni/net.d/10-baton.conflist" <<JSON
{"cniVersion": "1.0.0", "name": "baton-k8s", "plugins": [
  {"type": "bridge", "bridge": "$K8S_BRIDGE", "isGateway": true, "isDefaultGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$S/cni/ipam", "ranges": [[{"subnet": "$K8S_POD_CIDR", "gateway": "$K8S_NODE_IP"}]]}}
]}
JSON
  : > "$S/resolv.conf"
  # Image volumes (beta in 1.34, off by default) where the runtime mounts them.
  feature_gates=
  [ "$K8S_RUNTIME" != containerd2 ] || feature_gates="featureGates: {ImageVolume: true}"
  # cgroupfs (PID 1 is not systemd here), cgroup v1 allowed (failCgroupV1: false; 1.34 only warns), every pod's cgroup
  # under /baton-k8s so that `down` finds them; logs, plugins and the kubelet's own files under the state folder.
  cat > "$S/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $K8S_NODE_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$S/pki/ca.crt"}
authorization: {mode: Webhook}
tlsCertFile: "$S/pki/kubelet-serving.crt"
tlsPrivateKeyFile: "$S/pki/kubelet-serving.key"
cgroupDriver: cgroupfs
cgroupRoot: /baton-k8s
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: "unix://$K8S_CONTAINERD_SOCK"
podLogsDir: "$S/pod-logs"
volumePluginDir: "$S/kubelet-plugins"
resolvConf: "$S/resolv.conf"
clusterDomain: cluster.local
serializeImagePulls: false
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
$feature_gates
YAML
  cat > "$S/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$S/pki/kube-proxy.kubeconfig"}
hostnameOverride: $K8S_NODE
mode: iptables
clusterCIDR: $K8S_POD_CIDR
bindAddress: 127.0.0.1
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: ["$K8S_NODE_IP/32"]
iptables: {localhostNodePorts: false}
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
}

# --- the programs ---------------------------------------------------------------------------------------------------
# pause (the pods' sandbox) from the release's own source (build/pause/linux/pause.c), static; busybox from Debian's
# busybox-static, every applet a link. Both unpacked under the cache.
base_images() {
  pause_src=$(cd "$here/kubernetes" && go mod download -json k8s.io/kubernetes | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  root=$K8S_CACHE/rootfs/pause
  if [ ! -x "$root/pause" ]; then
    mkdir -p "$root"
    gcc -Os -Wall -Werror -static -DVERSION=v3.10.1-baton -o "$root/pause" "$pause_src/build/pause/linux/pause.c"
  fi
  "$here/image.sh" registry.k8s.io/pause:3.10.1 "$root" /pause
  root=$K8S_CACHE/rootfs/busybox
  if [ ! -x "$root/bin/busybox" ]; then
    rm -rf "$root" "$K8S_CACHE/deb" && mkdir -p "$root/bin" "$root/tmp" "$K8S_CACHE/deb"
    (cd "$K8S_CACHE/deb" && { apt-get download busybox-static >/dev/null 2>&1 || { apt-get update -qq && apt-get download busybox-static >/dev/null; }; })
    dpkg-deb -x "$K8S_CACHE"/deb/busybox-static_*.deb "$K8S_CACHE/deb/x"
    cp "$K8S_CACHE/deb/x/bin/busybox" "$root/bin/busybox"
    for applet in $("$root/bin/busybox" --list); do [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"; done
    chmod 1777 "$root/tmp"
    rm -rf "$K8S_CACHE/deb"
  fi
  "$here/image.sh" baton.local/busybox:1 "$root"
}

# Debian's docker-registry (the reference registry, distribution 2.8), unpacked: its package would start a service.
registry_binary() {
  bin=$K8S_CACHE/registry/usr/bin/docker-registry
  if [ ! -x "$bin" ]; then
    rm -rf "$K8S_CACHE/registry" && mkdir -p "$K8S_CACHE/registry"
    (cd "$K8S_CACHE/registry" && { apt-get download docker-registry >/dev/null 2>&1 || { apt-get update -qq && apt-get download docker-registry >/dev/null; }; })
    dpkg-deb -x "$K8S_CACHE"/registry/docker-registry_*.deb "$K8S_CACHE/registry"
  fi
  echo "$bin"
}

etcd_binary() {
  bin=$K8S_CACHE/etcd/usr/bin/etcd
  if [ ! -x "$bin" ]; then
    # Debian's etcd-server, unpacked rather than installed: its package would start a service.
    rm -rf "$K8S_CACHE/etcd" && mkdir -p "$K8S_CACHE/etcd"
    (cd "$K8S_CACHE/etcd" && { apt-get download etcd-server >/dev/null 2>&1 || { apt-get update -qq && apt-get download etcd-server >/dev/null; }; })
    dpkg-deb -x "$K8S_CACHE"/etcd/etcd-server_*.deb "$K8S_CACHE/etcd"
  fi
  echo "$bin"
}

packages() {
  need=
  tools="runc:runc iptables:iptables openssl:openssl gcc:gcc ip:iproute2 curl:curl"
  [ "$K8S_RUNTIME" = containerd2 ] || tools="containerd:containerd ctr:containerd $tools"
  for tool in $tools; do
    command -v "${tool%%:*}" >/dev/null || need="$need ${tool#*:}"
  done
  [ -x /usr/lib/cni/bridge ] || need="$need containernetworking-plugins"
  [ -e /usr/lib/x86_64-linux-gnu/libc.a ] || need="$need libc6-dev"
  if [ -n "$need" ]; then
    # shellcheck disable=SC2086 # a list
    apt-get install -y -qq $need >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need >/dev/null; }
  fi
}

up() {
  [ "$(id -u)" = 0 ] || die "needs root"
  if running kube-apiserver; then log "already up ($S)"; return 0; fi
  [ ! -e "$S" ] || die "$S exists: run \`scripts/k8s/cluster.sh down\` first"
  case $K8S_RUNTIME in
    containerd2) built=containerd ;;
    debian) built= ;;
    *) die "BATON_K8S_RUNTIME=$K8S_RUNTIME: containerd2 (the default) or debian" ;;
  esac
  packages
  # shellcheck disable=SC2086 # a list
  "$here/build.sh" kubernetes $built
  etcd=$(etcd_binary)
  registry=$(registry_binary)
  mkdir -p "$S/run" "$S/logs"
  echo "$K8S_RUNTIME" > "$S/run/runtime"
  # What `down` puts back or leaves alone: sysctls, the network namespaces that were there before.
  for key in $SYSCTLS; do printf '%s %s\n' "$key" "$(sysctl -n "$key" 2>/dev/null || echo -)"; done > "$S/run/sysctls"
  ip netns list 2>/dev/null | awk '{ print $1 }' > "$S/run/netns-before"
  [ -d /var/log/containers ] && echo yes > "$S/run/var-log-containers-existed" || true
  # containerd 1.6 puts its shims' sockets in /run/containerd/s whatever its state folder.
  [ -d /run/containerd ] && echo yes > "$S/run/run-containerd-existed" || true
  certificates
  configs
  for ctl in /sys/fs/cgroup/*/; do [ -d "$ctl" ] && mkdir -p "$ctl/baton-k8s"; done
  ip link add "$K8S_BRIDGE" type bridge
  ip addr add "$K8S_NODE_IP/24" dev "$K8S_BRIDGE"
  ip link set "$K8S_BRIDGE" up

  if [ "$K8S_RUNTIME" = containerd2 ]; then containerd=$(k8s_bin containerd containerd); else containerd=$(command -v containerd); fi
  ctr=$(k8s_ctr)
  log "etcd $("$etcd" --version | sed -n 's/^etcd Version: //p'), containerd $("$containerd" --version | awk '{ print $3 }')"
  start etcd "$etcd" --name baton --data-dir "$S/etcd" --listen-client-urls http://127.0.0.1:23790 \
    --advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 \
    --initial-advertise-peer-urls http://127.0.0.1:23800 --initial-cluster baton=http://127.0.0.1:23800
  start registry "$registry" serve "$S/registry.yml"
  wait_for registry 30 curl -sf "http://$K8S_REGISTRY/v2/"
  start containerd "$containerd" --config "$S/containerd/config.toml"
  wait_for containerd 30 "$ctr" --address "$K8S_CONTAINERD_SOCK" version
  base_images

  bin=$(dirname "$(k8s_bin kubernetes kube-apiserver)")
  # WatchList=false: with it (on by default in 1.34) the API server makes every watch from resourceVersion "" a
  # watch-list stream, which it refuses when etcd lacks progress notifications (Debian's 3.4.23 does: "a watch stream
  # was requested by the client but the required storage feature RequestWatchProgress is disabled"). Argo's controller
  # watches so, and then saw a pod's or task result's change only at its informers' next relist, 30-60 s late.
  # ImageVolume (beta in 1.34, off by default) where the runtime mounts images.
  gates=WatchList=false
  [ "$K8S_RUNTIME" != containerd2 ] || gates=$gates,ImageVolume=true
  start kube-apiserver "$bin/kube-apiserver" --etcd-servers=http://127.0.0.1:23790 --feature-gates=$gates \
    --bind-address="$K8S_NODE_IP" --advertise-address="$K8S_NODE_IP" --secure-port=6443 \
    --service-cluster-ip-range="$K8S_SERVICE_CIDR" --client-ca-file="$S/pki/ca.crt" \
    --tls-cert-file="$S/pki/apiserver.crt" --tls-private-key-file="$S/pki/apiserver.key" \
    --kubelet-client-certificate="$S/pki/apiserver-kubelet-client.crt" --kubelet-client-key="$S/pki/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local --service-account-key-file="$S/pki/sa.pub" \
    --service-account-signing-key-file="$S/pki/sa.key" --authorization-mode=Node,RBAC --allow-privileged=true \
    --enable-admission-plugins=NodeRestriction --enable-aggregator-routing=true --profiling=false
  wait_for kube-apiserver 120 "$bin/kubectl" get --raw /readyz
  start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig="$S/pki/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$S/pki/controller-manager.kubeconfig" --authorization-kubeconfig="$S/pki/controller-manager.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --root-ca-file="$S/pki/ca.crt" \
    --service-account-private-key-file="$S/pki/sa.key" --use-service-account-credentials=true \
    --cluster-signing-cert-file="$S/pki/ca.crt" --cluster-signing-key-file="$S/pki/ca.key" --profiling=false
  start kube-scheduler "$bin/kube-scheduler" --kubeconfig="$S/pki/scheduler.kubeconfig" \
    --authentication-kubeconfig="$S/pki/scheduler.kubeconfig" --authorization-kubeconfig="$S/pki/scheduler.kubeconfig" \
    --bind-address=127.0.0.1 --leader-elect=false --profiling=false
  start kubelet "$bin/kubelet" --config="$S/kubelet/config.yaml" --kubeconfig="$S/pki/kubelet.kubeconfig" \
    --root-dir="$S/kubelet" --cert-dir="$S/kubelet/pki" --hostname-override="$K8S_NODE" --node-ip="$K8S_NODE_IP"
  start kube-proxy "$bin/kube-proxy" --config="$S/kube-proxy.yaml"
  wait_for "the node" 120 "$bin/kubectl" wait --for=condition=Ready "node/$K8S_NODE" --timeout=1s
  wait_for "the default service account" 60 "$bin/kubectl" get serviceaccount default
  log "up: $("$bin/kubectl" get node "$K8S_NODE" --no-headers) (KUBECONFIG=$KUBECONFIG)"
}

# --- down -----------------------------------------------------------------------------------------------------------
# iptables_clean: every chain named KUBE-* (kube-proxy's, the kubelet's canaries), the rules that jump to them first.
iptables_clean() {
  for cmd in iptables ip6tables; do
    command -v $cmd >/dev/null || continue
    for table in filter nat mangle raw; do
      $cmd -t $table -S 2>/dev/null | grep -E '^-A .* -j KUBE-' | grep -vE '^-A KUBE-' | sed 's/^-A /-D /' |
        while read -r rule; do eval "$cmd -t $table $rule" 2>/dev/null || true; done
      for chain in $($cmd -t $table -S 2>/dev/null | sed -n 's/^-N \(KUBE-[^ ]*\)$/\1/p'); do $cmd -t $table -F "$chain" 2>/dev/null || true; done
      for chain in $($cmd -t $table -S 2>/dev/null | sed -n 's/^-N \(KUBE-[^ ]*\)$/\1/p'); do $cmd -t $table -X "$chain" 2>/dev/null || true; done
    done
  done
}

down() {
  [ -d "$S" ] || { log "nothing to tear down ($S does not exist)"; return 0; }
  bin=$(dirname "$(k8s_bin kubernetes kubectl 2>/dev/null)" 2>/dev/null || echo /nonexistent)
  # The pods first, while the kubelet runs: it stops their containers and the runtime removes their sandboxes and
  # network namespaces. Controllers' namespaces go first, so that nothing makes new pods.
  if running kube-apiserver && running kubelet && [ -x "$bin/kubectl" ]; then
    "$bin/kubectl" delete namespace --wait=false -l baton-e2e >/dev/null 2>&1 || true
    "$bin/kubectl" delete deployment,daemonset,statefulset,job --all --all-namespaces --wait=false >/dev/null 2>&1 || true
    "$bin/kubectl" delete pod --all --all-namespaces --grace-period=5 --timeout=60s >/dev/null 2>&1 || true
  fi
  for name in kube-proxy kubelet kube-scheduler kube-controller-manager kube-apiserver etcd registry; do stop $name; done
  # Whatever containers are left: killed and removed through containerd (sandboxes too), then containerd stops; its
  # shims (started by it, with our socket on their command line) go with it.
  if running containerd; then
    ctr="$(k8s_ctr) --address $K8S_CONTAINERD_SOCK -n k8s.io"
    for task in $($ctr tasks list -q 2>/dev/null); do $ctr tasks kill -s SIGKILL "$task" >/dev/null 2>&1 || true; done
    sleep 1
    for task in $($ctr tasks list -q 2>/dev/null); do $ctr tasks delete -f "$task" >/dev/null 2>&1 || true; done
    for container in $($ctr containers list -q 2>/dev/null); do $ctr containers delete "$container" >/dev/null 2>&1 || true; done
  fi
  stop containerd
  for pid in $(grep -l -F "$K8S_CONTAINERD_SOCK" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3); do
    [ "$pid" != $$ ] && kill -KILL "$pid" 2>/dev/null || true
  done
  "$bin/kube-proxy" --cleanup >/dev/null 2>&1 || true
  iptables_clean
  # Mounts under the state folder (rootfs overlays, volumes, shm), deepest first; the network namespaces the runtime
  # made (cni-*) that were not there before `up`.
  awk -v s="$S/" 'index($5, s) == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r mount; do umount -l "$mount" 2>/dev/null || true; done
  for ns in $(ip netns list 2>/dev/null | awk '$1 ~ /^cni-/ { print $1 }'); do
    grep -qx "$ns" "$S/run/netns-before" 2>/dev/null || ip netns delete "$ns" 2>/dev/null || true
  done
  ip link delete "$K8S_BRIDGE" 2>/dev/null || true
  for ctl in /sys/fs/cgroup/*/baton-k8s; do
    [ -d "$ctl" ] && find "$ctl" -depth -type d -exec rmdir {} + 2>/dev/null || true
  done
  if [ -f "$S/run/sysctls" ]; then
    while read -r key value; do [ "$value" = - ] || sysctl -q -w "$key=$value" >/dev/null 2>&1 || true; done < "$S/run/sysctls"
  fi
  # The kubelet's links in /var/log/containers (a fixed path) to our pods' logs; the CNI result cache of our network.
  for link in /var/log/containers/*; do
    case $(readlink "$link" 2>/dev/null) in "$S"/*) rm -f "$link" ;; esac
  done
  [ -f "$S/run/var-log-containers-existed" ] || rmdir /var/log/containers 2>/dev/null || true
  [ -f "$S/run/run-containerd-existed" ] || find /run/containerd -depth -type d -empty -delete 2>/dev/null || true
  rm -f /var/lib/cni/results/baton-k8s-* 2>/dev/null || true
  left=$(awk -v s="$S/" 'index($5, s) == 1 { print $5 }' /proc/self/mountinfo)
  [ -z "$left" ] || die "still mounted under $S: $left"
  rm -rf "$S"
  log "down"
}

status() {
  for name in etcd registry containerd kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy; do
    if running $name; then echo "$name running (pid $(cat "$S/run/$name.pid"))"; else echo "$name not running"; fi
  done
}

case ${1:-} in
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: scripts/k8s/cluster.sh up|down|status" >&2; exit 2 ;;
esac
