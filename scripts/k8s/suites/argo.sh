#!/bin/sh
# Argo Workflows' own e2e tests (test/e2e of the release scripts/k8s/argo/go.mod pins; the build tags `executor`,
# `corefunctional` and `functional`), compiled here and run one test at a time against the cluster of cluster.sh with
# the executor image scripts/k8s/suites.sh installed (baton's, or Argo's own for SUITE_CONFIG=stock). A test that fails
# with baton is run again with Argo's own executor, so that each failure says whether it is baton's or this cluster's.
# docs/e2e-k8s.md ("Argo's e2e tests") says what is set up and why, and what the results were.
#
#   SUITE_CONFIG=baton|stock SUITE_OUT=DIR scripts/k8s/suites/argo.sh [REGEX]
#
# REGEX (egrep) picks tests by `SUITE/TEST`. Prints `suite: argo SUITE/TEST: pass | fail: WHY | skip: WHY` per test
# and writes those lines to $SUITE_OUT/suite-argo-$SUITE_CONFIG.txt, each test's output to
# $SUITE_OUT/suite-argo-$SUITE_CONFIG/SUITE.TEST.log. Exits 1 when a test fails with baton and passes with Argo's
# executor (a failure of baton's), else 0: what fails both ways is this cluster's (docs/e2e-k8s.md lists why).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
k8s=$(cd "$here/.." && pwd)
. "$k8s/env.sh"
kubectl=$(k8s_bin kubernetes kubectl)
config=${SUITE_CONFIG:-baton}
out=${SUITE_OUT:-$(cd "$k8s/../.." && pwd)/build/e2e-k8s}
only=${1:-.}
module=github.com/argoproj/argo-workflows/v4
version=$(awk -v m="$module" '$1 == "require" && $2 == m { print $3 }' "$here/argo/go.mod")
tags=executor,corefunctional,functional
STOCK=baton.local/argo/argoexec:$version
BATON=baton.local/argo/argoexec-baton:$version
source_dir=$(cd "$here/argo" && go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')

# The test binary: `go test -c` of the release's test/e2e from the module in scripts/k8s/suites/argo/ (its go.sum pins
# every module), kept under the cache with a stamp as scripts/k8s/build.sh keeps the cluster's programs.
build() {
  dir=$K8S_CACHE/bin/suite-argo-$version
  stamp="$(go env GOVERSION) $tags $(cat "$here/argo/go.mod" "$here/argo/go.sum" | sha256sum | cut -c1-64)"
  if [ "$(cat "$dir/stamp" 2>/dev/null)" != "$stamp" ]; then
    echo "k8s: building Argo's e2e tests $version (under nice -n 19)" >&2
    start=$(date +%s)
    rm -rf "$dir" && mkdir -p "$dir"
    (cd "$here/argo" && CGO_ENABLED=0 GOFLAGS=-mod=readonly nice -n 19 go test -c -trimpath -buildvcs=false \
      -tags "$tags" -o "$dir/e2e.test" "$module/test/e2e")
    echo "$stamp" > "$dir/stamp"
    echo "k8s: built Argo's e2e tests in $(( $(date +%s) - start )) s" >&2
  fi
  TEST_BIN=$dir/e2e.test
}

# Stand-ins for the images the tests run, none of which can be pulled here, each on Debian's busybox-static (the
# cluster's baton.local/busybox:1 folder): argoproj/argosay:v2 is the release's own argosay script (its
# argo-workflows/test/e2e/images/argosay/v2/) as its ENTRYPOINT, on a stand-in for argosay:v1 (Ubuntu with cowsay)
# whose `cowsay` is a shell script printing its words and whose `bash` is busybox's sh, which also stands in for
# docker/whalesay; alpine and debian are busybox alone (the tests run only their shell and its applets);
# quay.io/argoproj/argoexec:latest is Argo's argoexec image of scripts/k8s/argo.sh. Images named without a tag or by
# :latest are pulled Always: they go to the node's registry (scripts/k8s/registry.sh).
images() {
  busybox=$K8S_CACHE/rootfs/busybox
  [ -x "$busybox/bin/busybox" ] ||
    { echo "scripts/k8s/suites/argo.sh: $busybox is missing (cluster.sh up makes it)" >&2; exit 1; }
  root=$K8S_CACHE/rootfs/suite-argo
  rm -rf "$root" && mkdir -p "$root"
  cp -a "$busybox" "$root/alpine" && mkdir -p "$root/alpine/tmp" "$root/alpine/run" "$root/alpine/var" &&
    chmod 1777 "$root/alpine/tmp" && ln -s ../run "$root/alpine/var/run" # /var/run as in Alpine, Debian and Ubuntu
  for name in docker.io/library/alpine:3.23 docker.io/library/alpine:latest docker.io/library/debian:9.4; do
    "$k8s/image.sh" "$name" "$root/alpine"
  done
  cp -a "$root/alpine" "$root/argosay-v1" && mkdir -p "$root/argosay-v1/usr/bin"
  printf '#!/bin/sh\n# A stand-in for cowsay: the words, without the cow.\necho "${*:-$(cat)}"\n' \
    > "$root/argosay-v1/usr/bin/cowsay"
  chmod 755 "$root/argosay-v1/usr/bin/cowsay"
  # Ubuntu's bash, for the tests that run `bash -c`: busybox's sh, with the one bash variable they use (BASHPID, the
  # shell's own PID, which exec keeps).
  printf '#!/bin/sh\n# A stand-in for bash: busybox sh with BASHPID.\nBASHPID=$$ exec /bin/sh "$@"\n' \
    > "$root/argosay-v1/bin/bash"
  chmod 755 "$root/argosay-v1/bin/bash"
  "$k8s/image.sh" docker.io/argoproj/argosay:v1 "$root/argosay-v1" cowsay
  "$k8s/image.sh" docker.io/docker/whalesay:latest "$root/argosay-v1" cowsay
  cp -a "$root/argosay-v1" "$root/argosay-v2"
  install -m 755 "$source_dir/test/e2e/images/argosay/v2/argosay" "$root/argosay-v2/argosay"
  "$k8s/image.sh" docker.io/argoproj/argosay:v2 "$root/argosay-v2" /argosay
  "$(k8s_ctr)" --address "$K8S_CONTAINERD_SOCK" -n k8s.io images tag --force "$STOCK" quay.io/argoproj/argoexec:latest >/dev/null
  "$k8s/registry.sh" publish docker.io/library/alpine:latest docker.io/docker/whalesay:latest \
    quay.io/argoproj/argoexec:latest
}

# What the release's e2e set-up (`make start PROFILE=minimal`: its argo-workflows/test/e2e/manifests/minimal) gives
# the tests, on top of scripts/k8s/argo.sh's install: the quick-start's roles bound to the namespace's `default`
# ServiceAccount (the executor's, the agent's, ...), the ServiceAccount tokens the fixtures read, the minimal profile's
# RBAC, the workflow-controller-configmap settings of its manifests/components/base (the default artifact repository
# stays scripts/k8s/argo.sh's), and the controller's DEFAULT_REQUEUE_TIME=1s of Argo's Makefile.
setup() {
  quick=$source_dir/manifests/quick-start/base
  minimal=$source_dir/test/e2e/manifests/minimal
  work=$K8S_STATE/suite-argo
  rm -rf "$work" && mkdir -p "$work"
  # Kustomize (as the profile's) puts every object and RoleBinding subject into namespace argo.
  files=
  for file in executor/emissary/executor-role.yaml executor-default-rolebinding.yaml pod-manager-role.yaml \
    pod-manager-default-rolebinding.yaml workflow-manager-role.yaml workflow-manager-default-rolebinding.yaml \
    agent-role.yaml agent-default-rolebinding.yaml artifactgc-role.yaml artifactgc-default-rolebinding.yaml \
    memoizer-role.yaml memoizer-default-rolebinding.yaml cluster-workflow-template-rbac.yaml \
    default.service-account-token-secret.yaml minio/my-minio-cred-secret.yaml webhooks/github.com-sa.yaml \
    webhooks/github.com-secret.yaml webhooks/github.com-rolebinding.yaml webhooks/submit-workflow-template-role.yaml; do
    cp "$quick/$file" "$work/quick-start-${file##*/}" && files="$files- quick-start-${file##*/}\n"
  done
  for file in argo.service-account-token-secret.yaml get-cm-rbac.yaml e2e-secrets-rbac.yaml \
    argo-workflows-agent-ca-certificates.yaml; do
    cp "$minimal/$file" "$work/minimal-$file" && files="$files- minimal-$file\n"
  done
  cp "$source_dir/test/e2e/manifests/components/base/argo-server.service-account-token-secret.yaml" "$work/"
  printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: argo\nresources:\n%b%s\n' \
    "$files" "- argo-server.service-account-token-secret.yaml" > "$work/kustomization.yaml"
  # The fixtures read argo-server's token (an argo-server is not run) and delete argo-events' sensors and event sources
  # before each test: their ServiceAccounts, and the two kinds as bare CRDs (argo-events' own are fetched from GitHub
  # by the minimal profile, which is out of reach; no test of these tags creates one).
  "$kubectl" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: argo-server, namespace: argo}
YAML
  for kind in Sensor:sensors EventSource:eventsources; do
    "$kubectl" apply -f - >/dev/null <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: ${kind#*:}.argoproj.io}
spec:
  group: argoproj.io
  names:
    kind: ${kind%%:*}
    plural: ${kind#*:}
    listKind: ${kind%%:*}List
    singular: $(echo "${kind%%:*}" | tr 'A-Z' 'a-z')
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
YAML
  done
  chmod -R u+w "$work"
  "$kubectl" kustomize "$work" | "$kubectl" apply -f - >/dev/null
  # The quick-start's named artifact repositories (a MinIO by the name `minio`, which this cluster, without DNS, cannot
  # resolve) pointed at scripts/k8s/argo.sh's S3 server, with the buckets the e2e profile makes in its MinIO; not as
  # the namespace's default (its annotation), which stays argo.sh's: the quick-start's archives every pod's log, which
  # the S3 server refuses (gofakes3 wants a Content-Length that Argo's streamed upload has not: MissingContentLength).
  sed -e 's#endpoint: minio:9000#endpoint: 10.96.0.50:9000#' -e '/^  annotations:/d' \
    -e '/default-artifact-repository:/d' -e '/^    #/d' "$quick/artifact-repositories-configmap.yaml" |
    "$kubectl" -n argo apply -f - >/dev/null
  for bucket in my-bucket my-bucket-2 my-bucket-3; do # made, or there already (409)
    case $(curl -s -o /dev/null -w '%{http_code}' -X PUT "http://10.96.0.50:9000/$bucket") in 200|409) ;; *) exit 1 ;; esac
  done
  # The controller's ServiceAccount may write memoization caches (ConfigMaps), as Argo's e2e controller, which runs
  # with the developer's kubeconfig, may: the quick-start's memoizer Role.
  "$kubectl" -n argo create rolebinding suite-argo-memoizer --role=memoizer --serviceaccount=argo:argo \
    --dry-run=client -o yaml | "$kubectl" apply -f - >/dev/null
  # The keys of scripts/k8s/argo.sh's artifact repository, in the tests' namespace (gofakes3 takes any).
  "$kubectl" -n argo create secret generic s3-credentials --from-literal=accesskey=e2e \
    --from-literal=secretkey=e2e-secret --dry-run=client -o yaml | "$kubectl" apply -f - >/dev/null
  # The images' ENTRYPOINT and CMD, which the controller would read from a registry for a template that gives no
  # command (argosay:v2: ENTRYPOINT /argosay, and no CMD: an ENTRYPOINT resets the CMD of the image it is built on).
  images_config='argoproj/argosay:v2: {entrypoint: [/argosay]}\nargoproj/argosay:v1: {cmd: [cowsay]}\n'
  images_config=$images_config'alpine:3.23: {cmd: [/bin/sh]}\nalpine: {cmd: [/bin/sh]}\n'
  images_config=$images_config'alpine:latest: {cmd: [/bin/sh]}\n'
  images_config=$images_config'debian:9.4: {cmd: [/bin/sh]}\ndocker/whalesay: {cmd: [cowsay]}\n'
  images_config=$images_config'docker/whalesay:latest: {cmd: [cowsay]}\n'
  images_config=$images_config'quay.io/argoproj/argoexec:latest: {entrypoint: [argoexec]}\n'
  defaults='spec:\n  activeDeadlineSeconds: 300\n  podSpecPatch: |\n    terminationGracePeriodSeconds: 10\n'
  defaults=$defaults'  workflowMetadata:\n    labels:\n      default-label: thisLabelIsFromWorkflowDefaults\n'
  "$kubectl" -n argo patch configmap workflow-controller-configmap --type merge -p "{\"data\": {
    \"images\": \"$images_config\", \"workflowDefaults\": \"$defaults\",
    \"retentionPolicy\": \"completed: 10\\nfailed: 2\\nerrored: 2\\n\",
    \"failedPodRestart\": \"enabled: true\\nmaxRestarts: 3\\n\",
    \"namespaceParallelism\": \"10\"}}" >/dev/null
  # The executor's resources (tests of resource quotas need its limits), beside the image suites.sh gave it.
  image=$("$kubectl" -n argo get configmap workflow-controller-configmap -o jsonpath='{.data.executor}' |
    sed -n 's/^image: //p')
  resources='resources:\n  requests: {cpu: 0.1, memory: 64Mi}\n  limits: {cpu: 0.5, memory: 256Mi}\n'
  "$kubectl" -n argo patch configmap workflow-controller-configmap --type merge \
    -p "{\"data\": {\"executor\": \"image: $image\\nimagePullPolicy: IfNotPresent\\n$resources\"}}" >/dev/null
  # The controller reads `images` when it starts: a new environment restarts it.
  "$kubectl" -n argo set env deployment/workflow-controller DEFAULT_REQUEUE_TIME=1s >/dev/null
  "$kubectl" -n argo rollout restart deployment/workflow-controller >/dev/null
  "$kubectl" -n argo rollout status deployment/workflow-controller --timeout=180s >/dev/null
}

