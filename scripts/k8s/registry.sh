#!/bin/sh
# The node's image registry (Debian's docker-registry, started by cluster.sh up): containerd resolves and pulls the
# images of docker.io, mirror.gcr.io, gcr.io, quay.io, ghcr.io, ... from it (cluster.sh's MIRRORED), so that pods
# whose images are pulled Always (an untagged or :latest name) find the images made here.
#
#   scripts/k8s/registry.sh publish NAME[:TAG]...   push images already in the cluster's containerd (image.sh) to it
#
# An image is stored under its path without the registry's host (docker.io/library/busybox -> library/busybox,
# mirror.gcr.io/busybox -> busybox): two registries' images of the same path are one image here.
set -eu
. "$(dirname "$0")/env.sh"
ctr="$(k8s_ctr) --address $K8S_CONTAINERD_SOCK -n k8s.io"

# full NAME[:TAG]: the name as containerd stores it (docker.io/library/ added to a short name, :latest to no tag).
full() {
  name=$1
  case ${name%%/*} in
    *.*|*:*|localhost) ;;
    *) case $name in */*) name=docker.io/$name ;; *) name=docker.io/library/$name ;; esac ;;
  esac
  case ${name##*/} in *:*|*@*) ;; *) name=$name:latest ;; esac
  echo "$name"
}

case ${1:-} in
  publish)
    shift
    [ $# -ge 1 ] || { echo "usage: scripts/k8s/registry.sh publish NAME[:TAG]..." >&2; exit 2; }
    for image in "$@"; do
      local_name=$(full "$image")
      $ctr images push --plain-http "$K8S_REGISTRY/${local_name#*/}" "$local_name" >/dev/null
      echo "k8s: registry: $local_name" >&2
    done ;;
  *) echo "usage: scripts/k8s/registry.sh publish NAME[:TAG]..." >&2; exit 2 ;;
esac
