#!/bin/sh
# Tekton Pipelines' own e2e tests (its test/ package, build tag e2e, at the release scripts/k8s/suites/tekton/go.mod
# pins) against the cluster of cluster.sh, with whatever entrypoint image the installed controller has: baton's or
# Tekton's own (scripts/k8s/suites.sh installs it; docs/e2e-k8s.md, "Tekton's e2e tests").
#
#   SUITE_CONFIG=baton|stock SUITE_OUT=DIR sh scripts/k8s/suites/tekton.sh [REGEX]
#
# REGEX (default: every test not in tekton/excluded.tsv) picks top-level tests, as `go test -run`. TEKTON_SUITE_GATE
# (stable, beta or alpha; default stable) sets the feature flags as Tekton's CI sets them for that gate
# (e2e-tests.sh with e2e-tests-kind*.env); the release's flags are put back at the end.
#
# Prints `suite: tekton TEST: pass | fail | skip: WHY` per test and writes those lines to
# $SUITE_OUT/suite-tekton-$SUITE_CONFIG.txt (suite-tekton-$SUITE_CONFIG-GATE.txt for another gate than stable); the
# tests' whole output (test2json) goes beside it as .jsonl.
set -eu
k8s=$(cd "$(dirname "$0")/.." && pwd)
. "$k8s/env.sh"
repo=$(cd "$k8s/../.." && pwd)
kubectl=$(k8s_bin kubernetes kubectl)
mod=$k8s/suites/tekton
config=${SUITE_CONFIG:-baton}
out=${SUITE_OUT:-$repo/build/e2e-k8s}
gate=${TEKTON_SUITE_GATE:-stable}
version=$(awk '$1 == "require" && $2 == "github.com/tektoncd/pipeline" { print $3 }' "$mod/go.mod")
log() { echo "k8s: $*" >&2; }

# The test binary: `go test -c` of the release's test/ package from our module (go.sum pins every module it is built
# from), rebuilt only when Go or the module changes.
build() {
  dir=$K8S_CACHE/bin/tekton-e2e-$version
  stamp="$(go env GOVERSION) $(cat "$mod/go.mod" "$mod/go.sum" | sha256sum | cut -c1-64)"
  if [ "$(cat "$dir/stamp" 2>/dev/null)" != "$stamp" ]; then
    log "building Tekton's e2e tests $version (under nice -n 19)"
    start=$(date +%s)
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$mod" && CGO_ENABLED=0 GOFLAGS=-mod=readonly nice -n 19 go test -c -tags e2e -trimpath -buildvcs=false \
      -ldflags "-s -w" -o "$dir/tekton-e2e.test" github.com/tektoncd/pipeline/test)
    echo "$stamp" > "$dir/stamp"
    log "built Tekton's e2e tests in $(( $(date +%s) - start )) s"
  fi
  bin=$dir/tekton-e2e.test
}

