#!/bin/sh
# Makes a one-layer image of a folder and imports it into the cluster's containerd (no registry can be pulled from:
# every image the cluster runs is made here).
#
#   scripts/k8s/image.sh NAME:TAG FOLDER [ENTRYPOINT...]
#   scripts/k8s/image.sh --archive FILE         an image archive made elsewhere (`make image`'s)
#
# IMAGE_USER=UID gives the image's user (Argo's images run as 8737 and its Deployment asks for a non-root one);
# IMAGE_CMD=PROGRAM its Cmd (the stand-ins for busybox and the like that Tekton's e2e tests run have one, as theirs).
# The archive is `docker save`'s format (manifest.json, the config, one layer.tar), which `ctr images import` takes.
# Files are owned by 0:0 with the time 0, in name order: the same folder gives the same image ID.
set -eu
. "$(dirname "$0")/env.sh"
ctr=$(k8s_ctr)
if [ "${1:-}" = --archive ] && [ -n "${2:-}" ]; then
  "$ctr" --address "$K8S_CONTAINERD_SOCK" -n k8s.io images import "$2" >/dev/null
  echo "k8s: image archive $2" >&2
  exit 0
fi
[ $# -ge 2 ] || { echo "usage: scripts/k8s/image.sh NAME:TAG FOLDER [ENTRYPOINT...]" >&2; exit 2; }
name=$1 folder=$2
shift 2
work=$(mktemp -d "$K8S_STATE/image.XXXXXX")
trap 'rm -rf "$work"' EXIT
tar -C "$folder" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$work/layer.tar" .
diff_id=$(sha256sum "$work/layer.tar" | cut -c1-64)
entrypoint=
for arg in "$@"; do entrypoint="$entrypoint${entrypoint:+,}\"$arg\""; done
printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":[%s],"Env":["PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin:/ko-app"],"WorkingDir":"/"%s%s},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$entrypoint" "${IMAGE_USER:+,\"User\":\"$IMAGE_USER\"}" "${IMAGE_CMD:+,\"Cmd\":[\"$IMAGE_CMD\"]}" "$diff_id" > "$work/config.json"
printf '[{"Config":"config.json","RepoTags":["%s"],"Layers":["layer.tar"]}]' "$name" > "$work/manifest.json"
tar -C "$work" -cf "$work/image.tar" manifest.json config.json layer.tar
"$ctr" --address "$K8S_CONTAINERD_SOCK" -n k8s.io images import --no-unpack=false "$work/image.tar" >/dev/null
echo "k8s: image $name ($folder)" >&2