# SUITE METHOD lines: each test method of the suites the tags compile, with the top-level test that runs its suite;
# the tags' suites in the order of $tags (the executor's own first).
list() {
  cd "$source_dir/test/e2e"
  for tag in $(echo "$tags" | tr , ' '); do
    # shellcheck disable=SC2046 # a list of files
    awk -v files="$(grep -l -E "^//go:build $tag\$" ./*_test.go | tr '\n' ' ')" '
      BEGIN { split(files, wanted, " "); for (i in wanted) want["./" substr(wanted[i], 3)] = 1 }
      /^func Test[A-Za-z0-9_]*\(t \*testing\.T\)/ { top = $2; sub(/\(.*/, "", top) }
      /suite\.Run\(t, new\(/ { type = $0; sub(/.*new\(/, "", type); sub(/\).*/, "", type)
        if (FILENAME in want) suite[type] = top }
      /^func \(s \*[A-Za-z0-9_]*\) Test[A-Za-z0-9_]*\(\)/ { type = $3; sub(/\)/, "", type); sub(/^\*/, "", type)
        m = $4; sub(/\(.*/, "", m); n++; types[n] = type; methods[n] = m }
      END { for (i = 1; i <= n; i++) if (types[i] in suite) print suite[types[i]], methods[i] }
    ' ./*_test.go
  done
  cd - >/dev/null
}

# The test's output without its colours.
plain() {
  sed 's/\x1b\[[0-9;]*m//g' "$1"
}

# Runs one test; prints `pass`, `skip: WHY` or `fail: WHY` (WHY: the first error the test reported).
run_one() {
  log=$1 top=$2 method=$3
  cd "$source_dir/test/e2e"
  # The tests read files relative to test/e2e (testdata/, functional/): run in the release's own folder, read-only.
  # Some tests run `kubectl` (the cluster's, first on PATH, its namespace argo as in Argo's set-up); E2E_WAIT_TIMEOUT
  # as Argo's Makefile sets it.
  KUBECONFIG=$tests_kubeconfig PATH=$(dirname "$kubectl"):$PATH E2E_WAIT_TIMEOUT=90s timeout 600 "$TEST_BIN" \
    -test.run "^$top\$" \
    -testify.m "^$method\$" -test.v -test.timeout 8m > "$log" 2>&1 && status=0 || status=$?
  cd - >/dev/null
  if grep -q -- "--- PASS: $top/$method " "$log" && [ "$status" = 0 ]; then echo pass
  elif grep -q -- "--- SKIP: $top/$method" "$log"; then
    # testify logs the reason (`FILE_test.go:N: WHY`) before the SKIP lines.
    why=$(plain "$log" | grep -E '^[[:space:]]+[a-z_]+\.go:[0-9]+: ' | head -1 | sed 's/^[[:space:]]*//')
    echo "skip: $(echo "$why" | cut -c1-200)"
  else
    # The first line a test logged (`FILE_test.go:N: timeout after ...`), else testify's first `Error:` with what
    # follows it when it is a comparison (`Not equal:`, then expected and actual).
    why=$(plain "$log" | grep -E '^[[:space:]]+[a-z_]+\.go:[0-9]+: [^[:space:]]' | head -1 | sed 's/^[[:space:]]*//')
    [ -n "$why" ] || why=$(plain "$log" | awk '
      /^[[:space:]]*Error:/ { sub(/^[[:space:]]*Error:[[:space:]]*/, ""); w = $0; n = 1; next }
      n && n < 3 && /^[[:space:]]+[^[:space:]]/ { sub(/^[[:space:]]*/, ""); w = w " " $0; n++; next }
      n { print w; exit }')
    [ -n "$why" ] || why="exit $status, no error reported (see the log)"
    # What the next test's set-up deletes: the workflows and every container's log of their pods, for the diagnosis.
    { echo "=== suite-argo: after the test"; "$kubectl" -n argo get workflows -o yaml || true
      for pod in $("$kubectl" -n argo get pods -l workflows.argoproj.io/workflow -o name || true); do
        "$kubectl" -n argo get "$pod" -o yaml || true
        names='{.spec.initContainers[*].name} {.spec.containers[*].name}'
        containers=$("$kubectl" -n argo get "$pod" -o jsonpath="$names" || true)
        for container in $containers; do
          echo "=== suite-argo: $pod $container"; "$kubectl" -n argo logs "$pod" -c "$container" --tail=50 || true
        done
      done; } >> "$log" 2>&1
    echo "fail: $(echo "$why" | tr -s '\t ' '  ' | cut -c1-240)"
  fi
}

mkdir -p "$out/suite-argo-$config"
out=$(cd "$out" && pwd)
results=$out/suite-argo-$config.txt
failed=$out/suite-argo-$config/failed
: > "$results"
: > "$failed"
tests_kubeconfig=$out/suite-argo-$config/kubeconfig
"$kubectl" config view --raw > "$tests_kubeconfig"
"$kubectl" --kubeconfig "$tests_kubeconfig" config set-context --current --namespace=argo >/dev/null
build
images
setup
start=$(date +%s)
list | while read -r top method; do
  echo "$top/$method" | grep -E -q -- "$only" || continue
  verdict=$(run_one "$out/suite-argo-$config/$top.$method.log" "$top" "$method")
  case $verdict in fail*) echo "$top $method" >> "$failed" ;; esac
  line="suite: argo $top/$method: $verdict"
  echo "$line"; echo "$line" >> "$results"
done
echo "k8s: Argo's e2e tests ($config) took $(( $(date +%s) - start )) s" >&2

# Each test that failed with baton, again with Argo's own executor: its line says `(stock: pass)` or `(stock: fail:
# WHY)`. The executor image is put back to baton's after.
if [ "$config" = baton ] && [ -s "$failed" ]; then
  mkdir -p "$out/suite-argo-baton/stock"
  "$k8s/argo.sh" executor "$STOCK"
  while read -r top method; do
    stock=$(run_one "$out/suite-argo-baton/stock/$top.$method.log" "$top" "$method")
    echo "suite: argo $top/$method: stock: $stock"
    awk -v t="suite: argo $top/$method: " -v s="$stock" 'index($0, t) == 1 { $0 = $0 " (stock: " s ")" } { print }' \
      "$results" > "$results.new" && mv "$results.new" "$results"
  done < "$failed"
  "$k8s/argo.sh" executor "$BATON"
fi
# A test that fails only with baton by a difference docs/argo.md lists (argo/differences.tsv) says so and is no
# failure of the suite's; any other is.
awk -F '\t' 'NR == FNR { if ($0 !~ /^#/) listed[$1] = $2; next }
  { name = $3; sub(/:$/, "", name) }
  / \(stock: pass\)$/ && name in listed { $0 = $0 " (a listed difference: " listed[name] ")" } { print }' \
  "$here/argo/differences.tsv" FS=' ' "$results" > "$results.new" && mv "$results.new" "$results"
! grep -q '(stock: pass)$' "$results"