# Stand-ins for the images the tests name (mirror.gcr.io/busybox, alpine, ubuntu, bash, untagged: :latest, which the
# kubelet pulls every time): Debian's busybox-static, every applet a link in /bin with /usr/bin a link to it, and for
# ubuntu and bash also Debian's bash-static as /bin/bash. Same names, not the same images: no registry outside is
# reachable. Each is imported into the cluster's containerd and pushed to the cluster's registry (registry.sh), from
# which the kubelet pulls it.
images() {
  root=$K8S_CACHE/rootfs/standin-busybox
  if [ ! -x "$root/bin/busybox" ]; then
    rm -rf "$root" "$K8S_CACHE/deb-standin" && mkdir -p "$root/bin" "$root/tmp" "$root/usr/local/bin" "$root/etc" "$K8S_CACHE/deb-standin"
    (cd "$K8S_CACHE/deb-standin" && { apt-get download busybox-static bash-static >/dev/null 2>&1 || { apt-get update -qq && apt-get download busybox-static bash-static >/dev/null; }; })
    dpkg-deb -x "$K8S_CACHE"/deb-standin/busybox-static_*.deb "$K8S_CACHE/deb-standin/x"
    dpkg-deb -x "$K8S_CACHE"/deb-standin/bash-static_*.deb "$K8S_CACHE/deb-standin/x"
    cp "$K8S_CACHE/deb-standin/x/bin/busybox" "$root/bin/busybox"
    for applet in $("$root/bin/busybox" --list); do [ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"; done
    ln -s bin "$root/sbin" && ln -s ../bin "$root/usr/bin" && ln -s ../bin "$root/usr/sbin"
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$root/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
    chmod 1777 "$root/tmp"
    rm -rf "$root.bash" && cp -a "$root" "$root.bash"
    cp "$K8S_CACHE/deb-standin/x/bin/bash-static" "$root.bash/bin/bash"
    ln -s /bin/bash "$root.bash/usr/local/bin/bash"
    rm -rf "$K8S_CACHE/deb-standin"
  fi
  # NAME ROOTFS CMD (the Cmd of the image named so; none has an Entrypoint but bash's, left out here)
  for image in "busybox $root sh" "alpine $root /bin/sh" "ubuntu $root.bash /bin/bash" "bash $root.bash bash"; do
    set -- $image
    name=mirror.gcr.io/$1:latest
    IMAGE_CMD=$3 "$k8s/image.sh" "$name" "$2"
    if [ -x "$k8s/registry.sh" ]; then "$k8s/registry.sh" publish "$name"; fi
  done
  # Eight tests name busybox by a digest (multiarch_utils.go), which no image made here can have: the stand-in
  # is also given that name in containerd's store, where the kubelet finds it and, the reference not being :latest,
  # pulls nothing. A name only: its content is not the image that digest names.
  for name in $(grep -o 'mirror.gcr.io/busybox@sha256:[0-9a-f]*' "$src/multiarch_utils.go" | sort -u); do
    "$(k8s_ctr)" --address "$K8S_CONTAINERD_SOCK" -n k8s.io images tag --force mirror.gcr.io/busybox:latest "$name" >/dev/null
  done
}

# Workspaces made from a volumeClaimTemplate need PersistentVolumes, and the cluster has no provisioner: PVS
# hostPath volumes of 1 GiB under the state folder, with no storage class (a claim without one binds to such a
# volume when there is no default class), made before the run and deleted after it.
volumes() {
  i=1
  while [ "$i" -le "${TEKTON_SUITE_PVS:-24}" ]; do
    printf 'apiVersion: v1\nkind: PersistentVolume\nmetadata: {name: suite-tekton-%s, labels: {baton-suite: tekton}}\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce, ReadWriteMany]\n  persistentVolumeReclaimPolicy: Retain\n  hostPath: {path: %s, type: DirectoryOrCreate}\n---\n' \
      "$i" "$K8S_STATE/suite-tekton-pv/$i"
    i=$((i + 1))
  done | "$kubectl" apply -f - >/dev/null
}

delete_volumes() {
  "$kubectl" delete pv -l baton-suite=tekton --wait=false >/dev/null 2>&1 || true
  rm -rf "$K8S_STATE/suite-tekton-pv"
}

# The feature flags Tekton's CI sets per gate (e2e-tests.sh, its defaults and the kind env files).
flags() {
  case $gate in
    stable) data='"enable-api-fields": "stable", "results-from": "termination-message", "keep-pod-on-cancel": "false"' ;;
    beta) data='"enable-api-fields": "beta", "results-from": "sidecar-logs", "keep-pod-on-cancel": "true"' ;;
    alpha) data='"enable-api-fields": "alpha", "results-from": "sidecar-logs", "keep-pod-on-cancel": "true", "enable-cel-in-whenexpression": "true", "enable-param-enum": "true", "enable-artifacts": "true", "enable-concise-resolver-syntax": "true", "enable-kubernetes-sidecar": "true", "enable-termination-message-compression": "true"' ;;
    *) echo "scripts/k8s/suites/tekton.sh: TEKTON_SUITE_GATE is stable, beta or alpha" >&2; exit 2 ;;
  esac
  "$kubectl" -n tekton-pipelines patch configmap feature-flags -p "{\"data\": {$data}}" >/dev/null
  "$kubectl" -n tekton-pipelines patch configmap config-defaults -p '{"data": {"default-sidecar-log-polling-interval": "0ms"}}' >/dev/null
}

