#!/bin/sh
# Installs Tekton Pipelines (the release pinned in scripts/k8s/tekton/go.mod) into the cluster of cluster.sh: its
# controller and webhook, built here, as images made here, with the CRDs and configuration of the same module's
# config/ folder. Needs the cluster up.
#
#   scripts/k8s/tekton.sh install [ENTRYPOINT_IMAGE]   install, wait until the controller and webhook are ready;
#                                                      ENTRYPOINT_IMAGE replaces the release's -entrypoint-image
#                                                      (baton's: the one setting docs/tekton.md gives)
#   scripts/k8s/tekton.sh entrypoint IMAGE             the same swap on an installed controller, waiting for its
#                                                      new pod
#
# What is changed in the release's YAML, and only this: each `ko://github.com/tektoncd/pipeline/cmd/NAME` becomes the
# image made here from that program, and -shell-image (Chainguard's busybox, from a registry no machine here reaches)
# becomes the busybox image cluster.sh made from Debian's busybox-static. events.yaml (the CloudEvents controller)
# and the resolvers/ folder (remote resolution) are left out: no case uses them.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
kubectl=$(k8s_bin kubernetes kubectl)
version=$(awk '$1 == "require" && $2 == "github.com/tektoncd/pipeline" { print $3 }' "$here/tekton/go.mod")

images() {
  "$here/build.sh" tekton
  for name in controller webhook entrypoint nop sidecarlogresults workingdirinit; do
    root=$K8S_CACHE/rootfs/tekton-$name-$version
    if [ ! -x "$root/ko-app/$name" ]; then
      rm -rf "$root" && mkdir -p "$root/ko-app" "$root/tmp" "$root/etc/ssl/certs"
      cp "$(k8s_bin tekton "$name")" "$root/ko-app/$name"
      chmod 1777 "$root/tmp"
    fi
    "$here/image.sh" "baton.local/tekton/$name:$version" "$root" "/ko-app/$name"
  done
}

install() {
  images
  config=$(cd "$here/tekton" && go mod download -json "github.com/tektoncd/pipeline@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')/config
  out=$K8S_STATE/tekton
  rm -rf "$out" && mkdir -p "$out/crds"
  for file in "$config"/*.yaml; do
    case ${file##*/} in events.yaml) continue ;; esac
    sed -e "s#ko://github.com/tektoncd/pipeline/cmd/\([a-z]*\)#baton.local/tekton/\1:$version#" \
        -e "s#\"-shell-image\", \"[^\"]*\"#\"-shell-image\", \"baton.local/busybox:1\"#" "$file" > "$out/${file##*/}"
  done
  cp "$config"/300-crds/*.yaml "$out/crds/"
  cp "$config"/100-namespace/*.yaml "$out/"
  if [ -n "${1:-}" ]; then
    sed -i "s#\"-entrypoint-image\", \"[^\"]*\"#\"-entrypoint-image\", \"$1\"#" "$out/controller.yaml"
  fi
  "$kubectl" apply -f "$out/100-namespace.yaml" >/dev/null
  "$kubectl" apply -f "$out/crds/" >/dev/null
  "$kubectl" apply -f "$out/" >/dev/null
  "$kubectl" -n tekton-pipelines rollout status deployment/tekton-pipelines-webhook --timeout=180s >/dev/null
  "$kubectl" -n tekton-pipelines rollout status deployment/tekton-pipelines-controller --timeout=180s >/dev/null
  # The webhook serves once its certificate is made and the webhook configurations point at it: a dry-run Task
  # passes through it.
  deadline=$(( $(date +%s) + 120 ))
  until printf 'apiVersion: tekton.dev/v1\nkind: Task\nmetadata: {name: probe, namespace: default}\nspec:\n  steps: [{name: s, image: baton.local/busybox:1, script: "true"}]\n' |
      "$kubectl" apply --dry-run=server -f - >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$deadline" ] || { echo "scripts/k8s/tekton.sh: the webhook does not answer" >&2; exit 1; }
    sleep 1
  done
  echo "k8s: Tekton Pipelines $version up, -entrypoint-image $(entrypoint_image)" >&2
}

entrypoint_image() {
  "$kubectl" -n tekton-pipelines get deployment tekton-pipelines-controller -o jsonpath='{.spec.template.spec.containers[0].args}' |
    tr -d '[]"' | tr ',' '\n' | awk 'found { print; exit } $0 == "-entrypoint-image" { found = 1 }'
}

# entrypoint IMAGE: a JSON patch of the one argument, as a user would edit it.
entrypoint() {
  index=$("$kubectl" -n tekton-pipelines get deployment tekton-pipelines-controller -o jsonpath='{.spec.template.spec.containers[0].args}' |
    tr -d '[]"' | tr ',' '\n' | awk '$0 == "-entrypoint-image" { print NR; exit }')
  "$kubectl" -n tekton-pipelines patch deployment tekton-pipelines-controller --type=json \
    -p "[{\"op\": \"replace\", \"path\": \"/spec/template/spec/containers/0/args/$index\", \"value\": \"$1\"}]" >/dev/null
  "$kubectl" -n tekton-pipelines rollout status deployment/tekton-pipelines-controller --timeout=180s >/dev/null
  echo "k8s: Tekton's -entrypoint-image is now $(entrypoint_image)" >&2
}

case ${1:-} in
  install) install "${2:-}" ;;
  entrypoint) [ -n "${2:-}" ] || { echo "usage: scripts/k8s/tekton.sh entrypoint IMAGE" >&2; exit 2; }; entrypoint "$2" ;;
  *) echo "usage: scripts/k8s/tekton.sh install [ENTRYPOINT_IMAGE] | entrypoint IMAGE" >&2; exit 2 ;;
esac
