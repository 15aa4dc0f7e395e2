# Every target a newcomer types installs the dependencies and builds first when they are missing.
NODE_MODULES := node_modules/.package-lock.json
BUNDLE := dist/baton.cjs
SOURCES := $(shell find src -name '*.ts' 2>/dev/null) package.json scripts/build.mjs

.PHONY: all build test unit integration typecheck demo bench sea clean

all: build

$(NODE_MODULES): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

$(BUNDLE): $(NODE_MODULES) $(SOURCES)
	node scripts/build.mjs

build: $(BUNDLE)

typecheck: $(NODE_MODULES)
	npx tsc --noEmit

# Unit tests drive pure logic; integration tests run dist/baton.cjs as a real process (as PID 1 when root).
unit: $(NODE_MODULES)
	node --import tsx --test --test-timeout=60000 --test-reporter=spec test/unit/*.test.ts

integration: $(BUNDLE)
	node --import tsx --test --test-timeout=60000 --test-reporter=spec --test-concurrency=2 test/integration/*.test.ts

test: typecheck unit integration

demo: $(BUNDLE)
	sh scripts/demo.sh

bench: $(BUNDLE)
	node scripts/bench.mjs

clean:
	rm -rf dist build .bench
