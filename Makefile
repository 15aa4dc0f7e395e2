# Every target a newcomer types installs the dependencies and builds first when they are missing.
NODE_MODULES := node_modules/.package-lock.json
BUNDLE := dist/baton.cjs
SOURCES := $(shell find src -name '*.ts' 2>/dev/null) package.json scripts/build.mjs
# The reaper addon (orphans as PID 1) ships beside the bundle. Plain C against Node-API: Node's own headers live in
# <prefix>/include/node next to <prefix>/bin/node; override with NODE_INCLUDE=... (npm's nodedir + /include/node).
ADDON := dist/baton-reaper.node
NODE_INCLUDE ?= $(shell node -p "require('path').resolve(process.execPath, '../../include/node')")

.PHONY: all build test unit integration typecheck demo bench sea clean

all: build

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

$(BUNDLE): $(NODE_MODULES) $(SOURCES)
	node scripts/build.mjs

$(ADDON): src/run/reaper.c
	@test -f $(NODE_INCLUDE)/node_api.h || { echo "node_api.h not found in $(NODE_INCLUDE): set NODE_INCLUDE" >&2; exit 1; }
	@mkdir -p dist
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -fPIC -shared -s -I$(NODE_INCLUDE) -o $@ src/run/reaper.c

build: $(BUNDLE) $(ADDON)

typecheck: $(NODE_MODULES)
	npx tsc --noEmit

# Unit tests drive pure logic; integration tests run dist/baton.cjs as a real process (as PID 1 when root).
unit: $(NODE_MODULES)
	node --import tsx --test --test-timeout=60000 --test-reporter=spec test/unit/*.test.ts

integration: $(BUNDLE) $(ADDON)
	node --import tsx --test --test-timeout=60000 --test-reporter=spec --test-concurrency=2 test/integration/*.test.ts

test: typecheck unit integration

# The example pipeline pod, run here by the pod runner (scripts/podrunner); FAIL=1 breaks its middle step.
demo: $(BUNDLE) $(ADDON)
	node --import tsx scripts/podrunner/demo.ts $(if $(filter-out 0,$(FAIL)),--fail)

bench: $(BUNDLE)
	node scripts/bench.mjs

clean:
	rm -rf dist build .bench
