# kubectl-watch_doctor: build, test and release.
# Tools are pinned here and fetched from the Go module proxy on first use.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

VERSION   ?= v0.1.0
BINARY    := kubectl-watch_doctor
PKG       := github.com/watch-doctor/watch-doctor
# COMMIT is the last commit that changed anything but .krew.yaml, so
# committing the regenerated manifest does not change the archives it
# names (dist stays reproducible for a given tree); "unknown" outside git.
COMMIT    ?= $(shell git log -1 --format=%H -- . ':(exclude).krew.yaml' 2>/dev/null || echo unknown)
LDFLAGS   := -s -w -X $(PKG)/internal/cli.version=$(VERSION) -X $(PKG)/internal/cli.commit=$(or $(COMMIT),unknown)
COMPLETION := kubectl_complete-watch_doctor
GO        ?= go
GOFLAGS_BUILD := -trimpath -buildvcs=false
# What users run: build, install and dist all link with cgo off. With cgo on,
# kustomize (through cli-runtime) imports plugin, which makes the linker keep
# every exported method: 78 MB instead of 48 MB (docs/architecture.md, "Binary
# size"). CGO_ENABLED is set on these recipes only: `go test -race` needs cgo.
BUILD_ENV := CGO_ENABLED=0

# Pinned tools.
KREW_VERSION := v0.4.3

# Fuzzing: how much each fuzz target runs under `make fuzz`, as go test's
# -fuzztime: a count of inputs (100000x) or a duration (10s). Counts are the
# default: go1.26's fuzz coordinator can fail a duration-bounded run with a
# bare "context deadline exceeded" when a worker is busy at the deadline
# (golang/go#75804, fixed in go1.27); a count has no deadline.
FUZZTIME ?= 100000x

DEMO_DIR := testdata/kube-apiserver-v1.37.2/seed-repro

.PHONY: all build binsize install demo test rules unit unit-race unit-cover cover-floors differential lint reference e2e replay-v1.38 test-replay-v1.38 bench bench-live fuzz dist validate-krew clean

all: build

build: ## Build bin/kubectl-watch_doctor for this machine, as make dist builds the release archives.
	$(BUILD_ENV) $(GO) build $(GOFLAGS_BUILD) -ldflags '$(LDFLAGS)' -o bin/$(BINARY) ./cmd/kubectl-watch_doctor

binsize: build ## The size table of docs/development.md ("The binary"): symbol bytes per module, and make build's binary size.
	$(BUILD_ENV) $(GO) run ./hack/binsize -bin bin/$(BINARY)

install: ## Install the plugin and its completion script (kubectl_complete-watch_doctor) into GOBIN (kubectl finds both on PATH).
	$(BUILD_ENV) $(GO) install $(GOFLAGS_BUILD) -ldflags '$(LDFLAGS)' ./cmd/kubectl-watch_doctor
	@bindir=$$($(GO) env GOBIN); [ -n "$$bindir" ] || bindir=$$($(GO) env GOPATH)/bin; \
	  install -m 0755 $(COMPLETION) "$$bindir/$(COMPLETION)"; \
	  echo "installed $$bindir/$(BINARY) and $$bindir/$(COMPLETION)"

demo: build ## Analyze a real kube-apiserver capture shipped in testdata (no cluster, no network).
	@echo '$$ kubectl watch-doctor analyze $(DEMO_DIR)/t1 $(DEMO_DIR)/t2' >&2
	@./bin/$(BINARY) analyze $(DEMO_DIR)/t1 $(DEMO_DIR)/t2 --fail-on none

# The -race pass alone, then the coverage pass and the differential side by
# side (-j2, each one's output printed whole when it ends): on 2 cores the
# coverage pass leaves one idle for much of its run, and the differential
# fills it (docs/development.md, "How long it takes").
test: lint rules ## Lint, the alert rules (promtool), the unit tests with the race detector, then with coverage beside the differential suite.
	$(MAKE) --no-print-directory unit-race
	$(MAKE) --no-print-directory -j2 --output-sync=target unit-cover differential

