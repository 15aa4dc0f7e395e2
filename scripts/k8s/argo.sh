#!/bin/sh
# Installs Argo Workflows' workflow-controller (the release pinned in scripts/k8s/argo/go.mod) into the cluster of
# cluster.sh, with the CRDs and RBAC of the same module's manifests/ (cluster-install without argo-server), and makes
# its executor images. Needs the cluster up.
#
#   scripts/k8s/argo.sh install        install, executor image Argo's own argoexec; wait for the controller
#   scripts/k8s/argo.sh executor IMAGE the one setting docs/argo.md gives: executor.image in the controller's ConfigMap
#   scripts/k8s/argo.sh baton-image    make the executor image with baton (examples/Containerfile.argoexec's layout:
#                                      baton's folder at /bin/baton, Argo's argoexec at /bin/baton/argo/argoexec,
#                                      baton's argoexec at /bin/argoexec), from dist/baton-linux-x64 (`make sea`)
#
# Images: baton.local/argo/workflow-controller:VERSION (/bin/workflow-controller), baton.local/argo/argoexec:VERSION
# (/bin/argoexec, ENTRYPOINT argoexec, as Argo's), baton.local/argo/argoexec-baton:VERSION; all run as 8737, Argo's
# non-root user. Stock Argo's default executor image (quay.io) cannot be pulled here, so the stock run names ours. The
# artifact repository is an S3 server in the cluster (artifact_repository below).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
kubectl=$(k8s_bin kubernetes kubectl)
version=$(awk '$1 == "github.com/argoproj/argo-workflows/v4" && $2 ~ /^v/ { print $2 } $1 == "require" && $2 == "github.com/argoproj/argo-workflows/v4" { print $3 }' "$here/argo/go.mod" | head -1)
STOCK=baton.local/argo/argoexec:$version
BATON=baton.local/argo/argoexec-baton:$version

image() {
  name=$1 binary=$2 folder=$K8S_CACHE/rootfs/argo-$1-$version
  rm -rf "$folder" && mkdir -p "$folder/bin" "$folder/tmp" && chmod 1777 "$folder/tmp"
  cp "$(k8s_bin argo "$binary")" "$folder/bin/$binary"
  IMAGE_USER=8737 "$here/image.sh" "baton.local/argo/$name:$version" "$folder" "$binary"
}

