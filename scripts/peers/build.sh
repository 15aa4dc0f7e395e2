#!/bin/sh
# Builds the real programs baton stands in for, so that the conformance suite and the bench can run them beside it
# (docs/development.md, "The real peers"). Test peers only: nothing here is shipped in baton's bundle or image.
#
#   scripts/peers/build.sh            build what is missing, print the table in $BATON_PEERS/peers.tsv
#
# Each Go peer is pinned by a module of its own in scripts/peers/<peer>/: go.mod names the release, go.sum holds the
# checksum of every module it is built from (Go's module proxy and checksum database vouch for them), and checksums.txt
# beside this script the SHA-256 of the binary that Go version builds. The build is the release's own: CGO_ENABLED=0,
# -trimpath, no VCS stamp (ko's defaults, which Tekton's and Argo's release images use), so the same Go gives the same
# bytes; another Go version gives other bytes, and the script then says so instead of failing.
#
# The binaries land in $BATON_PEERS (default ~/.cache/baton-peers), kept between runs: a second run builds nothing.
# tini comes from Debian's package.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${BATON_PEERS:-$HOME/.cache/baton-peers}
mkdir -p "$out"

command -v go >/dev/null || { echo "scripts/peers/build.sh: go is not installed (Go >= 1.26 builds the peers)" >&2; exit 1; }
if ! command -v tini >/dev/null; then
  apt-get install -y -qq tini >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq tini >/dev/null; }
fi
goversion=$(go env GOVERSION)

# peer  module folder  the module that names the version  package  binary
# otelcol is the OpenTelemetry Collector, assembled by a main package of ours (scripts/peers/collector/main.go) from the
# Collector's modules at one release: the tracing tests' collector (test/tracing/collector.ts).
peers="tekton-entrypoint tekton github.com/tektoncd/pipeline github.com/tektoncd/pipeline/cmd/entrypoint entrypoint
argoexec argo github.com/argoproj/argo-workflows/v4 github.com/argoproj/argo-workflows/v4/cmd/argoexec argoexec
argoexec-v3 argo-v3 github.com/argoproj/argo-workflows/v3 github.com/argoproj/argo-workflows/v3/cmd/argoexec argoexec
otelcol collector go.opentelemetry.io/collector/otelcol . otelcol"

# A module zip holds no symbolic links (Go drops them), and Argo's repository has one that its Linux build needs
# (workflow/executor/osspecific/signal_linux.go, a link to signal_darwin.go): the module as the proxy serves it does not
# build for Linux. So, for a peer whose folder lists such links in `symlinks` (PATH TARGET a line, as the release's
# repository has them), the module is copied from Go's module cache (checked against go.sum on download), the links
# are made in the copy, and the peer is built from a module that replaces the release with that copy (by a relative
# path: the binary records it, and must not name the cache's folder). Prints the folder to build in.
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
  cp "$here/$folder/go.mod" "$here/$folder/go.sum" "$here/$folder/peer.go" "$dir/build/"
  printf '\nreplace %s => ../src\n' "$module" >> "$dir/build/go.mod"
  echo "$dir/build"
}

table="$out/peers.tsv.new"
printf 'peer\tversion\tpath\tsha256\n' > "$table"
echo "$peers" | while read -r peer folder module package binary; do
  # The version go.mod requires of the module, on a `require` line of its own or in a block.
  version=$(awk -v m="$module" '$1 == "require" && $2 == m { print $3 } $1 == m { print $2 }' "$here/$folder/go.mod")
  dir="$out/$peer-$version"
  # The stamp: what the binary was built from. A changed go.mod, go.sum, symlinks, Go file of ours (the collector's
  # main.go), this script or Go rebuilds it.
  stamp="$goversion $(cat "$0" "$here/$folder/go.mod" "$here/$folder/go.sum" "$here/$folder/symlinks" "$here/$folder/"*.go 2>/dev/null | sha256sum | cut -c1-64)"
  if [ ! -x "$dir/$binary" ] || [ "$(cat "$dir/stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "peers: building $peer $version ($module, $goversion)" >&2
    mkdir -p "$dir"
    build_in="$here/$folder"
    if [ -f "$here/$folder/symlinks" ]; then build_in=$(restore_symlinks "$folder" "$module" "$version" "$dir"); fi
    (cd "$build_in" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -tags peers -trimpath -buildvcs=false \
      -o "$dir/$binary.new" "$package")
    rm -rf "$dir/src" "$dir/build"
    mv "$dir/$binary.new" "$dir/$binary"
    echo "$stamp" > "$dir/stamp"
  fi
  sum=$(sha256sum "$dir/$binary" | cut -c1-64)
  want=$(awk -v p="$peer" -v v="$version" -v g="$goversion" '$1 == p && $2 == v && $3 == g { print $4 }' "$here/checksums.txt")
  if [ -n "$want" ] && [ "$want" != "$sum" ]; then
    echo "peers: $peer $version built by $goversion is $sum, not $want (scripts/peers/checksums.txt)" >&2
    exit 1
  fi
  [ -n "$want" ] || echo "peers: $peer $version built by $goversion: $sum (no checksum recorded for this Go)" >&2
  printf '%s\t%s\t%s\t%s\n' "$peer" "$version" "$dir/$binary" "$sum" >> "$table"
done
tini=$(command -v tini)
printf 'tini\t%s\t%s\t%s\n' "$(dpkg-query -W -f '${Version}' tini)" "$tini" "$(sha256sum "$tini" | cut -c1-64)" >> "$table"
mv "$table" "$out/peers.tsv"
column -t -s "$(printf '\t')" "$out/peers.tsv" | cut -c1-140