# The shipped alerts, with promtool (Debian's prometheus package, installed
# by hack/install-promtool.sh when missing).
rules:
	./hack/install-promtool.sh
	promtool check rules deploy/prometheus/rules.yaml
	promtool test rules deploy/prometheus/rules_test.yaml

# Unit tests, in two passes over the same tests: with the race detector, then
# with coverage. Together, -race would force -covermode=atomic, whose counters
# cost the race run about three times over on the parsers' hot loops
# (pkg/stacks: 19 s of CPU with -race, 61 s with -race -coverprofile); the
# coverage pass alone takes about 4 minutes of CPU for every package.
# Each package's coverage from its own tests goes to a profile outside the
# tree, then hack/covercheck fails on a function over 50 lines its package's
# tests never run or a package under its floor in hack/covercheck/floors.txt
# (docs/development.md, "Coverage").
#
# GOGC=400: the tests parse real captures of megabytes over and over, and
# under -race the collector's marking is instrumented too; a larger heap
# goal cut internal/cli's CPU by a tenth (459 to 414 s) for a peak of under
# 5 GB per test binary. GORACE=atexit_sleep_ms=0: the race runtime sleeps a
# second at each test binary's exit by default, 40 binaries here.
UNIT_SKIP := -skip '^TestDifferential$$'
TEST_ENV := GOGC=400
RACE_TEST := $(TEST_ENV) GORACE=atexit_sleep_ms=0 $(GO) test -race -count=1 -timeout 20m $(UNIT_SKIP)
COVER_TEST := $(TEST_ENV) $(GO) test -count=1 -timeout 20m $(UNIT_SKIP)
unit: unit-race unit-cover

unit-race:
	$(RACE_TEST) ./...

unit-cover:
	prof=$$(mktemp -d) && trap 'rm -rf "$$prof"' EXIT && \
	  $(COVER_TEST) -coverprofile "$$prof/cover.out" ./... && \
	  $(GO) run ./hack/covercheck -profile "$$prof/cover.out"

cover-floors: ## Run the unit tests with coverage and set each package's coverage floor 3 points under its coverage now.
	prof=$$(mktemp -d) && trap 'rm -rf "$$prof"' EXIT && \
	  $(COVER_TEST) -coverprofile "$$prof/cover.out" ./... && \
	  $(GO) run ./hack/covercheck -profile "$$prof/cover.out" -write

# The replay's fidelity suite (upstream cacher vs ours, unpatched), run on
# its own so its summary line is printed. Without -race: the suite's job is
# that the two columns agree, scenario by scenario. The code it runs (the
# upstream Backend, MemStore and its watches, replay.Run's driver, our
# cacher) is run by the -race pass in internal/replay/upstream's other tests
# (TestUpstreamDeterministic and TestIndexedTriggerChannelSize drive both
# columns through replay.Run), internal/replay's and internal/cacher's;
# under -race the suite took 235 s of CPU, without it 77 s.
differential:
	@out=$$($(TEST_ENV) $(GO) test -count=1 -timeout 30m -run '^TestDifferential$$' -v ./internal/replay/upstream 2>&1) || { echo "$$out"; exit 1; }; \
	  echo "$$out" | grep -E 'differential suite:|^ok' | sed -E 's/^ +[a-z_]+\.go:[0-9]+: //'

reference: ## Regenerate the flag reference docs/reference/ from the command tree (make test fails while it is stale).
	$(GO) test -count=1 -run '^TestReference$$' ./internal/cli -update

