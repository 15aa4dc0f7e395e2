#!/bin/sh
# Makes docs/images/trace-jaeger.png again: `make demo`'s pod (examples/pipeline-pod.yaml, run here by the pod runner)
# with tracing on in its file form, its spans sent to Jaeger, and Jaeger's page of that trace taken by headless
# Chromium (docs/tracing.md, "What a pod's trace looks like").
#
#   JAEGER_UI=FOLDER scripts/tracing/jaeger-picture.sh [OUT.png]
#
# Jaeger (github.com/jaegertracing/jaeger, cmd/jaeger v1.75.0) is built from the Go module pinned in
# scripts/tracing/jaeger (go.mod's `tool` line, go.sum), as the peers are, but not by `make peers`: it is for this
# picture only, and a big build. Its Go
# module carries no web UI (a release binary embeds one built apart), so the UI is built here from the source of
# Jaeger's UI (the jaegertracing/jaeger-ui repository) at its tag v1.75.0, the one released with it: JAEGER_UI names a
# checkout of it, and its npm packages come from the npm registry by its package-lock.json (Node 24 of scripts/nodes).
# Both land in $BATON_PEERS (default ~/.cache/baton-peers) and are kept: a second run builds nothing.
#
# Jaeger and Chromium run in a network namespace of their own (a loopback only), so no port of this machine is taken.
# Needs root (namespaces, the pod runner), Go, and Debian's chromium package (installed when missing).
set -eu
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${BATON_PEERS:-$HOME/.cache/baton-peers}
picture=$(realpath -m "${1:-$repo/docs/images/trace-jaeger.png}")
node24=$repo/scripts/nodes/node_modules/node-24/bin

if [ "${BATON_PICTURE_NETNS:-}" != 1 ]; then
  jaeger=$out/jaeger-v1.75.0/jaeger
  ui=$out/jaeger-ui-v1.75.0/build
  # Jaeger, built once: 6.5 minutes of CPU, 18 minutes here beside other builds (it carries every storage backend's client).
  if [ ! -x "$jaeger" ]; then
    echo "jaeger-picture: building Jaeger v1.75.0" >&2
    mkdir -p "$(dirname "$jaeger")"
    (cd "$repo/scripts/tracing/jaeger" && CGO_ENABLED=0 GOFLAGS=-mod=readonly nice -n 19 go build -trimpath -buildvcs=false \
      -o "$jaeger.new" github.com/jaegertracing/jaeger/cmd/jaeger)
    mv "$jaeger.new" "$jaeger"
  fi
  # Its UI, built once from JAEGER_UI's source (npm ci, then Vite).
  if [ ! -f "$ui/index.html" ]; then
    : "${JAEGER_UI:?names a checkout of Jaeger's UI (the jaegertracing/jaeger-ui repository) at tag v1.75.0: its build is not in Jaeger's Go module}"
    [ -x "$node24/node" ] || (cd "$repo" && npm ci --prefix scripts/nodes --no-audit --no-fund)
    version=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$JAEGER_UI/packages/jaeger-ui/package.json")
    [ "$version" = 1.75.0 ] || { echo "jaeger-picture: $JAEGER_UI is Jaeger's UI $version, not 1.75.0" >&2; exit 1; }
    echo "jaeger-picture: building Jaeger's UI 1.75.0" >&2
    src=$out/jaeger-ui-v1.75.0/src
    rm -rf "$src" && mkdir -p "$src" && cp -r "$JAEGER_UI/." "$src/"
    # --ignore-scripts: no install script runs (husky's git hooks; esbuild's binary comes as its optional package).
    (cd "$src" && PATH=$node24:$PATH nice -n 19 npm ci --no-audit --no-fund --ignore-scripts &&
      cd packages/plexus && PATH=$node24:$PATH nice -n 19 npm run build &&
      cd ../jaeger-ui && PATH=$node24:$PATH NODE_ENV=production nice -n 19 npx vite build)
    # Only the build is kept: the source and its node_modules are most of a gigabyte.
    rm -rf "$ui" && cp -r "$src/packages/jaeger-ui/build" "$ui" && rm -rf "$src"
  fi
  # Node 24 (scripts/nodes) drives Chromium: its WebSocket is Node's own from 22 on.
  [ -x "$node24/node" ] || (cd "$repo" && npm ci --prefix scripts/nodes --no-audit --no-fund)
  command -v chromium >/dev/null && command -v pngquant >/dev/null || { apt-get update -qq && apt-get install -y -qq chromium pngquant; }

  # The demo pod, traced to files: the pod has a loopback of its own, so its batons write their spans into a folder
  # (BATON_TRACES_DIR, one OTLP JSON line per baton) instead of sending them.
  work=$(mktemp -d /tmp/baton-jaeger-picture.XXXXXX)
  trap 'rm -rf "$work"' EXIT
  mkdir "$work/traces"
  (cd "$repo" && PATH=$repo/bin:$PATH node --import tsx scripts/podrunner/main.ts --quiet-logs --svg "$work/timeline.svg" \
    --env "BATON_TRACES_DIR=$work/traces" examples/pipeline-pod.yaml >&2)
  BATON_PICTURE_NETNS=1 unshare --net -- "$0" "$picture" "$work" "$jaeger" "$ui"
  exit 0
