# rewardd — `make` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Pinned code generators: checkgenerate proves the committed code is what
# these versions make of the .proto files.
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.0
BUF_VERSION                := v1.75.0
# grpcurl is what the README's example uses (make grpcurl); the CLI tests run it.
GRPCURL_VERSION            := v1.9.4

# The toolchains of code_exec's languages (scorers/codeexec/sandbox/languages.go):
# gcc builds the sandbox's launcher, g++ compiles C++, then Java and JavaScript.
CODE_EXEC_PACKAGES := gcc g++ openjdk-17-jdk-headless nodejs
# The other languages, language=package[,library...], installed by make deps when
# CODE_EXEC_LANGUAGES names them (a list, commas or spaces) or is all; make
# test-languages runs their tests. A test holds both lists to the table.
CODE_EXEC_MORE := go=golang-go rust=rustc bash=bash typescript=node-typescript,node-lodash php=php-cli ruby=ruby perl=perl,libtest-deep-perl,libdata-compare-perl lua=lua5.4,lua-unit r=r-base-core csharp=mono-mcs kotlin_script=kotlin scala=scala sql=sqlite3 racket=racket verilog=iverilog d=ldc pytest=python3-pytest go_test=golang-go,golang-github-stretchr-testify-dev junit=junit5
CODE_EXEC_LANGUAGES ?=
comma := ,
CODE_EXEC_WANTED := $(subst $(comma), ,$(CODE_EXEC_LANGUAGES))
$(foreach l,$(filter-out all python cpp java javascript,$(CODE_EXEC_WANTED)),$(if $(filter $(l)=%,$(CODE_EXEC_MORE)),,$(error CODE_EXEC_LANGUAGES: no language $(l); the languages beyond the default four: $(CODE_EXEC_MORE))))
CODE_EXEC_EXTRA := $(strip $(foreach p,$(CODE_EXEC_MORE),$(if $(filter all $(firstword $(subst =, ,$(p))),$(CODE_EXEC_WANTED)),$(subst $(comma), ,$(lastword $(subst =, ,$(p)))))))

BIN := $(CURDIR)/.bin
export PATH := $(BIN):/usr/local/go/bin:$(PATH)
export GOBIN := $(BIN)

PROTOS := $(shell find proto -name '*.proto')
# The regex engine: RE2 through cgo (scorers/rematch) when libre2 is installed
# (make deps installs it); otherwise, as in a plain `go build` with no tag,
# RE2 translated to Go (go-re2's wasm2go), up to 1.5x slower on user patterns;
# -tags rematch_regexp gives Go's regexp alone. cre2.cpp (go-re2's C++ shim)
# warns on a string constant: not ours to fix. Expanded when used: make test installs libre2
# (deps) before its first go command.
RE2_TAGS = $(shell pkg-config --exists re2 2>/dev/null && echo -tags re2_cgo)
export CGO_CXXFLAGS := -O2 -g -Wno-write-strings
# -timeout: a package's tests take minutes on a loaded machine (the sandbox's, under
# stress-ng, ran past go test's default 10 minutes).
GO_TEST_FLAGS ?= -race -count=1 -timeout 45m $(RE2_TAGS)
# make fuzz: FUZZTIME per target, FUZZ a regexp choosing targets by name.
# make test fuzzes every target for CI_FUZZTIME: a count of executions, not
# a duration, because go1.26's fuzz coordinator can fail a target with a bare
# "context deadline exceeded" and no crasher when a duration runs out
# (go.dev/issue/75804, fixed in go1.27; seen here in CI on FuzzCompute).
FUZZTIME ?= 10s
FUZZ ?= .
CI_FUZZTIME ?= 3000x

.PHONY: help
help: ## Describe the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-22s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/rewardd and the load generator bin/rewardd-bench (on RE2 when libre2 is installed: make deps)
	go build $(RE2_TAGS) -o bin/rewardd ./cmd/rewardd
	go build $(RE2_TAGS) -o bin/rewardd-bench ./cmd/rewardd-bench