lint: ## go vet, gofmt, go mod tidy must leave no diff.
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.cache/*')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@bak=$$(mktemp -d); trap 'rm -rf "$$bak"' EXIT; cp go.mod go.sum "$$bak/"; \
	  $(GO) mod tidy; \
	  if ! diff -q go.mod "$$bak/go.mod" >/dev/null || ! diff -q go.sum "$$bak/go.sum" >/dev/null; then \
	    echo "go mod tidy changed go.mod/go.sum: commit the tidy result"; diff -u "$$bak/go.mod" go.mod || true; exit 1; fi

e2e: build ## End-to-end tests on a real kube-apiserver + etcd built from the module proxy.
	WATCH_DOCTOR_BIN=$(CURDIR)/bin/$(BINARY) ./test/e2e/run.sh

# The replay's upstream column on 1.38's own cacher: a module of its own
# (hack/replay/v1.38: k8s.io/apiserver v0.38.0-beta.0, Go 1.27, which the go
# command fetches from the module proxy), built into the program `replay
# --upstream-release v1.38` runs beside bin/$(BINARY) (docs/architecture.md,
# "The 1.38 replay column"). The build tag compiles MemStore's v0.38-only
# methods (internal/replay/upstream/memstore_v038.go). Without Go 1.27 both
# targets fail, saying so: they never skip.
REPLAY_V138_DIR := hack/replay/v1.38
REPLAY_V138_ENV := GOTOOLCHAIN=go1.27.3 GOFLAGS=-buildvcs=false
REPLAY_V138_TAGS := -tags apiserver_v038

replay-v1.38: ## Build bin/kubectl-watch_doctor-replay-v1.38, the 1.38 upstream column of replay --upstream-release v1.38 (Go 1.27).
	@cd $(REPLAY_V138_DIR) && $(REPLAY_V138_ENV) $(GO) version >/dev/null 2>&1 || { 	  echo "make replay-v1.38 needs Go 1.27 (GOTOOLCHAIN=go1.27.3), which the go command could not fetch from the module proxy:"; 	  cd $(REPLAY_V138_DIR) && $(REPLAY_V138_ENV) $(GO) version; exit 1; }
	cd $(REPLAY_V138_DIR) && $(BUILD_ENV) $(REPLAY_V138_ENV) $(GO) build $(GOFLAGS_BUILD) $(REPLAY_V138_TAGS) -o $(CURDIR)/bin/$(BINARY)-replay-v1.38 .

test-replay-v1.38: replay-v1.38 ## The 1.38 column against what the real v1.38.0-beta.0 server did, and MemStore's v0.38 methods (Go 1.27).
	cd $(REPLAY_V138_DIR) && $(REPLAY_V138_ENV) $(GO) test -count=1 $(REPLAY_V138_TAGS) -v . && \
	  $(REPLAY_V138_ENV) $(GO) test -count=1 $(REPLAY_V138_TAGS) -run '^TestMemStoreOnce$$' -v github.com/watch-doctor/watch-doctor/internal/replay/upstream

bench: ## Benchmarks of every stage and the whole command, against gostackparse and panicparse.
	./bench/run.sh

# What each fetch costs a real kube-apiserver v1.37.2 inflated with idle and
# stuck watches (loopback only; minutes of load on 2 cores; not in CI).
# Then whole runs of the plugin (collect, then analyze) at BENCH_LIVE_WHOLE
# idle watches, with and without background load (docs/diagnose-at-scale.md).
BENCH_LIVE_WATCHES ?= 2000,5000,10000
BENCH_LIVE_WHOLE ?= 0,5000,20000,50000
BENCH_LIVE_INTERVAL ?= 70s
bench-live: build ## Measure each fetch's bytes, wall time and API server stall on a real kube-apiserver, and whole runs (docs/diagnose-at-scale.md).
	cd test/e2e && eval "$$(hack/build-binaries.sh)" && export KUBE_APISERVER_BIN ETCD_BIN && \
	  go run ./cmd/bench-live -watches $(BENCH_LIVE_WATCHES) -whole $(BENCH_LIVE_WHOLE) -interval $(BENCH_LIVE_INTERVAL) -plugin $(CURDIR)/bin/$(BINARY)

fuzz: ## Run every fuzz target for FUZZTIME (inputs or duration) each.
	./hack/fuzz.sh $(FUZZTIME)

dist: ## Reproducible release archives and their sha256 in dist/, and .krew.yaml updated.
	VERSION=$(VERSION) LDFLAGS='$(LDFLAGS)' BUILD_ENV='$(BUILD_ENV)' GOFLAGS_BUILD='$(GOFLAGS_BUILD)' ./hack/dist.sh

validate-krew: dist ## .krew.yaml matches dist/ and passes krew's validate-krew-manifest.
	./hack/validate-krew.sh $(KREW_VERSION)

clean:
	rm -rf bin dist