fi

# In the network namespace: Jaeger on its loopback, the spans sent to it, the page taken.
work=$2 jaeger=$3 ui=$4
node24=$repo/scripts/nodes/node_modules/node-24/bin
ip link set lo up
cat > "$work/jaeger.yaml" <<EOF
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:13133
  jaeger_storage:
    backends:
      memory_store:
        memory:
          max_traces: 100
  jaeger_query:
    storage:
      traces: memory_store
    ui:
      assets_path: $ui
    http:
      endpoint: 127.0.0.1:16686
    grpc:
      endpoint: 127.0.0.1:16685
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:4318
exporters:
  jaeger_storage_exporter:
    trace_storage: memory_store
EOF
"$jaeger" --config "$work/jaeger.yaml" > "$work/jaeger.log" 2>&1 &
jaeger_pid=$!
trap 'kill $jaeger_pid 2>/dev/null || true' EXIT
# Ready: its health endpoint answers (polled: a program's readiness in a shell has no event to wait on).
n=0
until curl -sf http://127.0.0.1:13133/status >/dev/null; do
  n=$((n + 1))
  [ $n -le 150 ] || { cat "$work/jaeger.log" >&2; echo "jaeger-picture: Jaeger did not start" >&2; exit 1; }
  sleep 0.2
done
# Every baton of the pod wrote one file; all of them are one trace (no TRACEPARENT: the pod's own).
traces=$(ls "$work/traces" | sed -n 's/^baton-\([0-9a-f]\{32\}\)-[0-9a-f]\{16\}\.jsonl$/\1/p' | sort -u)
[ "$(echo "$traces" | wc -w)" = 1 ] || { echo "jaeger-picture: not one trace: $traces" >&2; exit 1; }
spans=0
for file in "$work"/traces/*.jsonl; do
  curl -sf -H 'Content-Type: application/json' --data-binary "@$file" http://127.0.0.1:4318/v1/traces >/dev/null
  spans=$((spans + $(grep -o '"spanId"' "$file" | wc -l)))
done
# Stored once the query service returns every span of the trace.
n=0
until [ "$(curl -sf "http://127.0.0.1:16686/api/traces/$traces" | grep -o '"spanID"' | wc -l)" -ge $spans ]; do
  n=$((n + 1))
  [ $n -le 100 ] || { echo "jaeger-picture: Jaeger never returned the $spans spans of $traces" >&2; exit 1; }
  sleep 0.1
done
# The trace's page as a user opens it from the search, step-fetch's row opened to show its attributes.
PATH=$node24:$PATH node "$repo/scripts/tracing/screenshot.mjs" "http://127.0.0.1:16686/trace/$traces" "$work/page.png" \
  --open step:step-fetch --size 1280x1000
mkdir -p "$(dirname "$picture")"
# Fewer colours, the same picture: a screenshot of a page has few, and the file stays small for the docs.
pngquant --force --quality 70-95 --output "$picture" "$work/page.png"
echo "jaeger-picture: $picture ($(wc -c < "$picture") bytes): trace $traces, $spans spans" >&2