.PHONY: run
run: build ## Run the service on the embedded default config
	./bin/rewardd serve

.PHONY: deps
deps: ## Install what the tests need (Debian packages when run as root, pinned Go tools)
	@if ! command -v protoc >/dev/null || [ ! -f /usr/include/google/protobuf/struct.proto ] || ! command -v curl >/dev/null || ! command -v openssl >/dev/null \
	    || ! /usr/bin/python3 -c 'import grpc, google.protobuf, numpy, omegaconf, sympy, pylatexenc' 2>/dev/null || ! dpkg -s python3-setuptools python3-venv >/dev/null 2>&1 \
	    || ! pkg-config --exists re2 2>/dev/null || [ ! -x /usr/bin/cc ] || [ ! -x /usr/bin/g++ ] || [ ! -x /usr/bin/javac ] || [ ! -x /usr/bin/node ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      protobuf-compiler libprotobuf-dev curl openssl python3-grpcio python3-protobuf python3-grpc-tools python3-numpy \
	      python3-omegaconf python3-sympy python3-pylatexenc python3-setuptools python3-venv libre2-dev pkg-config $(CODE_EXEC_PACKAGES) >/dev/null; \
	  else \
	    echo "missing: protoc, its well-known types (libprotobuf-dev), curl, openssl, libre2-dev, pkg-config, python3-grpcio python3-protobuf python3-grpc-tools python3-numpy python3-omegaconf python3-sympy python3-pylatexenc python3-setuptools python3-venv and/or the code_exec toolchains ($(CODE_EXEC_PACKAGES)); install them with apt-get as root" >&2; exit 1; \
	  fi; \
	fi
	@if [ -n "$(CODE_EXEC_EXTRA)" ] && ! dpkg -s $(CODE_EXEC_EXTRA) >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(CODE_EXEC_EXTRA) >/dev/null; \
	  else \
	    echo "missing: the toolchains of CODE_EXEC_LANGUAGES=$(CODE_EXEC_LANGUAGES) ($(CODE_EXEC_EXTRA)); install them with apt-get as root" >&2; exit 1; \
	  fi; \
	fi
	@$(MAKE) --no-print-directory tools grpcurl

.PHONY: tools
tools: $(BIN)/protoc-gen-go-$(PROTOC_GEN_GO_VERSION) $(BIN)/protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION) ## Install the pinned code generators into .bin

$(BIN)/protoc-gen-go-$(PROTOC_GEN_GO_VERSION):
	go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	@touch $@

$(BIN)/protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION):
	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	@touch $@

.PHONY: grpcurl
grpcurl: $(BIN)/grpcurl-$(GRPCURL_VERSION) ## Install the pinned grpcurl into .bin (the README's gRPC examples; make deps does too)

# From the module cache first (verified when it was downloaded), so that it
# installs offline, as TestREADME runs the README in a network namespace;
# then from the module proxy.
$(BIN)/grpcurl-$(GRPCURL_VERSION):
	GOPROXY=file://$$(go env GOMODCACHE)/cache/download GOSUMDB=off go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION) 2>/dev/null \
	  || go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION)
	@touch $@

.PHONY: generate
generate: tools ## Regenerate the Go code (and the Python client's stubs) from proto/
	protoc -I proto --go_out=proto --go_opt=paths=source_relative \
	  --go-grpc_out=proto --go-grpc_opt=paths=source_relative $(PROTOS:proto/%=%)
	@$(MAKE) --no-print-directory generate-python

