# rewardd — `make` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Pinned code generators: checkgenerate proves the committed code is what
# these versions make of the .proto files.
PROTOC_GEN_GO_VERSION      := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.0
BUF_VERSION                := v1.75.0
# grpcurl is what the README's example uses; the CLI tests run it.
GRPCURL_VERSION            := v1.9.4

BIN := $(CURDIR)/.bin
export PATH := $(BIN):/usr/local/go/bin:$(PATH)
export GOBIN := $(BIN)

PROTOS := $(shell find proto -name '*.proto')
GO_TEST_FLAGS ?= -race -count=1
FUZZTIME ?= 10s

.PHONY: help
help: ## Describe the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build bin/rewardd
	go build -o bin/rewardd ./cmd/rewardd

.PHONY: run
run: build ## Run the service on the embedded default config
	./bin/rewardd serve

.PHONY: deps
deps: ## Install what the tests need (Debian packages when run as root, pinned Go tools)
	@if ! command -v protoc >/dev/null || ! command -v curl >/dev/null || ! /usr/bin/python3 -c 'import grpc, google.protobuf, numpy' 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	      protobuf-compiler curl python3-grpcio python3-protobuf python3-grpc-tools python3-numpy >/dev/null; \
	  else \
	    echo "missing: protoc, curl and/or python3-grpcio python3-protobuf python3-grpc-tools python3-numpy; install them with apt-get as root" >&2; exit 1; \
	  fi; \
	fi
	@$(MAKE) --no-print-directory tools $(BIN)/grpcurl-$(GRPCURL_VERSION)

.PHONY: tools
tools: $(BIN)/protoc-gen-go-$(PROTOC_GEN_GO_VERSION) $(BIN)/protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION) ## Install the pinned code generators into .bin

$(BIN)/protoc-gen-go-$(PROTOC_GEN_GO_VERSION):
	go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	@touch $@

$(BIN)/protoc-gen-go-grpc-$(PROTOC_GEN_GO_GRPC_VERSION):
	go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	@touch $@

$(BIN)/grpcurl-$(GRPCURL_VERSION):
	go install github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION)
	@touch $@

.PHONY: generate
generate: tools ## Regenerate the Go code from proto/
	protoc -I proto --go_out=proto --go_opt=paths=source_relative \
	  --go-grpc_out=proto --go-grpc_opt=paths=source_relative $(PROTOS:proto/%=%)

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
test: deps checkgenerate ## Run every test (race detector on), as CI does
	go vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$out" ] || { echo "gofmt needed:"; echo "$$out"; exit 1; }
	go test $(GO_TEST_FLAGS) ./...

.PHONY: bench
bench: ## Run the Go benchmarks
	go test -run '^$$' -bench . -benchmem ./...

.PHONY: clean
clean: ## Remove build outputs
	rm -rf bin .bin
