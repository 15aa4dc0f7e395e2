#!/bin/sh
# The peers' own e2e suites (docs/e2e-k8s.md, "The peers' own suites") against the cluster of cluster.sh, with baton
# swapped in on both engines by the settings docs/tekton.md and docs/argo.md give. Needs the cluster up, `make image`
# and `make sea`.
#
#   scripts/k8s/suites.sh           install both engines with baton, run every suite in scripts/k8s/suites/
#   scripts/k8s/suites.sh stock     the same with the engines' own entrypoint and executor (to tell a failure of
#                                   baton's from one of this cluster's)
#
# Each suite prints one line per test (`suite: ENGINE TEST: pass | fail | skip: WHY`) and writes them to
# build/e2e-k8s/suite-ENGINE-CONFIG.txt.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/env.sh"
repo=$(cd "$here/../.." && pwd)
config=${1:-baton}
version=$(node -p 'require(process.argv[1]).version' "$repo/package.json")
argo_version=$(awk '$1 == "require" && $2 == "github.com/argoproj/argo-workflows/v4" { print $3 }' "$here/argo/go.mod")
case $config in
  baton)
    "$here/image.sh" --archive "$repo/dist/baton-image.tar"
    "$here/tekton.sh" install "ghcr.io/baton-dev/baton:$version"
    "$here/argo.sh" install
    "$here/argo.sh" baton-image
    "$here/argo.sh" executor "baton.local/argo/argoexec-baton:$argo_version" ;;
  stock)
    "$here/tekton.sh" install
    "$here/argo.sh" install ;;
  *) echo "usage: scripts/k8s/suites.sh [stock]" >&2; exit 2 ;;
esac
mkdir -p "$repo/build/e2e-k8s"
status=0
for suite in "$here"/suites/*.sh; do
  [ -e "$suite" ] || continue
  SUITE_CONFIG=$config SUITE_OUT=$repo/build/e2e-k8s sh "$suite" || status=1
done
exit $status