.PHONY: checkgenerate
checkgenerate: tools ## Fail if the committed generated code differs from what `make generate` makes
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	protoc -I proto --go_out=$$tmp --go_opt=paths=source_relative \
	  --go-grpc_out=$$tmp --go-grpc_opt=paths=source_relative $(PROTOS:proto/%=%) && \
	for f in $$(cd $$tmp && find . -name '*.go'); do \
	  diff -u proto/$$f $$tmp/$$f || { echo "proto/$$f is stale: run 'make generate' and commit" >&2; exit 1; }; \
	done && \
	for f in $$(find proto -name '*.pb.go'); do \
	  [ -f $$tmp/$${f#proto/} ] || { echo "$$f has no .proto any more: delete it" >&2; exit 1; }; \
	done && echo "generated code is up to date"

.PHONY: lint
lint: ## go vet, gofmt, and buf lint (buf compiles for minutes the first time)
	go vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$out" ] || { echo "gofmt needed:"; echo "$$out"; exit 1; }
	@command -v buf >/dev/null || go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	buf lint

.PHONY: test
test: deps checkgenerate checkgenerate-python check-deploy ## Run every test (race detector on), as CI does
	go vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$out" ] || { echo "gofmt needed:"; echo "$$out"; exit 1; }
	@$(MAKE) --no-print-directory test-python
	go test $(GO_TEST_FLAGS) ./...
	go test -count=1 ./scorers/rematch ./scorers/regex ./scorers/extract # the plain build's engines: RE2 as Go, the scanner, Go's regexp (-race ran above)
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(CI_FUZZTIME) FUZZ=.

# The fuzz targets are found anew on each run, not listed by hand: every
# `func FuzzXxx(f *testing.F)` in the test files that go list gives for each
# package of the module (build constraints applied; testdata left out;
# deploy/validate is another module and has none).
.PHONY: fuzz
fuzz: ## Fuzz every target for FUZZTIME each (default 10s; FUZZ=regexp picks targets; make test: 3000 executions each)
	@set -o pipefail; targets=$$(go list -f '{{$$p := .ImportPath}}{{$$d := .Dir}}{{range .TestGoFiles}}{{$$p}} {{$$d}}/{{.}}{{"\n"}}{{end}}{{range .XTestGoFiles}}{{$$p}} {{$$d}}/{{.}}{{"\n"}}{{end}}' ./... | \
	  while read -r pkg file; do \
	    sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\([A-Za-z_][A-Za-z0-9_]* \*testing\.F\).*/\1/p' "$$file" | sed "s|^|$$pkg |"; \
	  done | awk -v re='$(FUZZ)' '$$2 ~ re') || exit 1; \
	[ -n "$$targets" ] || { echo "no fuzz target matches FUZZ='$(FUZZ)'" >&2; exit 1; }; \
	n=$$(wc -l <<< "$$targets"); start=$$SECONDS; \
	echo "fuzzing $$n targets for $(FUZZTIME) each"; \
	while read -r pkg target; do \
	  echo "== $$pkg $$target"; \
	  go test $(RE2_TAGS) -run '^$$' -fuzz "^$$target\$$" -fuzztime $(FUZZTIME) $$pkg || { echo "FAIL: $$pkg $$target (the failing input is under that package's testdata/fuzz/$$target)" >&2; exit 1; }; \
	done <<< "$$targets"; \
	echo "fuzzed $$n targets for $(FUZZTIME) each in $$((SECONDS - start)) s"

.PHONY: test-readme
test-readme: ## Run every sh block of README.md and clients/python/README.md (as make test does)
	go test -count=1 -v -run '^TestREADME$$' .

.PHONY: test-languages
test-languages: ## Run the tests of the languages beyond the default four (install them: CODE_EXEC_LANGUAGES=all make deps)
	go test $(GO_TEST_FLAGS) -run '^(TestMoreLanguages|TestHostileMoreLanguages|TestRunners|TestHostileRunners)$$' -v ./scorers/codeexec/sandbox/
	go test $(GO_TEST_FLAGS) -run '^(TestRunCodeLanguages|TestRunCodeRunners|TestSandboxFusionRunnerTests)$$' -v ./cmd/rewardd/

.PHONY: test-cp
test-cp: ## Run code_exec and POST /run_code on all of ../shared/data/cp_problems.jsonl: 460 accepted and 124 wrong solutions; /run_code at verl's settings on it and HumanEval
	REWARDD_CP_FULL=1 go test $(GO_TEST_FLAGS) -timeout 1h -run '^TestCPProblems$$' -v ./scorers/codeexec/
	REWARDD_CP_FULL=1 go test $(GO_TEST_FLAGS) -timeout 1h -run '^TestRunCode$$/^AgreesWithIO$$' -v ./cmd/rewardd/
	REWARDD_CP_FULL=1 go test $(GO_TEST_FLAGS) -timeout 1h -run '^TestRunCodeVerlSettings$$' -v ./cmd/rewardd/

.PHONY: bench
bench: ## Run the Go benchmarks
	go test $(RE2_TAGS) -run '^$$' -bench . -benchmem ./...

.PHONY: clean
clean: ## Remove build outputs
	rm -rf bin .bin

# --- Python client (clients/python) -------------------------------------------
# Messages come from protoc (Debian's protobuf-compiler, 3.21: the builder-style
# code that protobuf >= 3.20 runtimes, upb included, accept; grpc_tools' bundled
# protoc is 3.5 and emits descriptor code protobuf 4's upb backend refuses), the
# gRPC stubs from grpc_tools. Imports are made package-relative so that
# rewardd_client.proto needs no sys.path entry.
PYTHON    := /usr/bin/python3
PY_PROTO  := clients/python/rewardd_client/proto
PY_GEN     = protoc -I proto --python_out=$(1) --pyi_out=$(1) reward/v1/reward.proto && \
  $(PYTHON) -m grpc_tools.protoc -I proto --grpc_python_out=$(1) reward/v1/reward.proto && \
  sed -i -e 's/^from reward\.v1 import reward_pb2 as /from . import reward_pb2 as /' $(1)/reward/v1/reward_pb2_grpc.py && \
  sed -i -e "s/'reward\.v1\.reward_pb2'/'rewardd_client.proto.reward_pb2'/" $(1)/reward/v1/reward_pb2.py

.PHONY: generate-python
generate-python: ## Regenerate the Python client's stubs from proto/
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	$(call PY_GEN,$$tmp) && \
	cp $$tmp/reward/v1/reward_pb2.py $$tmp/reward/v1/reward_pb2.pyi $$tmp/reward/v1/reward_pb2_grpc.py $(PY_PROTO)/ && \
	echo "regenerated $(PY_PROTO)"

.PHONY: checkgenerate-python
checkgenerate-python: ## Fail if the Python client's committed stubs differ from what `make generate-python` makes
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	$(call PY_GEN,$$tmp) && \
	for f in reward_pb2.py reward_pb2.pyi reward_pb2_grpc.py; do \
	  diff -u $(PY_PROTO)/$$f $$tmp/reward/v1/$$f || { echo "$(PY_PROTO)/$$f is stale: run 'make generate-python' and commit" >&2; exit 1; }; \
	done && echo "generated Python code is up to date"

.PHONY: test-python
test-python: build ## Run the Python client's tests against a real bin/rewardd
	REWARDD_BIN=$(CURDIR)/bin/rewardd PYTHONPATH=$(CURDIR)/clients/python PYTHONDONTWRITEBYTECODE=1 \
	  $(PYTHON) -m unittest discover -s clients/python/tests -v

# --- deploy/ (issue 7) ----------------------------------------------------------
# deploy/validate is its own Go module (the Kubernetes, kustomize and PromQL
# libraries stay out of the service's go.mod): the manifests decoded strictly
# into k8s.io/api types, as written and as kustomize renders them, their wiring
# to cmd/rewardd/serve.go, and the Grafana dashboard against server/metrics.go.
# Then deploy/Dockerfile's build steps, run here as the script the Dockerfile
# RUNs (no Docker engine needed): the static RE2 binary and the health check
# it ships, checked by serving on loopback, and the code-exec image's packages.
.PHONY: check-deploy
check-deploy: ## Validate deploy/ offline: manifests, kustomize build, dashboard vs server/metrics.go
	cd deploy/validate && go vet ./... && go test -count=1 ./...
	deploy/build-image-steps.sh check