install() {
  "$here/build.sh" argo
  image workflow-controller workflow-controller
  image argoexec argoexec
  manifests=$(cd "$here/argo" && go mod download -json "github.com/argoproj/argo-workflows/v4@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')/manifests
  out=$K8S_STATE/argo
  rm -rf "$out" && mkdir -p "$out"
  cp -r "$manifests/base" "$manifests/cluster-install-no-crds" "$out/"
  cat > "$out/kustomization.yaml" <<YAML
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: argo
resources:
- base/crds/full
- base/workflow-controller
- cluster-install-no-crds/workflow-controller-rbac
images:
- {name: quay.io/argoproj/workflow-controller, newName: baton.local/argo/workflow-controller, newTag: $version}
YAML
  chmod -R u+w "$out"
  "$kubectl" create namespace argo >/dev/null 2>&1 || true
  "$kubectl" kustomize "$out" | "$kubectl" apply --server-side -f - >/dev/null
  artifact_repository
  executor "$STOCK"
  "$kubectl" -n argo rollout status deployment/workflow-controller --timeout=180s >/dev/null
  echo "k8s: Argo Workflows $version up" >&2
}

# The artifact repository: gofakes3 (an S3 server keeping objects in memory, built from its pinned module in
# scripts/k8s/s3/), in namespace argo behind a Service of a fixed address (the cluster has no DNS), named as the
# controller's default artifactRepository. Workflows read its keys from a Secret `s3-credentials` in their namespace
# (gofakes3 accepts any).
S3_ADDRESS=10.96.0.50
artifact_repository() {
  "$here/build.sh" s3
  s3=$(awk '$1 == "require" && $2 == "github.com/johannesboyne/gofakes3" { print $3 }' "$here/s3/go.mod")
  folder=$K8S_CACHE/rootfs/gofakes3-$s3
  rm -rf "$folder" && mkdir -p "$folder/bin" && cp "$(k8s_bin s3 gofakes3)" "$folder/bin/gofakes3"
  "$here/image.sh" "baton.local/gofakes3:$s3" "$folder" /bin/gofakes3
  "$kubectl" apply -f - >/dev/null <<YAML
apiVersion: apps/v1
kind: Deployment
metadata: {name: s3, namespace: argo}
spec:
  selector: {matchLabels: {app: s3}}
  template:
    metadata: {labels: {app: s3}}
    spec:
      containers:
      - name: s3
        image: baton.local/gofakes3:$s3
        args: [-backend, memory, -initialbucket, artifacts, -host, ":9000"]
        readinessProbe: {tcpSocket: {port: 9000}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: s3, namespace: argo}
spec:
  clusterIP: $S3_ADDRESS
  selector: {app: s3}
  ports: [{port: 9000}]
YAML
  "$kubectl" -n argo patch configmap workflow-controller-configmap --type merge -p "{\"data\": {\"artifactRepository\": \"s3:\\n  bucket: artifacts\\n  endpoint: $S3_ADDRESS:9000\\n  insecure: true\\n  accessKeySecret: {name: s3-credentials, key: accesskey}\\n  secretKeySecret: {name: s3-credentials, key: secretkey}\\n\"}}" >/dev/null
  "$kubectl" -n argo rollout status deployment/s3 --timeout=120s >/dev/null
}

executor() {
  # Only the image changes: what else the executor setting holds (the suites' resources) is kept.
  rest=$("$kubectl" -n argo get configmap workflow-controller-configmap -o jsonpath='{.data.executor}' | grep -v '^image:' |
    awk '{ gsub(/\\/, "\\\\"); gsub(/"/, "\\\""); printf "%s\\n", $0 }')
  "$kubectl" -n argo patch configmap workflow-controller-configmap --type merge \
    -p "{\"data\": {\"executor\": \"image: $1\\n$rest\"}}" >/dev/null
  # The controller reloads its ConfigMap as it changes: wait until its last word on the executor image is this one.
  # A change made while a new controller starts (between its first read of the ConfigMap and its informer's list)
  # is missed by it, seen here once under load: then the controller is restarted, as a user would.
  taken "$1" 30 || { "$kubectl" -n argo rollout restart deployment/workflow-controller >/dev/null
    "$kubectl" -n argo rollout status deployment/workflow-controller --timeout=180s >/dev/null; }
  taken "$1" 90 || { echo "scripts/k8s/argo.sh: the controller did not take executor image $1" >&2; exit 1; }
  echo "k8s: Argo's executor image is now $1" >&2
}

# taken IMAGE SECONDS: whether the controller's log says it took IMAGE within SECONDS.
taken() {
  deadline=$(( $(date +%s) + $2 ))
  until [ "$("$kubectl" -n argo logs deployment/workflow-controller 2>/dev/null | sed -n 's/.*executorImage=\([^ ]*\).*/\1/p' | tail -1)" = "$1" ]; do
    [ "$(date +%s)" -lt "$deadline" ] || return 1
    sleep 1
  done
}

baton_image() {
  sea=$(cd "$here/../.." && pwd)/dist/baton-linux-x64
  [ -x "$sea/baton" ] && [ -x "$sea/argoexec" ] || { echo "scripts/k8s/argo.sh: $sea is not built (make sea)" >&2; exit 1; }
  folder=$K8S_CACHE/rootfs/argo-argoexec-baton-$version
  rm -rf "$folder" && mkdir -p "$folder/bin" "$folder/tmp" && chmod 1777 "$folder/tmp"
  cp -a "$sea" "$folder/bin/baton"
  mkdir -p "$folder/bin/baton/argo"
  cp "$(k8s_bin argo argoexec)" "$folder/bin/baton/argo/argoexec"
  cp "$sea/argoexec" "$folder/bin/argoexec"
  IMAGE_USER=8737 "$here/image.sh" "$BATON" "$folder" argoexec
}

case ${1:-} in
  install) install ;;
  executor) [ -n "${2:-}" ] || { echo "usage: scripts/k8s/argo.sh executor IMAGE" >&2; exit 2; }; executor "$2" ;;
  baton-image) baton_image ;;
  *) echo "usage: scripts/k8s/argo.sh install | executor IMAGE | baton-image" >&2; exit 2 ;;
esac
