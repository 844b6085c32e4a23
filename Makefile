# Oficina. `make help` lists the targets.
SHELL := /usr/bin/env bash
GO ?= go
PKGS ?= ./...
TEST_TIMEOUT ?= 8m

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "} {printf "  make %-10s %s\n", $$1, $$2}'

.PHONY: pg
pg: ## start the local PostgreSQL cluster when nothing answers on 127.0.0.1:5432
	@ops/scripts/pg-up.sh

.PHONY: run
run: pg ## run everything in one process (embedded NATS, migrations, demo data, printed API key)
	$(GO) run ./cmd/oficina dev --seed

.PHONY: test
test: pg ## run every test (real PostgreSQL, embedded JetStream, real HTTP)
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) $(PKGS)

.PHONY: test-race
test-race: pg ## every test under the race detector
	$(GO) test -race -count=1 -timeout 20m $(PKGS)

.PHONY: bench
bench: pg ## run the benchmark scenarios and print their figures
	$(GO) run ./cmd/oficina bench

.PHONY: fuzz
fuzz: pg ## run every fuzz target for FUZZTIME each (default 10s)
	@ops/scripts/fuzz.sh

.PHONY: lint
lint: ## gofmt, go vet, and generated files up to date
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

.PHONY: generate
generate: ## regenerate error constants and docs/errors.md from the catalogue, and the OpenAPI document
	$(GO) generate ./...
	$(MAKE) openapi

.PHONY: openapi
openapi: ## write docs/openapi.json from the routes
	$(GO) run ./cmd/oficina openapi > docs/openapi.json
