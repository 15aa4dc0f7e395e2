#!/bin/sh
# Builds the programs of the single-node Kubernetes cluster that `make e2e-k8s` runs (docs/e2e-k8s.md): Kubernetes'
# own, and the controllers the cluster runs (Tekton Pipelines', Argo Workflows'). Test infrastructure only: nothing
# here is shipped in baton's bundle or image.
#
#   scripts/k8s/build.sh [GROUP...]   build what is missing (groups: kubernetes tekton argo s3 containerd; default all)
#
# Each group is pinned by a module of its own in scripts/k8s/<group>/ (go.mod names the release, go.sum the checksum
# of every module it is built from) and checksums.txt beside this script holds the SHA-256 of each binary by Go
# version, as scripts/peers/build.sh does for the peers: CGO_ENABLED=0, -trimpath, no VCS stamp, so the same Go gives
# the same bytes. Go builds run under `nice -n 19`: a first build of Kubernetes takes tens of minutes of CPU.
#
# The binaries land in $BATON_K8S_CACHE/bin/<group>-<version>/ (default ~/.cache/baton-k8s), kept between runs: a
# second run builds nothing. Writes NAME VERSION PATH SHA256 lines into $BATON_K8S_CACHE/bin/<group>.tsv.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cache=${BATON_K8S_CACHE:-$HOME/.cache/baton-k8s}
mkdir -p "$cache/bin"
command -v go >/dev/null || { echo "scripts/k8s/build.sh: go is not installed (Go >= 1.26 builds the cluster)" >&2; exit 1; }
goversion=$(go env GOVERSION)

# group  module (whose version names the folder)  tag  packages
groups="kubernetes k8s.io/kubernetes k8stools k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl
tekton github.com/tektoncd/pipeline k8stools github.com/tektoncd/pipeline/cmd/controller github.com/tektoncd/pipeline/cmd/webhook github.com/tektoncd/pipeline/cmd/entrypoint github.com/tektoncd/pipeline/cmd/nop github.com/tektoncd/pipeline/cmd/sidecarlogresults github.com/tektoncd/pipeline/cmd/workingdirinit
argo github.com/argoproj/argo-workflows/v4 k8stools github.com/argoproj/argo-workflows/v4/cmd/workflow-controller github.com/argoproj/argo-workflows/v4/cmd/argoexec
s3 github.com/johannesboyne/gofakes3 k8stools github.com/johannesboyne/gofakes3/cmd/gofakes3
containerd github.com/containerd/containerd/v2 k8stools,urfave_cli_no_docs,osusergo,netgo github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 github.com/containerd/containerd/v2/cmd/ctr"
want_groups=${*:-kubernetes tekton argo s3 containerd}

# The version the programs report (the API server's /version, the node's kubeletVersion, `kubectl version`), which
# Kubernetes' own build sets by -X (hack/lib/version.sh): without it they say v0.0.0-master, and Tekton's controller,
# which checks the server's version against its minimum, refuses to start. -s -w as the release's binaries.
ldflags() {
  case $1 in
    kubernetes)
      minor=$(echo "$2" | cut -d. -f2)
      for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
        printf -- '-X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean -X %s.buildDate=1970-01-01T00:00:00Z ' \
          "$package" "$2" "$package" "$package" "$minor" "$package" "$package"
      done
      echo "-s -w" ;;
    # containerd's Makefile stamps its version so (`containerd --version`, the CRI's RuntimeVersion the node reports).
    containerd)
      echo "-X github.com/containerd/containerd/v2/version.Version=$2 -X github.com/containerd/containerd/v2/version.Package=github.com/containerd/containerd -s -w" ;;
    *) echo "-s -w" ;;
  esac
}

# A module zip holds no symbolic links, and Argo's Linux build needs one (scripts/peers/build.sh says more): for a
# group whose folder lists links in `symlinks`, the module is copied out of Go's module cache (checked against go.sum
# on download), the links are made, and the build runs in a module that replaces the release with that copy.
restore_symlinks() {
  folder=$1 module=$2 version=$3 dir=$4
  (cd "$here/$folder" && GOFLAGS=-mod=readonly go mod download "$module@$version")
  from=$(cd "$here/$folder" && go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  rm -rf "$dir/src" "$dir/build"
  cp -r "$from" "$dir/src" && chmod -R u+w "$dir/src"
  while read -r path target; do
    [ -n "$path" ] && ln -sf "$target" "$dir/src/$path"
  done < "$here/$folder/symlinks"
  mkdir -p "$dir/build"
  cp "$here/$folder/go.mod" "$here/$folder/go.sum" "$here/$folder"/*.go "$dir/build/"
  printf '\nreplace %s => ../src\n' "$module" >> "$dir/build/go.mod"
  echo "$dir/build"
}

echo "$groups" | while read -r group module tag packages; do
  case " $want_groups " in *" $group "*) ;; *) continue ;; esac
  version=$(awk -v m="$module" '$1 == "require" && $2 == m { print $3 } $1 == m && $2 ~ /^v/ { print $2 }' "$here/$group/go.mod" | head -1)
  dir="$cache/bin/$group-$version"
  stamp="$goversion $(cat "$0" "$here/$group/go.mod" "$here/$group/go.sum" "$here/$group/symlinks" 2>/dev/null | sha256sum | cut -c1-64)"
  if [ "$(cat "$dir/stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "k8s: building $group $version ($goversion, under nice -n 19)" >&2
    start=$(date +%s)
    rm -rf "$dir" && mkdir -p "$dir/new"
    build_in="$here/$group"
    if [ -f "$here/$group/symlinks" ]; then build_in=$(restore_symlinks "$group" "$module" "$version" "$dir"); fi
    # shellcheck disable=SC2086 # packages is a list
    (cd "$build_in" && CGO_ENABLED=0 GOFLAGS=-mod=readonly nice -n 19 go build -tags "$tag" -trimpath -buildvcs=false \
      -ldflags "$(ldflags "$group" "$version")" -o "$dir/new/" $packages)
    rm -rf "$dir/src" "$dir/build"
    mv "$dir/new/"* "$dir/" && rmdir "$dir/new"
    echo "$stamp" > "$dir/stamp"
    echo "k8s: built $group $version in $(( $(date +%s) - start )) s" >&2
  fi
  table="$cache/bin/$group.tsv"
  : > "$table.new"
  for package in $packages; do
    binary=${package##*/}
    sum=$(sha256sum "$dir/$binary" | cut -c1-64)
    want=$(awk -v b="$binary" -v v="$version" -v g="$goversion" '$1 == b && $2 == v && $3 == g { print $4 }' "$here/checksums.txt")
    if [ -n "$want" ] && [ "$want" != "$sum" ]; then
      echo "k8s: $binary $version built by $goversion is $sum, not $want (scripts/k8s/checksums.txt)" >&2
      exit 1
    fi
    [ -n "$want" ] || echo "k8s: $binary $version built by $goversion: $sum (no checksum recorded for this Go)" >&2
    printf '%s\t%s\t%s\t%s\n' "$binary" "$version" "$dir/$binary" "$sum" >> "$table.new"
  done
  mv "$table.new" "$table"
done