# Tekton's CI installs the release with optional_config/ (e2e-common.sh): the controller may read pods' logs,
# which results-from: sidecar-logs needs (the results sidecar prints the results; the controller reads its log).
log_access() {
  "$kubectl" "$1" -f "$src/../optional_config/enable-log-access-to-controller/" >/dev/null 2>&1 || [ "$1" = delete ]
}

cleanup() {
  log_access delete
  "$kubectl" apply -f "$K8S_STATE/tekton/config-feature-flags.yaml" -f "$K8S_STATE/tekton/config-defaults.yaml" >/dev/null 2>&1 || true
  delete_volumes
}

build
src=$(cd "$mod" && go mod download -json "github.com/tektoncd/pipeline@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')/test
images
# Every top-level test, less those that cannot run here (excluded.tsv: NAME, a tab, why).
# (-test.run: with none, the release's TestMain lists the tests twice, its serial ones then its parallel ones.)
all=$(cd "$src" && "$bin" -test.list '.*' -test.run none | grep '^Test')
want=${1:-.*}
run=
for name in $all; do
  echo "$name" | grep -Eq "^($want)\$" || continue
  grep -q "^$name	" "$mod/excluded.tsv" && continue
  run="$run${run:+|}$name"
done
mkdir -p "$out"
# The stable gate's lines are the suite's; another gate's go beside them, named for it.
base=$out/suite-tekton-$config
[ "$gate" = stable ] || base=$base-$gate
lines=$base.txt
events=$base.jsonl
trap cleanup EXIT
# A failed test keeps its namespace (arendelle-*) for a look: a run starts by deleting the last run's.
"$kubectl" get namespaces -o name | grep '^namespace/arendelle-' | xargs -r "$kubectl" delete --wait=false >/dev/null
flags
volumes
log_access apply
# The tests call `kubectl` by name (to read the feature flags, to create Gitea's objects).
mkdir -p "$K8S_STATE/suite-tekton-bin" && ln -sf "$kubectl" "$K8S_STATE/suite-tekton-bin/kubectl"
log "Tekton's e2e tests ($gate gate, -entrypoint-image $("$kubectl" -n tekton-pipelines get deployment tekton-pipelines-controller -o jsonpath='{.spec.template.spec.containers[0].args}' | tr -d '[]"' | tr ',' '\n' | awk 'f { print; exit } $0 == "-entrypoint-image" { f = 1 }'))"
start=$(date +%s)
# The binary reads its own sources (test annotations, testdata/) from the working folder: the release's test/.
(cd "$src" && PATH=$K8S_STATE/suite-tekton-bin:$PATH SYSTEM_NAMESPACE=tekton-pipelines "$bin" -test.v=test2json -test.run "^(${run:-none})\$" -test.timeout 60m \
  -test.parallel "${TEKTON_SUITE_PARALLEL:-4}" -kubeconfig "$KUBECONFIG" 2>&1 | go tool test2json -t) > "$events" || true
log "Tekton's e2e tests ran in $(( $(date +%s) - start )) s"
# A failure listed in known.tsv (this cluster's, failing on Tekton's own entrypoint too, or a listed difference) is a
# `known failure`; any other fails the suite.
node "$mod/summarize.mjs" "$events" "$mod/excluded.tsv" "$want" $all |
  awk -F '\t' 'NR == FNR { if ($0 !~ /^#/) known[$1] = $2; next }
    { split($0, w, " "); name = substr(w[3], 1, length(w[3]) - 1) }
    w[4] == "fail:" && name in known && $0 !~ /: fail: never / { sub(/: fail: /, ": known failure: " known[name] "; "); } { print }' "$mod/known.tsv" - > "$lines"
cat "$lines"
! grep -Eq '^suite: tekton [^ ]+: fail' "$lines"
